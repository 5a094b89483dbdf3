-- umkit trace schema, version 3 (version 2 lacks write_dst; version 1 lacks
-- graph_kernel too, and its kernel table holds captured launches and one
-- kernel of each graph launch).
--
-- One SQLite database per recorded run, written by libumrec.so and read by
-- umplan and by people with sqlite3. docs/trace-schema.md documents every
-- column with example queries. Times are nanoseconds on CUPTI's clock
-- (cuptiGetTimestamp), so CPU-side events (allocations, launches) and GPU
-- activity (kernels, migrations) share one time axis. Addresses and sizes
-- are bytes. The schema version is PRAGMA user_version and meta.schema_version;
-- a reader refuses a newer version than it knows.

-- Run metadata as key/value text: schema_version, umkit_version, status
-- ('recording' until a clean exit sets 'complete'), command, options,
-- max_managed, managed, framework_cache (1: PyTorch's caching allocator was
-- on, so a PyTorch program's alloc rows are its segments), pid, start_ns,
-- end_ns, device_name, device_memory, arena_context_id (the CUPTI context the
-- arena serves: umplan plans the kernels of its streams alone),
-- driver_version, cupti_version, um_counters, dropped_records, captured_launches
-- (kernel launches captured into CUDA graphs, not run then), device_reset_ns
-- (the program's reset destroyed the arena's memory), runtime_allocs and
-- runtime_alloc_bytes (allocations the runtime served instead of the
-- arena: not recorded), driver_allocs, driver_alloc_bytes and
-- driver_alloc_peak_bytes (device memory got through the driver past the
-- arena: not recorded), driver_managed_allocs, driver_managed_alloc_bytes
-- and driver_managed_alloc_peak_bytes (managed memory got so:
-- cuMemAllocManaged, not recorded), messages_not_kept, error (CUPTI could
-- not be set up), write_errors (set at close when some rows could not be
-- written).
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT
) WITHOUT ROWID;

-- Interned text: kernel names and NVTX messages.
CREATE TABLE string (
	id    INTEGER PRIMARY KEY,
	value TEXT NOT NULL UNIQUE
);

-- Streams seen (CUPTI stream IDs) and the context they belong to.
CREATE TABLE stream (
	id         INTEGER PRIMARY KEY,
	context_id INTEGER NOT NULL,
	created_ns INTEGER
);

-- One row per kernel the program launched. A row is written at launch (from
-- the driver-API callback) and completed when CUPTI delivers the kernel's
-- activity record (start_ns, end_ns). A kernel CUPTI reported without a
-- launch callback has seq and exec_id NULL. A launch captured into a CUDA
-- graph runs nothing then and has no row; what a graph runs is in
-- graph_kernel.
CREATE TABLE kernel (
	correlation_id INTEGER PRIMARY KEY,  -- CUPTI correlation ID, unique per process
	seq            INTEGER UNIQUE,       -- launch order, 0-based
	exec_id        INTEGER,              -- execution ID (docs/trace-schema.md)
	name_id        INTEGER NOT NULL REFERENCES string(id),
	grid_x         INTEGER NOT NULL,
	grid_y         INTEGER NOT NULL,
	grid_z         INTEGER NOT NULL,
	block_x        INTEGER NOT NULL,
	block_y        INTEGER NOT NULL,
	block_z        INTEGER NOT NULL,
	shared_mem     INTEGER NOT NULL,     -- dynamic shared memory, bytes
	stream_id      INTEGER,              -- CUPTI stream ID
	thread_id      INTEGER,              -- launching OS thread (gettid)
	launch_ns      INTEGER,              -- CPU time of the launch call
	start_ns       INTEGER,              -- GPU start, NULL until the activity arrives
	end_ns         INTEGER
);
CREATE INDEX kernel_exec ON kernel(exec_id);
CREATE INDEX kernel_start ON kernel(start_ns);
-- nvtx_kernels and per-iteration queries select kernels by launch time.
CREATE INDEX kernel_launch ON kernel(launch_ns);

