#!/usr/bin/env python3
"""Measure what Unified Memory operations cost on this GPU, for the
questions the replayer's design depends on (h100-facts.md, "Open
questions"): is eviction faster split over streams, threads or a batch
call; which driver calls wait while another thread is inside an eviction;
what do discards cost; can data leave the GPU and come back more cheaply
than by eviction and prefetch. Prints one JSON object (times in ms, rates in GB/s).

Usage: python3 tests/gpu/um_costs.py [GIB] [PART,...]   (GIB default 1;
never more than a quarter of the GPU's free memory; PARTs: the keys of the
output to measure, default all)"""
import ctypes
import json
import sys
import threading
import time

from cudrv import (ADVISE_SET_ACCESSED_BY, ADVISE_SET_PREFERRED_LOCATION, ADVISE_SET_READ_MOSTLY,
                   ADVISE_UNSET_ACCESSED_BY, ADVISE_UNSET_PREFERRED_LOCATION, ADVISE_UNSET_READ_MOSTLY, MB2, Gpu,
                   blocks, timed)

PARTS = 4
BATCH_RANGES = (1, 16, 128)
BATCH_REPS = 3
COMPUTE_MS = 60  # overlap: the bumps' time alone, about an eviction of the moved half
# The replayer's largest call each way (replay/cuda/rp_exec.c).
EVICT_CALL_BYTES = 64 << 20
PREFETCH_CALL_BYTES = 192 << 20


def sync_ms(gpu, fn):
    """ms of fn() and a synchronisation of the GPU after it."""
    return ms(timed(lambda: (fn(), gpu.sync())))


def gbps(nbytes, seconds):
    return round(nbytes / seconds / 1e9, 2)


def ms(seconds):
    return round(seconds * 1e3, 3)


