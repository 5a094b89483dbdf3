#!/usr/bin/env python3
"""Summarise one umreplay --stats JSON for tests/gpu/run.sh: prints one line
of key=value pairs (steady-state medians: the first iteration, which holds
the one-time work, is left out)."""
import json
import statistics
import sys


def steady(values):
    """The median without the first (all of them when two or fewer); None
    when there is none: a replay that completed no iteration measured no
    steady one, which 0 would claim."""
    vals = values[1:] if len(values) > 2 else values
    return statistics.median(vals) if vals else None


def steady_count(per, key):
    """The steady median of per-iteration key; None when one lacks it."""
    values = [i.get(key) for i in per]
    if not values or None in values:
        return None
    return steady(values)


def steady_busy(per, key):
    ns = steady_count(per, key)
    return None if ns is None else ns / 1e6


def summarise(s):
    """The steady-state figures of one parsed stats JSON, as a dict."""
    e = s["engine"]
    m = s["measured"]
    per = m["iterations"]
    out = {
        "iter_ms": steady([t / 1e6 for t in s["iteration_ns"]]),
        "iterations": e["iterations"],
        "faults_per_iter": steady([i["fault_migrations"] for i in per]),
        # The driver's speculative prefetches around those faults (older
        # stats: unknown).
        "speculative_per_iter": steady_count(per, "speculative_migrations"),
        "htod_mb_per_iter": steady([i["htod_bytes"] / 1e6 for i in per]),
        "dtoh_mb_per_iter": steady([i["dtoh_bytes"] / 1e6 for i in per]),
        "peak_mb": m["peak_residency_bytes"] / 1e6,
        "modelled_peak_mb": e["modelled_peak_bytes"] / 1e6,
        "budget_mb": m["budget_bytes"] / 1e6,
        "matched": e["matched"],
        "resynced": e["resynced"],
        "lost": e["lost"],
        "mismatch": int(e["signature_mismatch"]),
        # The replayer's own host time in the launch callbacks, and the
        # launches it could not place, in a steady iteration.
        "steady_callback_ms": steady([i["callback_ns"] / 1e6 for i in per]),
        "steady_lost": steady([i["lost"] for i in per]),
        # Blocks the engine's model expects to fault back in, and blocks
        # kernels ran ahead of their prefetch on (older stats: unknown).
        "steady_refault_blocks": steady_count(per, "refault_blocks"),
        "steady_unissued_blocks": steady_count(per, "unissued_blocks"),
        # How long the copy engines (each direction) and, with
        # --kernel-times, the kernels kept the GPU busy in a steady
        # iteration (None when not measured: older stats, or no kernel times).
        "steady_htod_busy_ms": steady_busy(per, "htod_busy_ns"),
        "steady_dtoh_busy_ms": steady_busy(per, "dtoh_busy_ns"),
        "steady_kernel_busy_ms": steady_busy(per, "kernel_busy_ns"),
    }
    # A replay idle throughout counted no traffic (docs/replay.md, "Idle"):
    # unknown, not 0.
    if m.get("traffic_counted", "whole run").startswith("none"):
        for k in ("faults_per_iter", "speculative_per_iter", "htod_mb_per_iter", "dtoh_mb_per_iter"):
            out[k] = None
    # Per iteration with the warm-up spread over them: the callbacks, and
    # the driver calls of each op kind (none without an iteration: the
    # whole run's would read as one iteration's).
    host = m["host"]
    n = e["iterations"]
    out["callback_ms_per_iter"] = host["callback_ns"] / 1e6 / n if n else None
    for kind, c in host["driver_calls"].items():
        out[f"{kind}_calls_per_iter"] = c["calls"] / n if n else None
        out[f"{kind}_host_ms_per_iter"] = c["ns"] / 1e6 / n if n else None
    return out


def main(path):
    out = summarise(json.load(open(path)))
    print(" ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}"
                   for k, v in out.items() if v is not None))


if __name__ == "__main__":
    main(sys.argv[1])