-- One row per kernel a CUDA graph launch ran, from its activity record
-- alone: no launch callback shows these kernels, so they have no launch
-- order and no arguments, and umplan does not plan them. Every kernel of
-- one graph launch shares its correlation ID. New in version 2.
CREATE TABLE graph_kernel (
	correlation_id INTEGER NOT NULL,     -- of the graph launch (cuGraphLaunch)
	graph_id       INTEGER NOT NULL,     -- CUPTI's ID of the graph launched
	graph_node_id  INTEGER NOT NULL,     -- CUPTI's ID of the kernel's node
	name_id        INTEGER NOT NULL REFERENCES string(id),
	grid_x         INTEGER NOT NULL,
	grid_y         INTEGER NOT NULL,
	grid_z         INTEGER NOT NULL,
	block_x        INTEGER NOT NULL,
	block_y        INTEGER NOT NULL,
	block_z        INTEGER NOT NULL,
	shared_mem     INTEGER NOT NULL,
	stream_id      INTEGER NOT NULL,
	start_ns       INTEGER NOT NULL,
	end_ns         INTEGER NOT NULL
);
CREATE INDEX graph_kernel_start ON graph_kernel(start_ns);

-- Device allocations the program made, served from managed memory by the
-- umkit arena. id is the allocation ordinal (1, 2, ... in allocation order).
CREATE TABLE alloc (
	id           INTEGER PRIMARY KEY,
	address      INTEGER NOT NULL,
	size         INTEGER NOT NULL,      -- bytes the program asked for (pitched: pitch x rows x slices)
	reserved     INTEGER NOT NULL,      -- bytes the arena set aside (alignment)
	api          TEXT NOT NULL,         -- cudaMalloc[Async|Pitch|3D|Managed], cudaMallocFromPoolAsync
	alloc_ns     INTEGER NOT NULL,
	alloc_thread INTEGER,
	stream_id    INTEGER,               -- for stream-ordered allocations
	free_ns      INTEGER,               -- NULL: not freed (see live_at_exit)
	free_thread  INTEGER,
	live_at_exit INTEGER NOT NULL DEFAULT 0 CHECK (live_at_exit IN (0, 1))
);
CREATE INDEX alloc_address ON alloc(address);

-- Kernel arguments that point into a managed allocation. Every 8-byte word
-- of the parameter buffer is checked, so pointers inside structs count.
CREATE TABLE kernel_arg (
	correlation_id INTEGER NOT NULL REFERENCES kernel(correlation_id),
	param_offset   INTEGER NOT NULL,    -- byte offset in the parameter buffer
	alloc_id       INTEGER NOT NULL REFERENCES alloc(id),
	offset         INTEGER NOT NULL,    -- byte offset into the allocation
	PRIMARY KEY (correlation_id, param_offset)
) WITHOUT ROWID;
CREATE INDEX kernel_arg_alloc ON kernel_arg(alloc_id);

-- Unified Memory migrations (CUPTI BYTES_TRANSFER_HTOD/DTOH records; these
-- are complete). cause 'fault' is CUPTI's COHERENCE cause: a block that
-- moved because a processor touched it (an on-demand migration).
CREATE TABLE migration (
	id        INTEGER PRIMARY KEY,
	start_ns  INTEGER NOT NULL,
	end_ns    INTEGER NOT NULL,
	address   INTEGER NOT NULL,
	bytes     INTEGER NOT NULL,
	direction TEXT NOT NULL CHECK (direction IN ('htod', 'dtoh', 'dtod')),
	cause     TEXT NOT NULL CHECK (cause IN ('unknown', 'user', 'fault', 'prefetch',
	                                         'eviction', 'access_counter'))
);
CREATE INDEX migration_start ON migration(start_ns);

-- GPU page faults (CUPTI GPU_PAGE_FAULT records). A sample, not a complete
-- stream: use migration for completeness.
CREATE TABLE fault (
	id       INTEGER PRIMARY KEY,
	start_ns INTEGER NOT NULL,
	end_ns   INTEGER NOT NULL,
	address  INTEGER NOT NULL,
	access   TEXT NOT NULL CHECK (access IN ('unknown', 'read', 'write', 'atomic', 'prefetch')),
	groups   INTEGER NOT NULL               -- fault groups in the record (CUPTI value)
);
CREATE INDEX fault_start ON fault(start_ns);

-- NVTX push/pop and start/end ranges; iteration markers come from here.
CREATE TABLE nvtx_range (
	id        INTEGER PRIMARY KEY,
	name_id   INTEGER NOT NULL REFERENCES string(id),
	thread_id INTEGER,
	start_ns  INTEGER NOT NULL,
	end_ns    INTEGER                       -- NULL: never closed
);
CREATE INDEX nvtx_range_start ON nvtx_range(start_ns);

