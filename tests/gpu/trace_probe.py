"""What a recording keeps of a program's NVTX ranges and of its children.

Under umrec (python3 trace_probe.py): a start/end range around a kernel,
a push/pop range, a pushed range never popped; then a child process given
a copy of the environment taken at start-up (os.environ still holds
UMKIT_TRACE), which initialises CUDA too. Prints its pid; the child's
messages go to stderr. Under umreplay the child must run without the plan.

python3 trace_probe.py --check TRACE OUTPUT prints one JSON object: whether
the trace is the parent's (meta.pid), complete, and holds the three ranges
as they were (the never-popped one with no end)."""
import json
import os
import sqlite3
import subprocess
import sys


def run():
    import torch
    x = torch.ones(1024, device="cuda")
    rid = torch.cuda.nvtx.range_start("started")
    x = x * 2
    torch.cuda.nvtx.range_end(rid)
    torch.cuda.nvtx.range_push("pushed")
    x = x + 1
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.range_push("never popped")
    child = subprocess.run([sys.executable, "-c",
                            "import torch; print('child sum', float(torch.ones(8, device='cuda').sum()))"],
                           env=os.environ.copy(), capture_output=True, text=True)
    x = x - 1
    torch.cuda.synchronize()
    print("parent pid", os.getpid(), "sum", float(x.sum()))
    print(child.stdout.strip(), "exit", child.returncode)
    sys.stderr.write(child.stderr)


def check(trace, output):
    text = open(output).read().split()
    pid = text[text.index("pid") + 1] if "pid" in text else None
    db = sqlite3.connect("file:%s?mode=ro" % trace, uri=True)
    meta = dict(db.execute("SELECT key, value FROM meta"))
    ranges = {name: end for name, end in db.execute(
        "SELECT s.value, r.end_ns FROM nvtx_range r JOIN string s ON s.id = r.name_id")}
    print(json.dumps({
        "parent_owns": pid is not None and meta.get("pid") == pid,
        "status": meta.get("status"),
        "child_ran": "child sum 8.0 exit 0" in open(output).read(),
        "started_closed": ranges.get("started", 0) not in (0, None),
        "pushed_closed": ranges.get("pushed", 0) not in (0, None),
        "never_popped_open": "never popped" in ranges and ranges["never popped"] is None,
        "ranges": sorted(ranges),
    }))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--check"]:
        check(sys.argv[2], sys.argv[3])
    else:
        run()
