/*
 * sql_trace.h: a trace written with SQLite, as umrec would, from the rows
 * a test spells in SQL: the schema first (trace_schema_create), then
 * rows (SQL_TRACE_META first); and one integer read back from a trace. Include after testutil.h.
 */
#ifndef UMKIT_SQL_TRACE_H
#define UMKIT_SQL_TRACE_H

#include <sqlite3.h>
#include <unistd.h>

#include "trace_schema.h"

/* The rows a synthetic trace begins with: a complete recording's meta, on
 * a 1 GiB test device. */
#define SQL_TRACE_META                                                                                      \
	"PRAGMA user_version = 1;"                                                                          \
	"INSERT OR REPLACE INTO meta VALUES ('status', 'complete'), ('device_name', 'test device'),"        \
	"  ('device_memory', '1073741824'), ('command', 'python train.py');"

static inline void write_sql_trace(const char *path, const char *rows)
{
	sqlite3 *db;
	char err[512];
	unlink(path);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	if (trace_schema_create(db, err, sizeof err))
		fail_msg("%s", err);
	if (sqlite3_exec(db, rows, NULL, NULL, NULL) != SQLITE_OK)
		fail_msg("%s", sqlite3_errmsg(db));
	sqlite3_close(db);
}

/* The first column of the first row of sql, which must have one. */
static inline long long sql_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) != SQLITE_ROW)
		fail_msg("%s: no row", sql);
	long long v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

#endif