CREATE TABLE memcpy (
	id             INTEGER PRIMARY KEY,
	correlation_id INTEGER,
	kind           TEXT NOT NULL,           -- htod, dtoh, dtod, htoh, ptop, unknown
	bytes          INTEGER NOT NULL,
	stream_id      INTEGER,
	start_ns       INTEGER NOT NULL,
	end_ns         INTEGER NOT NULL
);

CREATE TABLE memset (
	id             INTEGER PRIMARY KEY,
	correlation_id INTEGER,
	bytes          INTEGER NOT NULL,
	value          INTEGER NOT NULL,
	stream_id      INTEGER,
	start_ns       INTEGER NOT NULL,
	end_ns         INTEGER NOT NULL
);

-- Where a copy or memset writes, from its driver call: the destination the
-- call named and the allocation that holds it. Keyed by the call's
-- correlation ID, as its memcpy or memset row is. A call whose destination
-- sits in a descriptor (2-D, 3-D and batched copies) has no row, nor does a
-- copy or memset node of a CUDA graph: umplan takes a write without a row
-- as one that may have written anywhere. New in version 3.
CREATE TABLE write_dst (
	correlation_id INTEGER PRIMARY KEY,
	address        INTEGER NOT NULL,     -- the destination pointer
	alloc_id       INTEGER REFERENCES alloc(id) -- NULL: in none of the arena's
) WITHOUT ROWID;

-- Views for the common questions.

-- Kernels with their names and durations, in launch order.
CREATE VIEW kernel_named AS
SELECT k.seq, k.correlation_id, k.exec_id, s.value AS name,
       k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z,
       k.shared_mem, k.stream_id, k.thread_id, k.launch_ns, k.start_ns, k.end_ns,
       k.end_ns - k.start_ns AS duration_ns
FROM kernel k JOIN string s ON s.id = k.name_id;

-- The 2 MB UM blocks each kernel touches through its arguments: one row per
-- (kernel, allocation) with the allocation's first and last block number.
CREATE VIEW kernel_access AS
SELECT DISTINCT a.correlation_id, a.alloc_id,
       al.address >> 21 AS first_block,
       (al.address + al.size - 1) >> 21 AS last_block
FROM kernel_arg a JOIN alloc al ON al.id = a.alloc_id;

-- Allocations and distinct blocks per kernel (argument-based access sets).
-- Small allocations share blocks: each span counts only its blocks past the
-- highest block of the spans before it (in block order), so a shared block
-- counts once.
CREATE VIEW kernel_blocks AS
WITH span AS (
  SELECT correlation_id, alloc_id, first_block, last_block,
         max(last_block) OVER (PARTITION BY correlation_id ORDER BY first_block, last_block
                               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS covered
  FROM kernel_access)
SELECT k.seq, k.correlation_id, s.value AS name,
       count(x.alloc_id) AS allocations,
       coalesce(sum(max(0, x.last_block - max(x.first_block, coalesce(x.covered, -1) + 1) + 1)), 0)
         AS blocks
FROM kernel k JOIN string s ON s.id = k.name_id
LEFT JOIN span x ON x.correlation_id = k.correlation_id
GROUP BY k.correlation_id;

-- Kernels launched inside each NVTX range (by launch time, from any thread).
-- A range never closed extends to the end of the recording.
CREATE VIEW nvtx_kernels AS
SELECT r.id AS range_id, s.value AS name, r.start_ns, r.end_ns,
       (SELECT count(*) FROM kernel k
         WHERE k.launch_ns >= r.start_ns
           AND k.launch_ns < coalesce(r.end_ns, 9223372036854775807)) AS kernels
FROM nvtx_range r JOIN string s ON s.id = r.name_id;

-- UM migration volume attributed to the kernel running on the GPU when the
-- migration started (time attribution; see docs/trace-schema.md for limits).
CREATE VIEW kernel_migration AS
SELECT k.seq, k.correlation_id,
       sum(CASE WHEN m.direction = 'htod' THEN m.bytes ELSE 0 END) AS htod_bytes,
       sum(CASE WHEN m.direction = 'dtoh' THEN m.bytes ELSE 0 END) AS dtoh_bytes,
       sum(CASE WHEN m.cause = 'fault' THEN m.bytes ELSE 0 END) AS fault_bytes
FROM kernel k JOIN migration m
  ON m.start_ns >= k.start_ns AND m.start_ns < k.end_ns
GROUP BY k.correlation_id;
