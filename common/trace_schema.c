/*
 * trace_schema.c: creating and validating trace databases (see
 * trace_schema.h). The validator compares a file against a reference built
 * from the embedded DDL in an in-memory database, so the list of tables,
 * views and columns it checks can never drift from schema/trace.sql.
 */
#include "trace_schema.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "errmsg.h"

int trace_schema_create(sqlite3 *db, char *err, size_t errlen)
{
	char tail[160];
	char *msg = NULL;
	snprintf(tail, sizeof tail,
		 "PRAGMA user_version = %d;"
		 "INSERT INTO meta(key, value) VALUES ('schema_version', '%d');",
		 TRACE_SCHEMA_VERSION, TRACE_SCHEMA_VERSION);
	if (sqlite3_exec(db, "BEGIN", NULL, NULL, &msg) != SQLITE_OK ||
	    sqlite3_exec(db, trace_schema_sql, NULL, NULL, &msg) != SQLITE_OK ||
	    sqlite3_exec(db, tail, NULL, NULL, &msg) != SQLITE_OK ||
	    sqlite3_exec(db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {
		um_errmsg(err, errlen, "creating the trace schema: %s",
			msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		if (!sqlite3_get_autocommit(db))
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return 0;
}

/* One integer from a single-row query; -1 with the SQLite error code in
 * *rc on failure. */
static int query_int(sqlite3 *db, const char *sql, long long *out, int *rc)
{
	sqlite3_stmt *st = NULL;
	*rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (*rc == SQLITE_OK) {
		*rc = sqlite3_step(st);
		if (*rc == SQLITE_ROW) {
			*out = sqlite3_column_int64(st, 0);
			*rc = SQLITE_OK;
		}
	}
	sqlite3_finalize(st);
	return *rc == SQLITE_OK ? 0 : -1;
}

/* Is every column of object `obj` in ref also a column of obj in db?
 * Returns 0, or -1 with the message in err. */
static int check_columns(sqlite3 *ref, sqlite3 *db, const char *name, const char *type,
			 const char *obj, char *err, size_t errlen)
{
	static const char sql[] = "SELECT name FROM pragma_table_info(?1)";
	static const char has_sql[] =
		"SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2 COLLATE NOCASE";
	sqlite3_stmt *cols = NULL, *has = NULL;
	int result = 0;
	if (sqlite3_prepare_v2(ref, sql, -1, &cols, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, has_sql, -1, &has, NULL) != SQLITE_OK) {
		um_errmsg(err, errlen, "%s: cannot read the columns of %s: %s", name, obj,
			cols ? trace_schema_errmsg(db) : sqlite3_errmsg(ref));
		result = -1;
		goto out;
	}
	sqlite3_bind_text(cols, 1, obj, -1, SQLITE_STATIC);
	while (result == 0 && sqlite3_step(cols) == SQLITE_ROW) {
		const char *col = (const char *)sqlite3_column_text(cols, 0);
		sqlite3_reset(has);
		sqlite3_bind_text(has, 1, obj, -1, SQLITE_STATIC);
		sqlite3_bind_text(has, 2, col, -1, SQLITE_TRANSIENT);
		int rc = sqlite3_step(has);
		if (rc == SQLITE_DONE) {
			um_errmsg(err, errlen, "%s: %s %s has no column %s", name, type, obj, col);
			result = -1;
		} else if (rc != SQLITE_ROW) {
			um_errmsg(err, errlen, "%s: cannot read the columns of %s: %s", name, obj,
				trace_schema_errmsg(db));
			result = -1;
		}
	}
out:
	sqlite3_finalize(cols);
	sqlite3_finalize(has);
	return result;
}

/* The table each version added, which traces of an older version lack:
 * readers take a missing one as empty. */
static const struct {
	const char *table;
	int version;
} added_tables[] = {
	{ "graph_kernel", 2 },
	{ "write_dst", 3 },
};

static bool older_than_table(long long version, const char *type, const char *obj)
{
	for (size_t i = 0; strcmp(type, "table") == 0 && i < sizeof added_tables / sizeof *added_tables; i++)
		if (strcmp(obj, added_tables[i].table) == 0)
			return version < added_tables[i].version;
	return false;
}

int trace_schema_count(sqlite3 *db, const char *table, uint64_t *out)
{
	char sql[128];
	sqlite3_stmt *st = NULL;
	*out = 0;
	if (!trace_schema_has_table(db, table))
		return 0;
	snprintf(sql, sizeof sql, "SELECT count(*) FROM \"%s\"", table);
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		*out = (uint64_t)sqlite3_column_int64(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : -1;
}

bool trace_schema_has_table(sqlite3 *db, const char *table)
{
	sqlite3_stmt *st = NULL;
	bool found = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' "
					"AND name = ?1 COLLATE NOCASE",
					-1, &st, NULL) == SQLITE_OK &&
		     sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC) == SQLITE_OK &&
		     sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

/* Every table and view of the embedded schema, with its columns, in db
 * (of the given version). */
static int check_objects(sqlite3 *db, long long version, const char *name, char *err, size_t errlen)
{
	sqlite3 *ref = NULL;
	sqlite3_stmt *objs = NULL, *find = NULL;
	char ref_err[256];
	int result = -1;

	if (sqlite3_open_v2(":memory:", &ref, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		um_errmsg(err, errlen, "%s: cannot build the reference schema: %s", name,
			ref ? sqlite3_errmsg(ref) : "out of memory");
		goto out;
	}
	if (trace_schema_create(ref, ref_err, sizeof ref_err) != 0) {
		um_errmsg(err, errlen, "%s: cannot build the reference schema: %s", name, ref_err);
		goto out;
	}
	/* rowid order is creation order: tables come before the views over them. */
	if (sqlite3_prepare_v2(ref,
			       "SELECT type, name FROM sqlite_master "
			       "WHERE type IN ('table', 'view') ORDER BY rowid",
			       -1, &objs, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db,
			       "SELECT 1 FROM sqlite_master WHERE type = ?1 "
			       "AND name = ?2 COLLATE NOCASE",
			       -1, &find, NULL) != SQLITE_OK) {
		um_errmsg(err, errlen, "%s: cannot read the schema: %s", name,
			objs ? trace_schema_errmsg(db) : sqlite3_errmsg(ref));
		goto out;
	}
	while (sqlite3_step(objs) == SQLITE_ROW) {
		char type[8], obj[128];
		snprintf(type, sizeof type, "%s", (const char *)sqlite3_column_text(objs, 0));
		snprintf(obj, sizeof obj, "%s", (const char *)sqlite3_column_text(objs, 1));
		sqlite3_reset(find);
		sqlite3_bind_text(find, 1, type, -1, SQLITE_STATIC);
		sqlite3_bind_text(find, 2, obj, -1, SQLITE_STATIC);
		int rc = sqlite3_step(find);
		if (rc == SQLITE_DONE && older_than_table(version, type, obj))
			continue;
		if (rc == SQLITE_DONE) {
			um_errmsg(err, errlen, "%s: missing %s %s", name, type, obj);
			goto out;
		}
		if (rc != SQLITE_ROW) {
			um_errmsg(err, errlen, "%s: cannot read the schema: %s", name,
				trace_schema_errmsg(db));
			goto out;
		}
		if (check_columns(ref, db, name, type, obj, err, errlen) != 0)
			goto out;
	}
	result = 0;
out:
	sqlite3_finalize(objs);
	sqlite3_finalize(find);
	sqlite3_close(ref);
	return result;
}

/* Checks an open database against the embedded schema (trace_schema_open);
 * name is the file name used in messages. Returns 0, or -1 with "NAME:
 * problem" in err. */
static int trace_schema_validate(sqlite3 *db, const char *name, char *err, size_t errlen)
{
	long long version = 0;
	int rc;
	if (query_int(db, "PRAGMA user_version", &version, &rc) != 0) {
		if (rc == SQLITE_NOTADB)
			um_errmsg(err, errlen, "%s: not a SQLite database", name);
		else
			um_errmsg(err, errlen, "%s: cannot read: %s", name, trace_schema_errmsg(db));
		return -1;
	}
	if (version > TRACE_SCHEMA_VERSION) {
		um_errmsg(err, errlen,
			"%s: schema version %lld is newer than this umkit understands (%d)", name,
			version, TRACE_SCHEMA_VERSION);
		return -1;
	}
	if (version < 1) {
		um_errmsg(err, errlen, "%s: not a umkit trace (no schema version)", name);
		return -1;
	}
	return check_objects(db, version, name, err, errlen);
}

/* A recording killed while it closed the trace (switching it out of WAL
 * mode) leaves a hot rollback journal, which a read-only connection cannot
 * roll back. A read-write connection's first read does, as the sqlite3
 * shell's would; the trace is then as it was before that switch. Returns
 * whether it did. */
static bool roll_back_hot_journal(const char *path)
{
	sqlite3 *db = NULL;
	bool done = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK &&
		    sqlite3_busy_timeout(db, TRACE_BUSY_TIMEOUT_MS) == SQLITE_OK &&
		    sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL) == SQLITE_OK;
	sqlite3_close(db);
	return done;
}

static int open_validated(const char *path, bool may_roll_back, sqlite3 **out, char *err, size_t errlen)
{
	struct stat sb;
	sqlite3 *db = NULL;
	*out = NULL;
	/* SQLite's own message for a missing file is "unable to open database
	 * file"; errno says which of missing, unreadable or a directory. */
	if (stat(path, &sb) != 0) {
		um_errmsg(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(sb.st_mode)) {
		um_errmsg(err, errlen, "%s: %s", path, strerror(EISDIR));
		return -1;
	}
	/* A FIFO or a device would have SQLite wait, or read forever. */
	if (!S_ISREG(sb.st_mode)) {
		um_errmsg(err, errlen, "%s: not a regular file", path);
		return -1;
	}
	/* One thread uses the connection: SQLite's own locking (serialized
	 * mode) would cost a mutex pair per column read. */
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		um_errmsg(err, errlen, "%s: cannot open: %s", path,
			db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return -1;
	}
	/* A writer's lock is most often a moment's (a commit), and umrec
	 * closing the trace takes it to leave WAL mode: wait for it. */
	sqlite3_busy_timeout(db, TRACE_BUSY_TIMEOUT_MS);
	if (trace_schema_validate(db, path, err, errlen) != 0) {
		bool hot = sqlite3_extended_errcode(db) == SQLITE_READONLY_ROLLBACK;
		sqlite3_close(db);
		if (hot && may_roll_back && roll_back_hot_journal(path))
			return open_validated(path, false, out, err, errlen);
		return -1;
	}
	*out = db;
	return 0;
}

int trace_schema_open(const char *path, sqlite3 **out, char *err, size_t errlen)
{
	return open_validated(path, true, out, err, errlen);
}

/* Whether an SQLite result code (primary or extended) says another
 * connection holds the database locked. */
static bool locked_by_another(int rc)
{
	return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
}

const char *trace_schema_errmsg(sqlite3 *db)
{
	if (locked_by_another(sqlite3_extended_errcode(db)))
		return "in use by another process, which holds it locked";
	return sqlite3_errmsg(db);
}

enum trace_replace trace_schema_replaceable(const char *path)
{
	static const char sql[] =
		"SELECT count(*), count(CASE WHEN type = 'table' AND name IN ('meta', 'kernel', 'alloc') THEN 1 END) "
		"FROM sqlite_master";
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	enum trace_replace verdict = TRACE_NOT_A_TRACE;
	int rc; /* the last call's result: a failure stops there */
	/* Read-write when the file allows it, so that a hot journal is rolled
	 * back rather than making the read fail; and so that a connection
	 * using it is told apart, at once (no busy timeout), by taking the
	 * exclusive lock a writer takes to commit, and writing nothing. In WAL
	 * mode readers never wait for the writer, but in exclusive locking
	 * mode that lock cannot be had while another connection has the
	 * database open (a recording still writing it). In rollback mode
	 * BEGIN EXCLUSIVE takes it at once rather than at the first write, so
	 * that any other transaction stops it, a reader's too: a reader's
	 * shared lock does not stop the RESERVED lock of BEGIN IMMEDIATE.
	 * Refused, it leaves the PENDING lock that keeps new readers out
	 * until the close below, microseconds later. */
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) == SQLITE_OK) {
		rc = sqlite3_exec(db, "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE", NULL, NULL, NULL);
		/* A file only this user cannot write: read it all the same (a
		 * reader of it in rollback mode goes unseen, its shared lock
		 * only tried by a write lock). */
		if (rc != SQLITE_OK && rc != SQLITE_READONLY)
			goto out;
	} else {
		sqlite3_close(db);
		db = NULL;
		rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL);
		if (rc != SQLITE_OK)
			goto out;
	}
	if ((rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL)) == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int objects = sqlite3_column_int(st, 0), ours = sqlite3_column_int(st, 1);
		verdict = objects == 0 || ours == 3 ? TRACE_REPLACEABLE : TRACE_NOT_A_TRACE;
	}
out:
	/* Whichever step a lock stopped, the file may well be a trace. */
	if (locked_by_another(rc))
		verdict = TRACE_IN_USE;
	sqlite3_finalize(st);
	sqlite3_close(db); /* rolls the empty transaction back */
	return verdict;
}

int trace_schema_meta(sqlite3 *db, const char *key, char *out, size_t outlen)
{
	sqlite3_stmt *st = NULL;
	int result = -1;
	if (outlen)
		out[0] = '\0';
	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?1", -1, &st, NULL) ==
	    SQLITE_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
		int rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			const unsigned char *v = sqlite3_column_text(st, 0);
			if (outlen)
				snprintf(out, outlen, "%s", v ? (const char *)v : "");
			result = 1;
		} else if (rc == SQLITE_DONE) {
			result = 0;
		}
	}
	sqlite3_finalize(st);
	return result;
}