def spread(times):
    """How many calls, and their median and longest host times (ms)."""
    times = sorted(times)
    return {"n": len(times), "median_ms": ms(times[len(times) // 2]), "max_ms": ms(times[-1])}


def eviction(gpu, ptr, size, streams):
    """GB/s of evicting [ptr, ptr + size) several ways, each from the GPU."""
    part = size // PARTS
    out = {}

    def run(name, issue):
        gpu.prefetch(ptr, size, True, streams[0])
        gpu.sync()
        out[name] = gbps(size, timed(lambda: (issue(), gpu.sync())))

    run("one_call", lambda: gpu.prefetch(ptr, size, False, streams[0]))
    run("batch_2mb_ranges", lambda: gpu.prefetch_batch(blocks(ptr, size), False, streams[0]))
    run(f"{PARTS}_streams_one_thread",
        lambda: [gpu.prefetch(ptr + i * part, part, False, streams[i]) for i in range(PARTS)])

    def threaded():
        def one(i):
            gpu.bind()
            gpu.prefetch(ptr + i * part, part, False, streams[i])
            gpu.sync(streams[i])
        ts = [threading.Thread(target=one, args=(i,)) for i in range(PARTS)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    run(f"{PARTS}_streams_{PARTS}_threads", threaded)
    return out


def concurrent(gpu, ptr, size, streams):
    """Host ms of calls the main thread makes while another thread is inside
    a long eviction call (eviction calls return only when the copy is done),
    next to the same call made alone: which calls wait for it?"""
    small = 64 << 20
    head, tail = ptr, ptr + size - small  # the eviction covers [head, tail)
    ev, mark = gpu.stream(), gpu.event()
    calls = {
        "kernel_launch": lambda: gpu.touch(tail, small, streams[1]),
        "event_record": lambda: gpu.record(mark, streams[1]),
        "mem_get_info": gpu.mem_info,
        "discard": lambda: gpu.discard_batch([(tail, small)], streams[1]),
        "discard_prefetch": lambda: gpu.discard_prefetch_batch([(tail, small)], streams[1]),
        "prefetch_htod": lambda: gpu.prefetch(tail, small, True, streams[2]),
    }
    out = {"evict_ms": 0.0}
    for name, call in calls.items():
        gpu.prefetch(ptr, size, True, streams[0])
        gpu.sync()
        if name == "prefetch_htod":
            gpu.prefetch(tail, small, False, streams[0])
            gpu.sync()
        alone = timed(call)
        gpu.sync()
        if name == "prefetch_htod":
            gpu.prefetch(tail, small, False, streams[0])
            gpu.sync()

        def evict():
            gpu.bind()
            out["evict_ms"] = ms(timed(lambda: gpu.prefetch(head, size - small, False, ev)))
        t = threading.Thread(target=evict)
        t.start()
        time.sleep(0.01)
        during = timed(call)
        t.join()
        gpu.sync()
        out[name] = {"alone": ms(alone), "during_eviction": ms(during)}
    return out


def queued(gpu, ptr, streams):
    """An eviction call whose stream waits for 100 ms of unfinished GPU work:
    how long the call takes, and whether another thread's event record waits
    with it."""
    small = 64 << 20
    gpu.prefetch(ptr, small, True, streams[0])
    gpu.sync()
    work, mig, other = streams[1], streams[2], streams[3]
    mark, probe = gpu.event(), gpu.event()
    gpu.spin(0.1, work)
    gpu.record(mark, work)
    gpu.wait(mig, mark)
    out = {}

    def evict():
        gpu.bind()
        out["evict_call"] = ms(timed(lambda: gpu.prefetch(ptr, small, False, mig)))
    t = threading.Thread(target=evict)
    t.start()
    time.sleep(0.01)
    out["event_record_meanwhile"] = ms(timed(lambda: gpu.record(probe, other)))
    t.join()
    gpu.sync()
    return out


def deferred(gpu, ptr, size, streams):
    """Evictions and prefetches queued on a stream that is not idle (the
    call returns at once; the driver moves the data later): do the main
    thread's calls wait while the driver copies? The stream waits either
    for 100 ms of GPU work or for a word the host sets right after the call
    (a gate, as the replayer's worker could use). Meanwhile the main thread
    records an event and launches a small kernel, or discards and
    discard-and-prefetches a small range, every 0.2 ms until the copy is
    done; their host times are split by whether the copy was under way."""
    small = 64 << 20
    spare = gpu.managed(small)
    work, mig, other = streams[1], streams[2], streams[3]
    mark, probe_ev = gpu.event(), gpu.event()
    gate_host, gate_dev = gpu.gate()
    word = ctypes.c_uint32.from_address(gate_host)
    probes = {
        "launch": lambda: (gpu.record(probe_ev, other), gpu.touch(spare, small, other)),
        "discard": lambda: (gpu.discard_batch([(spare, small)], other),
                            gpu.discard_prefetch_batch([(spare, small)], other)),
    }
    out = {}
    for gate in ("gpu_work", "host_gate"):
        for probe, act in probes.items():
            for name, to_gpu in (("evict", False), ("prefetch", True)):
                gpu.prefetch(ptr, size, not to_gpu, streams[0])
                gpu.sync()
                t0 = time.perf_counter()
                if gate == "gpu_work":
                    gpu.spin(0.1, work)
                    gpu.record(mark, work)
                    gpu.wait(mig, mark)
                else:
                    gpu.wait_value(mig, gate_dev, word.value + 1)
                call = timed(lambda: gpu.prefetch(ptr, size, to_gpu, mig))
                if gate == "host_gate":
                    word.value += 1
                waits, began, done = {"before": [], "during": []}, None, None
                while done is None:
                    took = timed(act)
                    now = time.perf_counter() - t0
                    if began is None and (gate == "host_gate" or gpu.idle(work)):
                        began = now
                    if gpu.idle(mig):
                        done = now
                    waits["before" if began is None else "during"].append(took)
                    time.sleep(0.0002)
                gpu.sync()
                row = {"call_ms": ms(call), "copy_done_ms": ms(done),
                       "copy_gbps": gbps(size, done - began) if done > began else None}
                for phase, ts in waits.items():
                    if ts:
                        row[phase] = spread(ts)
                out[f"{name}_{gate}_{probe}"] = row
    gpu.free(spare)
    return out


def dependent(gpu, ptr, size, streams):
    """An eviction deferred behind a gate, and an event recorded after it
    on the same stream. Does a stream made to wait for that event take
    longer to accept the host's calls while the copy is pending? Every 0.2
    ms until the copy is done the main thread records an event on a stream
    that waits for the eviction and on one that does not (the replayer's
    markers on the program's stream, which waits for its discards and
    prefetches), and launches a small kernel on the independent one."""
    small = 64 << 20
    spare = gpu.managed(small)
    mig, waiting, free_stream = streams[1], streams[2], streams[3]
    after, ev_waiting, ev_free = gpu.event(), gpu.event(), gpu.event()
    gate_host, gate_dev = gpu.gate()
    word = ctypes.c_uint32.from_address(gate_host)
    probes = {"record_on_waiting": lambda: gpu.record(ev_waiting, waiting),
              "record_on_free": lambda: gpu.record(ev_free, free_stream),
              "launch_on_free": lambda: gpu.touch(spare, small, free_stream)}
    out = {}
    for rep in range(2):
        gpu.prefetch(ptr, size, True, streams[0])
        gpu.sync()
        t0 = time.perf_counter()
        gpu.wait_value(mig, gate_dev, word.value + 1)
        gpu.prefetch(ptr, size, False, mig)
        gpu.record(after, mig)
        gpu.wait(waiting, after)
        word.value += 1
        took = {k: [] for k in probes}
        while not gpu.idle(mig):
            for k, act in probes.items():
                took[k].append(timed(act))
            time.sleep(0.0002)
        row = {"copy_done_ms": ms(time.perf_counter() - t0)}
        gpu.sync()
        for k, ts in took.items():
            if ts:
                row[k] = dict(spread(ts), total_ms=ms(sum(ts)))
        out[f"rep{rep}"] = row
    gpu.free(spare)
    return out


def chunked(gpu, ptr, size, streams):
    """Eviction in chunks of several sizes by one thread while the main
    thread records an event every 0.2 ms: the eviction's GB/s and how long
    the records waited (median and worst)."""
    out = {}
    probe = gpu.event()
    for mb in (4, 16, 64, 256):
        chunk = mb << 20
        gpu.prefetch(ptr, size, True, streams[0])
        gpu.sync()
        done = threading.Event()
        took = {}

        def evict():
            gpu.bind()
            took["s"] = timed(lambda: [gpu.prefetch(ptr + o, min(chunk, size - o), False, streams[0])
                                       for o in range(0, size, chunk)])
            done.set()
        t = threading.Thread(target=evict)
        t.start()
        waits = []
        while not done.is_set():
            waits.append(timed(lambda: gpu.record(probe, streams[1])))
            time.sleep(0.0002)
        t.join()
        gpu.sync()
        waits.sort()
        out[f"{mb}mb"] = {"gbps": gbps(size, took["s"]), "record_median_ms": ms(waits[len(waits) // 2]),
                          "record_max_ms": ms(waits[-1]), "records": len(waits)}
    return out


def discards(gpu, ptr, size, s):
    """ms of discard operations on [ptr, ptr + size)."""
    out = {}

    def resident():
        gpu.prefetch(ptr, size, True, s)
        gpu.sync()

    resident()
    out["discard_one_range"] = sync_ms(gpu, lambda: gpu.discard_batch([(ptr, size)], s))
    resident()
    out["discard_2mb_ranges"] = sync_ms(gpu, lambda: gpu.discard_batch(blocks(ptr, size), s))
    out["discard_prefetch_after_discard"] = sync_ms(gpu, lambda: gpu.discard_prefetch_batch([(ptr, size)], s))
    out["touch_after_discard_prefetch"] = sync_ms(gpu, lambda: gpu.touch(ptr, size, s))
    out["touch_resident"] = sync_ms(gpu, lambda: gpu.touch(ptr, size, s))
    # A plain prefetch may populate a discarded range the way a
    # discard-and-prefetch does; unlike that, it destroys nothing, so the
    # replayer's worker could issue it off the program's launch path.
    gpu.discard_batch([(ptr, size)], s)
    gpu.sync()
    out["prefetch_after_discard"] = sync_ms(gpu, lambda: gpu.prefetch(ptr, size, True, s))
    out["touch_after_prefetch_after_discard"] = sync_ms(gpu, lambda: gpu.touch(ptr, size, s))
    gpu.discard_batch([(ptr, size)], s)
    gpu.sync()
    out["touch_after_discard"] = sync_ms(gpu, lambda: gpu.touch(ptr, size, s))
    gpu.discard_batch([(ptr, size)], s)
    gpu.sync()
    out["evict_after_discard"] = sync_ms(gpu, lambda: gpu.prefetch(ptr, size, False, s))
    resident()
    out["prefetch_resident_noop"] = sync_ms(gpu, lambda: gpu.prefetch(ptr, size, True, s))
    return out


def batch_costs(gpu, ptr, size, s):
    """ms of moving n ranges of equal size in one batch call, issued and
    synchronised, against the same ranges in a call each: to the GPU and to
    the host, for ranges of 64 KiB and 2 MB. Each range starts a 2 MB block
    of its own and the block after it is left out, so no two can be merged
    into one. Before each timing every range is on the other side. The
    medians of BATCH_REPS. The simulator and the scheduler charge a call's
    fixed cost per op (umplan --constants call_cost_us), the replayer makes
    one batch call per launch and kind: this says what a range in a batch
    costs."""
    out = {}
    for to_gpu in (True, False):
        side = out["to_gpu" if to_gpu else "to_host"] = {}
        for range_bytes, label in ((64 << 10, "64k"), (MB2, "2m")):
            row = side[label] = {}
            for n in BATCH_RANGES:
                if 2 * n * MB2 > size:
                    continue
                ranges = [(ptr + 2 * i * MB2, range_bytes) for i in range(n)]

                def timed_move(issue):
                    times = []
                    for _ in range(BATCH_REPS):
                        gpu.prefetch(ptr, size, not to_gpu, s)
                        gpu.sync()
                        times.append(timed(lambda: (issue(), gpu.sync())))
                    return ms(sorted(times)[len(times) // 2])

                row[str(n)] = timed_move(lambda: gpu.prefetch_batch(ranges, to_gpu, s))
                if n > 1:
                    row[f"{n}_calls"] = timed_move(lambda: [gpu.prefetch(p, b, to_gpu, s) for p, b in ranges])
    return out


def round_trips(gpu, size, s):
    """ms of the ways data can leave the GPU and come back, each call
    synchronised, on a fresh allocation of size bytes written on the GPU:

    - eviction the first time (no host pages yet) and again, then prefetch;
    - the same with the range's preferred location set to the host;
    - a swap through pinned host memory: copy out and discard, then
      discard-and-prefetch and copy in (and whether the data survived);
    - not moving it at all: the range prefers the host and is mapped for
      the GPU, and a kernel reads and writes all of it there, twice (a
      second pass as fast as on resident data would mean the driver
      migrated it after all);

    next to the same kernel on resident data and on evicted data (faults)."""
    ptr = gpu.managed(size)
    host = gpu.pinned(size)
    out = {}

    out["evict_first"] = sync_ms(gpu, lambda: gpu.prefetch(ptr, size, False, s))
    out["prefetch"] = sync_ms(gpu, lambda: gpu.prefetch(ptr, size, True, s))
    out["evict_again"] = sync_ms(gpu, lambda: gpu.prefetch(ptr, size, False, s))
    gpu.prefetch(ptr, size, True, s)
    out["bump_resident"] = sync_ms(gpu, lambda: gpu.bump(ptr, size, s))
    gpu.prefetch(ptr, size, False, s)
    out["bump_faulting"] = sync_ms(gpu, lambda: gpu.bump(ptr, size, s))

    out["swap_out"] = sync_ms(gpu, lambda: (gpu.copy(host, ptr, size, s, False), gpu.discard_batch([(ptr, size)], s)))
    out["swap_in"] = sync_ms(gpu, lambda: (gpu.discard_prefetch_batch([(ptr, size)], s),
                                      gpu.copy(ptr, host, size, s, True)))
    edges = (ctypes.c_uint8 * 32)()
    gpu.copy(ctypes.addressof(edges), ptr, 16, s, False)
    gpu.copy(ctypes.addressof(edges) + 16, ptr + size - 16, 16, s, False)
    gpu.sync()
    out["swap_intact"] = (bytes(edges[:16]) == ctypes.string_at(host, 16)
                          and bytes(edges[16:]) == ctypes.string_at(host + size - 16, 16))

    gpu.advise(ptr, size, ADVISE_SET_PREFERRED_LOCATION, False)
    out["evict_preferring_host"] = sync_ms(gpu, lambda: gpu.prefetch(ptr, size, False, s))
    out["prefetch_preferring_host"] = sync_ms(gpu, lambda: gpu.prefetch(ptr, size, True, s))
    gpu.prefetch(ptr, size, False, s)
    gpu.advise(ptr, size, ADVISE_SET_ACCESSED_BY, True)
    out["bump_mapped_on_host"] = [sync_ms(gpu, lambda: gpu.bump(ptr, size, s)) for _ in range(2)]
    gpu.advise(ptr, size, ADVISE_UNSET_ACCESSED_BY, True)
    gpu.advise(ptr, size, ADVISE_UNSET_PREFERRED_LOCATION, False)
    gpu.free_pinned(host)
    gpu.free(ptr)
    return out


def until_idle(gpu, t0, watched):
    """ms from t0 until each stream of watched (name: stream) is idle,
    polled in turn; the names of one stream get one time."""
    done, left = {}, {}
    for name, s in watched.items():
        left.setdefault(id(s), (s, []))[1].append(name)
    while left:
        for key, (s, names) in list(left.items()):
            if gpu.idle(s):
                t = ms(time.perf_counter() - t0)
                done.update((name, t) for name in names)
                del left[key]
    return done


def duplex(gpu, ptr, size, streams):
    """An eviction of one half and a prefetch of the other, both released at
    once by a gate word: on one stream (the eviction first, as a FIFO of
    migrations runs them), and on two streams. Does the driver move data
    both ways at once? Each case also alone, and in the replayer's call
    sizes (64 MB evictions, 192 MB prefetches). ms from the gate's opening
    until each stream is idle, 3 interleaved repetitions."""
    half = size // 2
    out_part, in_part = (ptr, half), (ptr + half, half)
    gate_host, gate_dev = gpu.gate()
    word = ctypes.c_uint32.from_address(gate_host)

    def run(evict_on, prefetch_on, chunked):
        gpu.prefetch(out_part[0], half, True, streams[0])
        gpu.prefetch(in_part[0], half, False, streams[0])
        gpu.sync()
        used = {id(s): s for s in (evict_on, prefetch_on) if s is not None}
        for s in used.values():
            gpu.wait_value(s, gate_dev, word.value + 1)
        if evict_on is not None:
            for a, n in blocks(*out_part, EVICT_CALL_BYTES if chunked else half):
                gpu.prefetch(a, n, False, evict_on)
        if prefetch_on is not None:
            for a, n in blocks(*in_part, PREFETCH_CALL_BYTES if chunked else half):
                gpu.prefetch(a, n, True, prefetch_on)
        watched = {name: s for name, s in (("evict_done", evict_on), ("prefetch_done", prefetch_on))
                   if s is not None}
        t0 = time.perf_counter()
        word.value += 1
        row = until_idle(gpu, t0, watched)
        gpu.sync()
        return row

    cases = {"evict_alone": (streams[1], None), "prefetch_alone": (None, streams[2]),
             "one_stream": (streams[1], streams[1]), "two_streams": (streams[1], streams[2])}
    out = {"bytes_each_way": half}
    run(streams[1], streams[2], False)  # warm-up: host pages of both halves exist
    for _ in range(3):  # interleaved repetitions: a list per case
        for chunked in (False, True):
            for name, (evict_on, prefetch_on) in cases.items():
                key = name + ("_chunked" if chunked else "")
                out.setdefault(key, []).append(run(evict_on, prefetch_on, chunked))
    return out


def overlap(gpu, ptr, size, streams):
    """Does the GPU compute while the driver migrates? One half of the
    range stays on the GPU and is bumped (read and written, a memory-bound
    kernel) over and over for about COMPUTE_MS; the other half is evicted,
    or prefetched, in the replayer's call sizes (64 MB evictions, 192 MB
    prefetches) meanwhile, three ways: each alone; both released at once
    by a gate word (the calls return at once, the driver migrates later);
    and the calls made from another thread on an idle stream (each returns
    when its copy is done) while the main thread launches the bumps one by
    one, as a program launches its kernels beside the replayer's worker.
    ms from the start until each stream is idle, 3 interleaved
    repetitions. Where the two overlap, the pair ends near the longer
    alone; where the driver's migration holds the kernels back, near the
    sum."""
    half = size // 2
    work, mig = streams[1], streams[2]
    compute, moved = (ptr, half), (ptr + half, half)
    gate_host, gate_dev = gpu.gate()
    word = ctypes.c_uint32.from_address(gate_host)
    gpu.prefetch(*compute, True, streams[0])
    gpu.bump(*compute, work)
    gpu.sync()
    one = timed(lambda: (gpu.bump(*compute, work), gpu.sync(work)))
    bumps = max(1, round(COMPUTE_MS / 1e3 / one))

    def migrate(to_gpu):
        for a, n in blocks(*moved, PREFETCH_CALL_BYTES if to_gpu else EVICT_CALL_BYTES):
            gpu.prefetch(a, n, to_gpu, mig)

    def run(case, to_gpu):
        gpu.prefetch(*moved, not to_gpu, streams[0])
        gpu.sync()
        if case == "compute_alone":
            t0 = time.perf_counter()
            for _ in range(bumps):
                gpu.bump(*compute, work)
            return until_idle(gpu, t0, {"compute_done": work})
        if case == "migrate_alone":
            t0 = time.perf_counter()
            migrate(to_gpu)
            return until_idle(gpu, t0, {"migrate_done": mig})
        if case == "gated":
            for s in (work, mig):
                gpu.wait_value(s, gate_dev, word.value + 1)
            for _ in range(bumps):
                gpu.bump(*compute, work)
            migrate(to_gpu)
            t0 = time.perf_counter()
            word.value += 1
            return until_idle(gpu, t0, {"compute_done": work, "migrate_done": mig})
        # threaded: the worker's calls on an idle stream beside the launches
        def worker():
            gpu.bind()
            migrate(to_gpu)
        t = threading.Thread(target=worker)
        t0 = time.perf_counter()
        t.start()
        launches = [timed(lambda: gpu.bump(*compute, work)) for _ in range(bumps)]
        t.join()
        row = until_idle(gpu, t0, {"compute_done": work, "migrate_done": mig})
        row["launch_max_ms"] = ms(max(launches))
        return row

    out = {"bytes_each": half, "bump_ms": ms(one), "bumps": bumps}
    for to_gpu in (False, True):
        rows = out["prefetch" if to_gpu else "evict"] = {}
        run("migrate_alone", to_gpu)  # warm-up: host pages exist
        for _ in range(3):
            for case in ("compute_alone", "migrate_alone", "gated", "threaded"):
                rows.setdefault(case, []).append(run(case, to_gpu))
        gpu.sync()
    return out


def evict_states(gpu, ptr, size, streams):
    """ms of evicting half of the range, written on the GPU just before,
    after each way the replayer leaves a range: evicted before and brought
    back (the host pages exist), discarded then brought back by a
    discard-and-prefetch or by the kernel's own writes (does a discard free
    the host pages a later eviction needs?), and a fresh allocation never
    on the host. 3 interleaved repetitions."""
    half, s = size // 2, streams[0]

    def evicted_after(bring):
        gpu.prefetch(ptr, half, False, s)
        gpu.prefetch(ptr, half, True, s)
        bring()
        gpu.bump(ptr, half, s)
        gpu.sync()
        return sync_ms(gpu, lambda: gpu.prefetch(ptr, half, False, s))

    def fresh():
        p = gpu.managed(half)
        took = sync_ms(gpu, lambda: gpu.prefetch(p, half, False, s))
        gpu.free(p)
        return took

    cases = {"brought_back": lambda: evicted_after(lambda: None),
             "discard_then_discard_prefetch": lambda: evicted_after(
                 lambda: (gpu.discard_batch([(ptr, half)], s), gpu.discard_prefetch_batch([(ptr, half)], s))),
             "discard_then_written": lambda: evicted_after(lambda: gpu.discard_batch([(ptr, half)], s)),
             "fresh_allocation": fresh}
    out = {"bytes": half}
    for _ in range(3):
        for name, case in cases.items():
            out.setdefault(name, []).append(case())
    return out


def read_mostly(gpu, ptr, size, s):
    """ms of leaving the GPU without a copy. Data the GPU only reads need
    not be copied out if its host copy was kept: a range marked read-mostly
    keeps it when prefetched to the GPU, and the GPU's copy is dropped by
    preferring the host and unsetting read-mostly (the copies collapse
    there). Beside the plain prefetch, read and eviction of the same data:

    - from the host: read-mostly set there, a prefetch that duplicates, a
      kernel reading the copy, the drop in one call and in 64 MB calls
      (the replayer's size), checked by a prefetch after it (it copies
      again if the drop worked); whether preferring the host alone drops
      the GPU's copy, read-mostly kept;
    - from the GPU (data written there): read-mostly set there, a prefetch
      to the host that duplicates, the drop;
    - a GPU write to duplicated data (its first 64 MB: it is slow).

    3 interleaved repetitions; the data checked after."""
    rows, small = [], 64 << 20
    bumps_head = bumps_all = 0

    def on_host():
        gpu.prefetch(ptr, size, True, s)
        gpu.prefetch(ptr, size, False, s)
        gpu.sync()

    def advise_ms(advice, chunk=None, n=size):
        return ms(timed(lambda: [gpu.advise(a, k, advice, False) for a, k in blocks(ptr, n, chunk or n)]))

    def drop(chunk=None, n=size):
        return {"prefer_host": advise_ms(ADVISE_SET_PREFERRED_LOCATION, chunk, n),
                "unset_read_mostly": advise_ms(ADVISE_UNSET_READ_MOSTLY, chunk, n)}

    def duplicated():
        on_host()
        advise_ms(ADVISE_SET_READ_MOSTLY)
        gpu.prefetch(ptr, size, True, s)
        gpu.sync()

    def fetch_ms():  # copies only what is not on the GPU
        return sync_ms(gpu, lambda: gpu.prefetch(ptr, size, True, s))

    for _ in range(3):
        row = {}
        on_host()
        row["prefetch"] = fetch_ms()
        row["read_resident"] = sync_ms(gpu, lambda: gpu.peek(ptr, size, s))
        row["evict"] = sync_ms(gpu, lambda: gpu.prefetch(ptr, size, False, s))
        row["set_read_mostly_on_host"] = advise_ms(ADVISE_SET_READ_MOSTLY)
        row["prefetch_duplicating"] = fetch_ms()
        row["read_duplicated"] = sync_ms(gpu, lambda: gpu.peek(ptr, size, s))
        row["drop_one_call"] = drop()
        row["prefetch_after_drop"] = fetch_ms()
        advise_ms(ADVISE_UNSET_PREFERRED_LOCATION)
        duplicated()
        row["drop_64mb_calls"] = drop(small)
        row["prefetch_after_64mb_drop"] = fetch_ms()
        advise_ms(ADVISE_UNSET_PREFERRED_LOCATION)
        duplicated()
        row["prefer_host_alone"] = advise_ms(ADVISE_SET_PREFERRED_LOCATION)
        row["prefetch_after_preferring_host"] = fetch_ms()
        row["unset_preferred"] = advise_ms(ADVISE_UNSET_PREFERRED_LOCATION)
        row["prefetch_after_unsetting"] = fetch_ms()
        advise_ms(ADVISE_UNSET_READ_MOSTLY)
        fetch_ms()
        row["write_resident"] = sync_ms(gpu, lambda: gpu.bump(ptr, size, s))
        bumps_all += 1
        row["set_read_mostly_on_gpu"] = advise_ms(ADVISE_SET_READ_MOSTLY)
        row["prefetch_to_host_duplicating"] = sync_ms(gpu, lambda: gpu.prefetch(ptr, size, False, s))
        row["drop_after_host_copy"] = drop()
        row["prefetch_after_that_drop"] = fetch_ms()
        advise_ms(ADVISE_UNSET_PREFERRED_LOCATION)
        advise_ms(ADVISE_SET_READ_MOSTLY, n=small)
        gpu.prefetch(ptr, small, False, s)
        gpu.prefetch(ptr, small, True, s)
        gpu.sync()
        row["write_duplicated_64mb"] = sync_ms(gpu, lambda: gpu.bump(ptr, small, s))
        bumps_head += 1
        advise_ms(ADVISE_UNSET_READ_MOSTLY, n=small)
        rows.append(row)
    words = (ctypes.c_uint32 * 2)()
    gpu.copy(ctypes.addressof(words), ptr, 4, s, False)
    gpu.copy(ctypes.addressof(words) + 4, ptr + size - 4, 4, s, False)
    gpu.sync()
    # managed() wrote 1 in every byte; each bump added 1 to every word it covered.
    base = 0x01010101 + bumps_all
    return {"runs": rows, "data_intact": words[0] == base + bumps_head and words[1] == base}


def main():
    gib = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    size = int(gib * (1 << 30)) // (PARTS * MB2) * (PARTS * MB2)
    parts = {"evict_gbps": lambda: eviction(gpu, ptr, size, streams),
             "concurrent_ms": lambda: concurrent(gpu, ptr, size, streams),
             "queued_ms": lambda: queued(gpu, ptr, streams),
             "deferred": lambda: deferred(gpu, ptr, size, streams),
             "dependent": lambda: dependent(gpu, ptr, size, streams),
             "chunked_eviction": lambda: chunked(gpu, ptr, size, streams),
             "duplex_ms": lambda: duplex(gpu, ptr, size, streams),
             "overlap_ms": lambda: overlap(gpu, ptr, size, streams),
             "evict_states_ms": lambda: evict_states(gpu, ptr, size, streams),
             "discard_ms": lambda: discards(gpu, ptr, size, streams[0]),
             "batch_ms": lambda: batch_costs(gpu, ptr, size, streams[0]),
             "round_trip_ms": lambda: round_trips(gpu, size, streams[0]),
             "read_mostly_ms": lambda: read_mostly(gpu, ptr, size, streams[0])}
    chosen = sys.argv[2].split(",") if len(sys.argv) > 2 else list(parts)
    unknown = [p for p in chosen if p not in parts]
    if unknown:
        raise SystemExit(f"um_costs.py: unknown part {unknown[0]!r}; the parts are {', '.join(parts)}")
    gpu = Gpu()
    ptr = gpu.managed(size)
    streams = [gpu.stream() for _ in range(PARTS)]
    eviction(gpu, ptr, size, streams)  # warm-up: the host pages exist after it
    out = {"bytes": size}
    for name in chosen:
        out[name] = parts[name]()
    gpu.free(ptr)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
