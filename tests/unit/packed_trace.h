/*
 * packed_trace.h: a trace of two small tensors packed into one 2 MB block,
 * for the tests of what an eviction of one does to the other (the
 * replayer and the simulator move whole blocks). Include after
 * testutil.h.
 *
 * Six iterations (NVTX ranges) of eight kernels, 1 ms apart, 0.1 ms each.
 * Allocation 1 (1 MiB, persistent) is used by kernel 0 of each iteration
 * and idle from kernel 1 to the next iteration's kernel 0; allocation 2
 * (1 MiB, persistent) by every kernel, in allocation 1's block (packed =
 * true) or in a block of its own; each iteration's 2 MiB allocation is
 * made before kernel 4, used by it and freed after it. At a 4 MiB budget
 * (3.88 MiB with the planner's 3 % headroom) kernel 4 is where the
 * capacity binds: 4 MiB live, allocation 1 idle there, so it is evicted
 * over that kernel and brought back before the next kernel 0.
 */
#ifndef UMKIT_PACKED_TRACE_H
#define UMKIT_PACKED_TRACE_H

#include <stdbool.h>
#include <stdio.h>

#include "sql_trace.h"

static inline void write_packed_trace(const char *path, bool packed)
{
	static const char rows[] =
		SQL_TRACE_META
		"INSERT INTO string VALUES (1, 'k0'), (2, 'k1'), (3, 'k2'), (4, 'k3'), (5, 'k4'), (6, 'k5'),"
		"  (7, 'k6'), (8, 'k7'), (9, 'iteration');"
		"INSERT INTO alloc(id, address, size, reserved, api, alloc_ns)"
		"  VALUES (1, 4294967296, 1048576, 1048576, 'cudaMalloc', 1000),"
		"  (2, 4294967296 + %d, 1048576, 1048576, 'cudaMalloc', 1000);"
		"WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < 47)"
		"INSERT INTO kernel(correlation_id, seq, exec_id, name_id, grid_x, grid_y, grid_z, block_x, block_y,"
		"  block_z, shared_mem, launch_ns, start_ns, end_ns)"
		"  SELECT 100 + n, n, 11 + n %% 8, 1 + n %% 8, 1, 1, 1, 32, 1, 1, 0, (n + 1) * 1000000 - 10000,"
		"  (n + 1) * 1000000, (n + 1) * 1000000 + 100000 FROM g;"
		"WITH RECURSIVE i(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM i WHERE n < 5)"
		"INSERT INTO alloc(id, address, size, reserved, api, alloc_ns, free_ns)"
		"  SELECT 3 + n, 8589934592, 2097152, 2097152, 'cudaMalloc', (8 * n + 5) * 1000000 - 20000,"
		"  (8 * n + 5) * 1000000 + 5000 FROM i;"
		"INSERT INTO kernel_arg SELECT 100 + seq, 0, 1, 0 FROM kernel WHERE seq %% 8 = 0;"
		"INSERT INTO kernel_arg SELECT 100 + seq, 8, 2, 0 FROM kernel;"
		"INSERT INTO kernel_arg SELECT 100 + seq, 16, 3 + seq / 8, 0 FROM kernel WHERE seq %% 8 = 4;"
		"WITH RECURSIVE i(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM i WHERE n < 5)"
		"INSERT INTO nvtx_range SELECT n + 1, 9, 1, (8 * n + 1) * 1000000 - 50000,"
		"  (8 * n + 9) * 1000000 - 50000 FROM i;";
	char sql[sizeof rows + 16];
	snprintf(sql, sizeof sql, rows, packed ? 1 << 20 : 4 << 20);
	write_sql_trace(path, sql);
}

#endif
