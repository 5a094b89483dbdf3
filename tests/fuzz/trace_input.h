/*
 * trace_input.h: what the trace fuzzer (tests/fuzz/fuzz_trace.c) does with
 * one input, shared with the CI test that replays its corpus
 * (tests/unit/test_fuzz_corpus.c).
 *
 * A trace is an SQLite file whose schema umplan checks, but whose rows a
 * killed recording, another tool or a person with sqlite3 may have left
 * in any state. So the input is a list of edits to the rows of a real
 * recorded trace, each 16 bytes: an op (set an integer, add to one, set
 * NULL, set a short text, delete the row), a column of a table (an index
 * into every column of every table, modulo their number), a row (its
 * place in key order, modulo the table's rows) and a 64-bit value. The
 * edited copy is planned as umplan would plan it (capacity 256 MiB). The
 * planner must refuse it with an error about the trace, or make a plan
 * that, written as umplan writes it, loads back as umreplay loads it:
 * anything else aborts (an internal error, which is what the planner calls
 * a plan that fails its own validation, included).
 */
#ifndef UMKIT_TRACE_INPUT_H
#define UMKIT_TRACE_INPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "plan.h"
#include "planfile.h"
#include "plan/planner.h"

enum trace_edit_op { EDIT_SET, EDIT_ADD, EDIT_NULL, EDIT_TEXT, EDIT_DELETE, EDIT_OPS };

/* Every column of every table of a trace (not its views), each with its
 * table's key: "rowid", or the primary key's columns of a WITHOUT ROWID
 * table, as SQL. */
struct trace_column {
	char *table, *column, *key;
};
struct trace_columns {
	size_t n;
	struct trace_column *c;
};

static void trace_input_columns_free(struct trace_columns *c)
{
	for (size_t i = 0; i < c->n; i++) {
		sqlite3_free(c->c[i].table);
		sqlite3_free(c->c[i].column);
		sqlite3_free(c->c[i].key);
	}
	free(c->c);
}

static int trace_input_column(void *arg, int ncols, char **values, char **names)
{
	struct trace_columns *c = arg;
	(void)ncols;
	(void)names;
	void *grown = realloc(c->c, (c->n + 1) * sizeof *c->c);
	if (!grown)
		return 1;
	c->c = grown;
	/* values: table, column, the key's columns in order ("" for none) */
	c->c[c->n++] = (struct trace_column){
		sqlite3_mprintf("%s", values[0]), sqlite3_mprintf("%s", values[1]),
		values[2] && *values[2] ? sqlite3_mprintf("%s", values[2]) : sqlite3_mprintf("rowid"),
	};
	return 0;
}

/* The columns of db's tables, in a fixed order; false when there are none
 * or the query failed. */
static bool trace_input_columns(sqlite3 *db, struct trace_columns *c)
{
	*c = (struct trace_columns){ 0 };
	const char *sql =
		"SELECT t.name, p.name, CASE WHEN t.wr THEN (SELECT group_concat('\"' || "
		"replace(k.name, '\"', '\"\"') || '\"', ', ') FROM (SELECT name FROM pragma_table_info(t.name) "
		"WHERE pk > 0 ORDER BY pk) k) ELSE '' END "
		"FROM pragma_table_list t, pragma_table_info(t.name) p "
		"WHERE t.schema = 'main' AND t.type = 'table' AND t.name NOT GLOB 'sqlite_*' "
		"ORDER BY t.name, p.cid";
	return sqlite3_exec(db, sql, trace_input_column, c, NULL) == SQLITE_OK && c->n > 0;
}

static uint64_t trace_input_u64(const uint8_t *p, int bytes)
{
	uint64_t v = 0;
	for (int i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void trace_input_edit(sqlite3 *db, const struct trace_column *col, const uint8_t *e)
{
	char *edit;
	switch (e[0] % EDIT_OPS) {
	case EDIT_SET:
		edit = sqlite3_mprintf("UPDATE \"%w\" SET \"%w\" = ?1", col->table, col->column);
		break;
	case EDIT_ADD:
		edit = sqlite3_mprintf("UPDATE \"%w\" SET \"%w\" = \"%w\" + ?1", col->table, col->column, col->column);
		break;
	case EDIT_NULL:
		edit = sqlite3_mprintf("UPDATE \"%w\" SET \"%w\" = NULL", col->table, col->column);
		break;
	case EDIT_TEXT:
		edit = sqlite3_mprintf("UPDATE \"%w\" SET \"%w\" = ?2", col->table, col->column);
		break;
	default:
		edit = sqlite3_mprintf("DELETE FROM \"%w\"", col->table);
		break;
	}
	/* The row: the input's row number modulo the table's rows, in key
	 * order (which no earlier edit of another column moves). */
	char *sql = sqlite3_mprintf("%s WHERE (%s) = (SELECT %s FROM \"%w\" ORDER BY %s LIMIT 1 OFFSET "
				    "?3 %% max(1, (SELECT count(*) FROM \"%w\")))",
				    edit, col->key, col->key, col->table, col->key, col->table);
	sqlite3_stmt *st;
	if (!edit || !sql || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "trace_input: cannot make an edit: %s\n", sql ? sqlite3_errmsg(db) : "out of memory");
		abort();
	}
	char text[9];
	memcpy(text, e + 8, 8);
	text[8] = 0;
	sqlite3_bind_int64(st, 1, (int64_t)trace_input_u64(e + 8, 8));
	sqlite3_bind_text(st, 2, text, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)trace_input_u64(e + 2, 2));
	sqlite3_step(st); /* a constraint may refuse the edit: then it is not made */
	sqlite3_finalize(st);
	sqlite3_free(sql);
	sqlite3_free(edit);
}

/* Whether plan, written as umplan writes it, loads back as umreplay loads
 * it. */
static bool trace_input_plan_loads(const struct plan *plan, char *err, size_t errlen)
{
	planfile_writer *w = planfile_writer_create();
	void *file = NULL;
	size_t len;
	bool loads = false;
	if (w && plan_encode(plan, w) == 0 && planfile_writer_encode(w, &file, &len) == 0) {
		struct plan *back = plan_load_mem(file, len, "the saved plan", err, errlen);
		loads = back != NULL;
		plan_destroy(back);
	} else {
		snprintf(err, errlen, "out of memory writing the plan");
	}
	free(file);
	planfile_writer_destroy(w);
	return loads;
}

/* Writes the trace image (image, image_len bytes) to path with the input's
 * edits made, plans it, and aborts unless the planner refused it with an
 * error about the trace or made a plan that loads back. Returns whether
 * it made one. */
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
		trace_input_edit(db, &c.c[data[at + 1] % c.n], data + at);
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(db);
	trace_input_columns_free(&c);

	struct planner_options o;
	planner_options_default(&o);
	o.capacity = 256ull << 20;
	struct planner *pl;
	char err[1024];
	if (planner_run(path, &o, &pl, err, sizeof err) != 0) {
		if (strstr(err, "internal error")) {
			fprintf(stderr, "trace_input: %s\n", err);
			abort();
		}
		return false;
	}
	if (!trace_input_plan_loads(pl->plan, err, sizeof err)) {
		fprintf(stderr, "trace_input: the plan made from %s does not load: %s\n", path, err);
		abort();
	}
	planner_free(pl);
	return true;
}

#endif
