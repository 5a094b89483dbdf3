/*
 * trace_input.h: what the trace fuzzer (tests/fuzz/fuzz_trace.c) does with
 * one input, shared with the CI test that replays its corpus
 * (tests/unit/test_fuzz_corpus.c).
 *
 * A trace is an SQLite file whose schema umplan checks, but whose rows a
 * recording in progress, a killed one, another tool or a person with
 * sqlite3 may have left in any state. So the input is a list of edits to
 * the rows of a real recorded trace, each 16 bytes: an op (set an integer,
 * add to one, set NULL, set a short text, delete the row), a column of a
 * table (an index into every column of every table, modulo their number),
 * a row (modulo the table's rows) and a 64-bit value. The edited copy is
 * planned as umplan would plan it (capacity 256 MiB). The planner must
 * refuse it with an error or make a plan that plan_validate accepts:
 * anything else, an invalid plan included, aborts.
 */
#ifndef UMKIT_TRACE_INPUT_H
#define UMKIT_TRACE_INPUT_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "plan.h"
#include "plan/planner.h"

enum trace_edit_op { EDIT_SET, EDIT_ADD, EDIT_NULL, EDIT_TEXT, EDIT_DELETE, EDIT_OPS };

/* Every column of every table of a trace, as "table\0column". */
struct trace_columns {
	size_t n;
	char (*name)[2][64];
};

static int trace_input_column(void *arg, int ncols, char **values, char **names)
{
	struct trace_columns *c = arg;
	(void)ncols;
	(void)names;
	void *grown = realloc(c->name, (c->n + 1) * sizeof *c->name);
	if (!grown)
		return 1;
	c->name = grown;
	snprintf(c->name[c->n][0], sizeof c->name[0][0], "%s", values[0]);
	snprintf(c->name[c->n][1], sizeof c->name[0][1], "%s", values[1]);
	c->n++;
	return 0;
}

/* The columns of db's tables (not its views), in a fixed order. */
static bool trace_input_columns(sqlite3 *db, struct trace_columns *c)
{
	c->n = 0;
	c->name = NULL;
	return sqlite3_exec(db,
			    "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p "
			    "WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' ORDER BY m.name, p.cid",
			    trace_input_column, c, NULL) == SQLITE_OK &&
	       c->n > 0;
}

static uint64_t trace_input_u64(const uint8_t *p, int bytes)
{
	uint64_t v = 0;
	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void trace_input_edit(sqlite3 *db, const struct trace_columns *c, const uint8_t *e)
{
	const char *table = c->name[e[1] % c->n][0], *column = c->name[e[1] % c->n][1];
	char edit[256], sql[640], text[9];
	switch (e[0] % EDIT_OPS) {
	case EDIT_SET:
		snprintf(edit, sizeof edit, "UPDATE \"%s\" SET \"%s\" = ?1", table, column);
		break;
	case EDIT_ADD:
		snprintf(edit, sizeof edit, "UPDATE \"%s\" SET \"%s\" = \"%s\" + ?1", table, column, column);
		break;
	case EDIT_NULL:
		snprintf(edit, sizeof edit, "UPDATE \"%s\" SET \"%s\" = NULL", table, column);
		break;
	case EDIT_TEXT:
		snprintf(edit, sizeof edit, "UPDATE \"%s\" SET \"%s\" = ?2", table, column);
		break;
	default:
		snprintf(edit, sizeof edit, "DELETE FROM \"%s\"", table);
		break;
	}
	/* The row: the input's row number modulo the table's rows. */
	snprintf(sql, sizeof sql, "%s WHERE rowid = (SELECT rowid FROM \"%s\" LIMIT 1 OFFSET "
		 "?3 %% max(1, (SELECT count(*) FROM \"%s\")))", edit, table, table);
	memcpy(text, e + 8, 8);
	text[8] = 0;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(st, 1, (int64_t)trace_input_u64(e + 8, 8));
	sqlite3_bind_text(st, 2, text, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)trace_input_u64(e + 2, 2));
	sqlite3_step(st); /* a constraint may refuse the edit: then it is not made */
	sqlite3_finalize(st);
}

/* Writes the trace image (image, n bytes) to path with the input's edits
 * made, plans it, and aborts unless the planner refused it or made a valid
 * plan. Returns whether it made one. */
static bool trace_input_run(const uint8_t *data, size_t n, const void *image, size_t image_len,
			    const char *path)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(image, 1, image_len, f) != image_len || fclose(f) != 0) {
		fprintf(stderr, "trace_input: cannot write %s\n", path);
		abort();
	}
	sqlite3 *db;
	struct trace_columns c;
	if (sqlite3_open(path, &db) != SQLITE_OK || !trace_input_columns(db, &c)) {
		fprintf(stderr, "trace_input: cannot read the columns of %s\n", path);
		abort();
	}
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	for (size_t at = 0; n - at >= 16; at += 16)
		trace_input_edit(db, &c, data + at);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(db);
	free(c.name);

	struct planner_options o;
	planner_options_default(&o);
	o.capacity = 256ull << 20;
	struct planner *pl;
	char err[1024];
	if (planner_run(path, &o, &pl, err, sizeof err) != 0)
		return false;
	if (plan_validate(pl->plan, path, err, sizeof err) != 0) {
		fprintf(stderr, "trace_input: the planner made an invalid plan: %s\n", err);
		abort();
	}
	planner_free(pl);
	return true;
}

#endif
