/*
 * alloc_path.c: what the replayer's allocation path costs a program, measured
 * outside any program.
 *
 * Usage: alloc_path TRACE PLAN BUDGET [REPS [TOUCH_KB [STRIDE]]]
 *
 * Replays TRACE's allocations and frees in the recorded order through the
 * arena (common/arena.h, over a backend that hands out address space it
 * never touches, with fences that are always complete) and an engine under
 * the plan policy with PLAN and a budget of BUDGET (a size: 5G, 5436572160), as libumreplay.so's hooks do
 * (common/cuda/um_alloc.c) under umreplay --stats (which logs every
 * allocation for the fault sources). Allocations still live at the end of a
 * repetition are freed, untimed, before the next. Between two calls it
 * touches TOUCH_KB KiB of memory STRIDE bytes apart (bench/path_args.h),
 * standing in for the program's own work.
 *
 * Prints one line: calls, the mean time per call, and the arena's part of
 * it; the rest is the engine's.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "clock.h"
#include "path_args.h"
#include "plan.h"
#include "replay/engine.h"

struct event {
	int64_t ns;
	bool is_free;
	uint64_t trace_id, size;
};

/* By time; at one time, frees first (the recorder's order). */
static int by_time(const void *a, const void *b)
{
	const struct event *x = a, *y = b;
	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	return (int)y->is_free - (int)x->is_free;
}

/* Reads TRACE's allocations and frees, sorted; *max_id: the largest id. */
static struct event *read_events(const char *path, size_t *n, uint64_t *max_id)
{
	sqlite3 *db;
	sqlite3_stmt *st = NULL;
	struct event *ev = NULL;
	size_t cap = 0;
	*n = 0;
	*max_id = 0;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT id, size, alloc_ns, free_ns FROM alloc", -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "alloc_path: %s: %s\n", path, sqlite3_errmsg(db));
		sqlite3_close(db);
		return NULL;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (*n + 2 > cap) {
			cap = cap ? 2 * cap : 4096;
			struct event *p = realloc(ev, cap * sizeof *p);
			if (!p) {
				free(ev);
				ev = NULL;
				break;
			}
			ev = p;
		}
		uint64_t id = (uint64_t)sqlite3_column_int64(st, 0), size = (uint64_t)sqlite3_column_int64(st, 1);
		ev[(*n)++] = (struct event){ sqlite3_column_int64(st, 2), false, id, size };
		if (sqlite3_column_type(st, 3) != SQLITE_NULL)
			ev[(*n)++] = (struct event){ sqlite3_column_int64(st, 3), true, id, size };
		if (id > *max_id)
			*max_id = id;
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	if (!ev || !*n) {
		fprintf(stderr, "alloc_path: %s: no allocations\n", path);
		free(ev);
		return NULL;
	}
	qsort(ev, *n, sizeof *ev, by_time);
	return ev;
}

/* The backend: address space only, fences always complete. */
static uint64_t next_base = (uint64_t)1 << 40;
static int map(void *ctx, uint64_t bytes, uint64_t *base)
{
	*base = next_base;
	next_base += bytes + ARENA_BLOCK_SIZE;
	return 0;
}
static bool unmap(void *ctx, uint64_t base, uint64_t bytes) { return true; }
static uint64_t fence_token;
static uint64_t fence_record(void *ctx) { return ++fence_token; }
static bool fence_done(void *ctx, uint64_t token) { return true; }
static bool fence_wait(void *ctx, uint64_t token) { return true; }

/* The executor: ops are dropped (an idle engine issues none). */
static void issue(void *ctx, enum engine_op op, const struct engine_range *r, size_t n, uint64_t wait,
		  uint64_t ticket, uint64_t room) {}
static uint64_t marks;
static uint64_t mark(void *ctx) { return ++marks; }
static uint64_t now(void *ctx) { return um_now_ns(); }

int main(int argc, char **argv)
{
	struct path_args args;
	int status = path_args_parse("alloc_path", argc, argv, &args);
	if (status)
		return status;
	size_t n;
	uint64_t max_id;
	struct event *ev = read_events(args.trace, &n, &max_id);
	char err[256];
	struct plan *plan = ev ? plan_load(args.plan, err, sizeof err) : NULL;
	if (ev && !plan)
		fprintf(stderr, "alloc_path: %s\n", err);
	struct engine_executor x = { .issue = issue, .mark = mark, .now = now };
	struct engine_config cfg = { ENGINE_PLAN, args.budget, plan, .fault_sources = true };
	engine *e = plan ? engine_create(&cfg, &x, err, sizeof err) : NULL;
	if (plan && !e)
		fprintf(stderr, "alloc_path: %s\n", err);
	struct arena_backend backend = { .map = map, .unmap = unmap, .fence_record = fence_record,
					 .fence_done = fence_done, .fence_wait = fence_wait };
	arena *a = arena_create(NULL, &backend);
	uint64_t *address = calloc(max_id + 1, sizeof *address);
	if (!e || !a || !address) {
		if (e)
			fprintf(stderr, "alloc_path: out of memory\n");
		return 1;
	}
	bool idle = !engine_follows_launches(e);

	uint64_t calls = 0, total_ns = 0, arena_ns = 0;
	for (int rep = 0; rep < args.reps; rep++) {
		for (size_t i = 0; i < n; i++) {
			struct arena_alloc al;
			path_args_cool(&args);
			uint64_t t0 = um_now_ns();
			if (!ev[i].is_free) {
				if (arena_alloc(a, ev[i].size, &al) != ARENA_OK) {
					fprintf(stderr, "alloc_path: the arena refused allocation %llu\n",
						(unsigned long long)ev[i].trace_id);
					return 1;
				}
				arena_ns += um_now_ns() - t0;
				engine_on_alloc(e, al.id, al.address, al.size);
				address[ev[i].trace_id] = al.address;
			} else {
				if (arena_free(a, address[ev[i].trace_id], &al) != ARENA_OK) {
					fprintf(stderr, "alloc_path: %s frees allocation %llu, never made\n", args.trace,
						(unsigned long long)ev[i].trace_id);
					return 1;
				}
				arena_ns += um_now_ns() - t0;
				engine_on_free(e, al.id);
				address[ev[i].trace_id] = 0;
			}
			total_ns += um_now_ns() - t0;
			calls++;
		}
		struct arena_alloc al;
		for (uint64_t id = 0; id <= max_id; id++)
			if (address[id] && arena_free(a, address[id], &al) == ARENA_OK) {
				engine_on_free(e, al.id);
				address[id] = 0;
			}
	}
	printf("calls %llu  ns per call %.0f  arena %.0f  engine %s\n", (unsigned long long)calls,
	       (double)total_ns / (double)calls, (double)arena_ns / (double)calls,
	       idle && !engine_follows_launches(e) ? "idle" : "following launches");
	engine_destroy(e);
	arena_destroy(a);
	plan_destroy(plan);
	free(address);
	path_args_free(&args);
	free(ev);
	return 0;
}
