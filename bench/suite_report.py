#!/usr/bin/env python3
"""Markdown tables (and plots) for docs/benchmarks.md from the benchmark
suite's outputs (bench/suite.sh): DIR/MODEL.csv, one row per run as
bench/measure.py writes it, DIR/calib-MODEL.json, the link bandwidths
measured in the same run (or DIR/calib-MODEL-BUILD.json for one build's
rows), and DIR/floors-MODEL.jsonl where there is one, the capacity floors
of the plans run. Nothing is computed that the files do not say.

Usage: python3 bench/suite_report.py DIR [--docs FILE] [--img IMGDIR]
  --docs FILE    put the markdown between the lines "<!-- suite:begin -->"
                 and "<!-- suite:end -->" of FILE instead of on stdout
  --img IMGDIR   also write suite-throughput.png, suite-faults.png and
                 suite-traffic.png into IMGDIR; the markdown links them as
                 img/NAME.png (relative to docs/)

Rows are grouped per model and build (the CSV's build column); times,
faults and traffic are medians over the repetitions that succeeded
(rc 0); a cell whose every repetition failed reads "failed (rc N)", one with
no row "not run". Bad input (DIR missing, no CSV in it, a CSV whose header
is not measure.py's, a bad value) is one line on stderr and exit status 2."""
import argparse
import csv
import glob
import json
import os
import statistics
import sys
from dataclasses import dataclass

sys.dont_write_bytecode = True   # importing measure.py leaves no __pycache__ in the checkout
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from measure import COLUMNS  # noqa: E402
from capacity_floor import bad_field, floor_ms, least_ms, not_whole, whole  # noqa: E402

ROOMY = 0.8          # the grid's plan run with a budget of 1.25 W
POLICIES = ["plain", "ideal", "ondemand", "deepum", "plan-migrate", "plan"]
TOOLS = ["ondemand", "deepum", "plan"]   # the policies that run under a budget
# warmup: a command's first replays, run to be left out (bench/suite.sh).
EXPERIMENTS = ["grid", "maxbatch", "overhead", "overhead-cached", "overhead-noplan", "warmup"]
# The overhead part's variants, each adding one thing to the one before:
# (experiment, ratio, policy, what the column shows).
OVERHEAD_VARIANTS = [("overhead", 0, "plain", "plain"),
                     ("overhead-cached", 0, "ideal", "injected, cache kept"),
                     ("overhead-noplan", 0, "ideal", "+ every tensor in the arena"),
                     ("overhead", 0, "ideal", "+ plan matching (ideal)"),
                     ("overhead", ROOMY, "plan", "plan, B = 1.25 W")]
FIXED = 1.25         # maxbatch's budget is W / 1.25 of the default batch
REACHED_PCT = 50     # a batch is reached at >= this % of ideal's throughput
NUMBERS = ["ratio", "budget_bytes", "w_bytes", "step_ms", "faults_per_iter",
           "htod_mb_per_iter", "dtoh_mb_per_iter", "modelled_peak_mb", "same_output",
           "steady_callback_ms"]
INTEGERS = ["batch", "rc"]
# CSVs written before the busy-time columns end at steady_lost; they are
# read with those columns empty.
OLDEST_COLUMNS = COLUMNS.index("steady_lost") + 1
BEGIN, END = "<!-- suite:begin -->", "<!-- suite:end -->"
PLOTS = ["suite-throughput.png", "suite-faults.png", "suite-traffic.png"]


class BadInput(Exception):
    """A problem with the input, as one line naming the file."""


# ---------------------------------------------------------------- reading

def parse_row(row, where):
    """Converts one CSV row's numeric fields (empty: None) and checks its names."""
    for k in NUMBERS + INTEGERS:
        v = row[k]
        try:
            row[k] = None if v == "" else (int(v) if k in INTEGERS else float(v))
        except ValueError:
            raise BadInput(f"{where}: {k} is not a number: {v!r}") from None
    for k, allowed in (("experiment", EXPERIMENTS), ("policy", POLICIES)):
        if row[k] not in allowed:
            raise BadInput(f"{where}: unknown {k} {row[k]!r} (one of {', '.join(allowed)})")
    if row["rc"] is None or row["ratio"] is None or row["batch"] is None:
        raise BadInput(f"{where}: rc, ratio and batch must not be empty")
    return row


def read_csv(path):
    """The rows of one MODEL.csv as dicts with numbers parsed."""
    try:
        with open(path, newline="") as f:
            lines = list(csv.reader(f))
    except (UnicodeDecodeError, csv.Error) as e:
        raise BadInput(f"{path}: not a CSV file: {e}") from None
    header = lines[0] if lines else []
    if len(header) < OLDEST_COLUMNS or header != COLUMNS[:len(header)]:
        raise BadInput(f"{path}: header is not bench/measure.py's COLUMNS "
                       f"(wanted {','.join(COLUMNS[:4])},...)")
    rows = []
    for n, values in enumerate(lines[1:], 2):
        if len(values) != len(header):
            raise BadInput(f"{path}: line {n}: {len(values)} fields, wanted {len(header)}")
        row = dict.fromkeys(COLUMNS, "")
        row.update(zip(header, values))
        rows.append(parse_row(row, f"{path}: line {n}"))
    return rows


def read_calib(path):
    """The HtoD and DtoH bandwidths (GB/s) of calib-MODEL.json."""
    try:
        with open(path) as f:
            calib = json.load(f)
    except OSError as e:
        raise BadInput(f"{path}: {e.strerror} (bench/suite.sh writes it next to the CSV)") from None
    except ValueError as e:
        raise BadInput(f"{path}: not JSON: {e}") from None
    for k in ("htod_gbps", "dtoh_gbps"):
        v = calib.get(k) if isinstance(calib, dict) else None
        if not isinstance(v, (int, float)) or v <= 0:
            raise BadInput(f"{path}: {k} is not a positive number")
    return calib


def read_suite(d):
    """{"MODEL (BUILD)": (rows, calib)} for every MODEL.csv in d and every
    build in it, sorted by model, builds in the order of their first row.
    Each build's rows are summarised apart: a policy's time is compared
    with the ideal runs of the same build only, and its lower bound uses
    calib-MODEL-BUILD.json where there is one (the build's own command's
    calibration), else calib-MODEL.json."""
    if not os.path.isdir(d):
        raise BadInput(f"{d}: no such directory")
    paths = sorted(glob.glob(os.path.join(d, "*.csv")))
    if not paths:
        raise BadInput(f"{d}: no MODEL.csv files (bench/suite.sh writes them)")
    suite = {}
    for p in paths:
        model = os.path.basename(p)[:-len(".csv")]
        rows = read_csv(p)
        for build in dict.fromkeys(r["build"] for r in rows):
            calib = os.path.join(d, f"calib-{model}-{build}.json")
            if not os.path.exists(calib):
                calib = os.path.join(d, f"calib-{model}.json")
            suite[f"{model} ({build})"] = ([r for r in rows if r["build"] == build], read_calib(calib))
    return suite


def read_floors(d):
    """{(model, batch, budget bytes, policy): capacity floor} from every
    floors-MODEL.jsonl in d (bench/suite.sh: a line per plan made, the
    floor umplan --json gave it); a later line for the same plan wins."""
    floors = {}
    for path in sorted(glob.glob(os.path.join(d, "floors-*.jsonl"))):
        model = os.path.basename(path)[len("floors-"):-len(".jsonl")]
        try:
            with open(path) as f:
                lines = f.readlines()
        except UnicodeDecodeError as e:
            raise BadInput(f"{path}: not text: {e}") from None
        for n, line in enumerate(lines, 1):
            try:
                x = json.loads(line)
            except ValueError as e:
                raise BadInput(f"{path}: line {n}: not JSON: {e}") from None
            if not isinstance(x, dict):
                raise BadInput(f"{path}: line {n}: not a JSON object")
            if x.get("policy") not in POLICIES:
                raise BadInput(f"{path}: line {n}: policy is missing or not a policy")
            bad = next((not_whole(k) for k in ("batch", "budget_bytes") if not whole(x.get(k))), None) or bad_field(x)
            if bad:
                raise BadInput(f"{path}: line {n}: {bad}")
            floors[(model, x["batch"], x["budget_bytes"], x["policy"])] = x
    return floors


# ---------------------------------------------------------------- summaries

@dataclass
class Cell:
    """The repetitions of one (model, experiment, batch or ratio, policy)."""
    runs: int            # rows
    good: int            # rows that succeeded
    failed: list         # why the others did not: "rc 124", ...
    ms: float = None     # iteration time: median, min, max
    lo: float = None
    hi: float = None
    faults: float = None
    htod: float = None
    dtoh: float = None
    peak: float = None   # modelled peak MB
    budget: float = None  # bytes; 0: none
    callback: float = None  # ms in the launch callbacks in a steady iteration
    batch: int = None
    differ: int = 0      # succeeded reps whose outputs differ from the plain run's
    compared: int = 0    # succeeded reps with a same_output value


def succeeded(row):
    return row["rc"] == 0 and row["step_ms"] is not None


def median(rows, key):
    values = [r[key] for r in rows if r[key] is not None]
    return statistics.median(values) if values else None


def summarise(rows):
    """One Cell from the rows of its repetitions."""
    good = [r for r in rows if succeeded(r)]
    times = [r["step_ms"] for r in good]
    same = [r["same_output"] for r in good if r["same_output"] is not None]
    return Cell(runs=len(rows), good=len(good),
                failed=sorted({f"rc {r['rc']}" if r["rc"] else "no step time"
                               for r in rows if not succeeded(r)}),
                ms=median(good, "step_ms"), lo=min(times, default=None), hi=max(times, default=None),
                faults=median(good, "faults_per_iter"), htod=median(good, "htod_mb_per_iter"),
                dtoh=median(good, "dtoh_mb_per_iter"), peak=median(good, "modelled_peak_mb"),
                callback=median(good, "steady_callback_ms"),
                budget=rows[0]["budget_bytes"], batch=rows[0]["batch"], differ=sum(1 for s in same if s != 1),
                compared=len(same))


def cells(rows, experiment, key):
    """{(row[key], policy): Cell} over the rows of one experiment."""
    groups = {}
    for r in rows:
        if r["experiment"] == experiment:
            groups.setdefault((r[key], r["policy"]), []).append(r)
    return {k: summarise(v) for k, v in groups.items()}


def pct(ideal, c):
    """Throughput as % of ideal's, or None when either time is missing."""
    if ideal is None or c is None or ideal.ms is None or c.ms is None:
        return None
    return 100 * ideal.ms / c.ms


def lower_bound(c, ideal, calib):
    """max(ideal ms, DtoH MB / DtoH GB/s, HtoD MB / HtoD GB/s): MB / (GB/s) = ms."""
    if c.htod is None or c.dtoh is None or ideal is None or ideal.ms is None:
        return None
    return max(ideal.ms, c.dtoh / calib["dtoh_gbps"], c.htod / calib["htod_gbps"])


# ---------------------------------------------------------------- formatting

def num(x, digits=1):
    return "–" if x is None else f"{x:.{digits}f}"


def ratio_text(r):
    return {0: "–", ROOMY: "0.8 (B = 1.25 W)"}.get(r, f"{r:g}")


def time_text(c):
    """Median (min–max), or why there is none."""
    if c is None:
        return "not run"
    if c.ms is None:
        return f"failed ({', '.join(c.failed)})"
    return f"{c.ms:.1f}" if c.good == 1 else f"{c.ms:.1f} ({c.lo:.1f}–{c.hi:.1f})"


def reps_text(c):
    if c is None:
        return "0/0"
    return f"{c.good}/{c.runs}" + (f" ({', '.join(c.failed)})" if c.failed else "")


def same_text(c):
    if c is None or not c.compared:
        return "–"
    return "yes" if not c.differ else f"NO ({c.differ} of {c.compared})"


def peak_text(c):
    budget = "none" if not c.budget else f"{c.budget / 1e6:.0f}"
    return f"{num(c.peak, 0)} / {budget}"


def table(header, rows):
    """A markdown table; columns after the first three are right-aligned."""
    align = ["---" if i < 3 else "---:" for i in range(len(header))]
    return "\n".join("| " + " | ".join(map(str, r)) + " |" for r in [header, align] + rows)


def overhead(c, plain):
    if c is None or plain is None or c.ms is None or plain.ms is None:
        return "–"
    return f"{100 * (c.ms / plain.ms - 1):+.1f} %"


# ---------------------------------------------------------------- sections

def header_line(model, rows, calib):
    grid = [r for r in rows if r["experiment"] == "grid"] or rows
    dates = sorted({r["date"] for r in rows})
    gpus = sorted({r["gpu"] for r in rows})
    batches = sorted({r["batch"] for r in grid})
    ws = sorted({r["w_bytes"] for r in grid if r["w_bytes"] is not None})
    return (f"- **{model}**: {', '.join(dates)}; {', '.join(gpus)}; batch "
            f"{', '.join(map(str, batches))}; W = {', '.join(f'{w / 1e9:.2f}' for w in ws) or '–'} GB; "
            f"calibrated HtoD {calib['htod_gbps']:g} GB/s, DtoH {calib['dtoh_gbps']:g} GB/s")


def has_base(grid):
    return (0, "plain") in grid or (ROOMY, "plan") in grid


def grid_keys(grid):
    """Every (ratio, policy) a build's grid should have, in order: ideal, the
    base part's runs if it ran, every policy at each W/B it ran."""
    want = {(0, "ideal")} | ({(0, "plain"), (ROOMY, "plan")} if has_base(grid) else set())
    want |= {(r, p) for r, _ in grid if r not in (0, ROOMY) for p in TOOLS} | set(grid)
    return sorted(want, key=lambda k: (k[0], POLICIES.index(k[1])))


def grid_table(suite, floors):
    out = []
    for model, (rows, calib) in suite.items():
        grid = cells(rows, "grid", "ratio")
        if not grid:
            continue
        ideal = grid.get((0, "ideal"))
        for ratio, policy in grid_keys(grid):
            c = grid.get((ratio, policy))
            head = [model, ratio_text(ratio), policy, time_text(c), reps_text(c)]
            if c is None or c.ms is None:
                out.append(head + ["–"] * 12)
                continue
            kept = floors.get((rows[0]["model"], c.batch, int(c.budget or 0), policy))
            floor = floor_ms(kept, calib["dtoh_gbps"]) if kept else None
            bound = lower_bound(c, ideal, calib)
            least = least_ms(ideal.ms, floor, c.dtoh, c.htod, calib) if bound else None
            ondemand = grid.get((ratio, "ondemand"))
            of_od = (100 * c.faults / ondemand.faults if policy == "plan" and ondemand
                     and ondemand.faults and c.faults is not None else None)
            out.append(head + [num(pct(ideal, c)), num(c.faults, 0), num(c.htod, 0), num(c.dtoh, 0),
                               num(bound), num(c.ms / bound if bound else None, 2), peak_text(c),
                               same_text(c), num(of_od, 2), num(floor),
                               num(c.ms / floor if floor else None, 2),
                               num(least / bound if bound else None, 2)])
    return table(["model", "W/B", "policy", "iteration ms: median (min–max)", "reps ok",
                  "% of ideal", "faults / iter", "HtoD MB / iter", "DtoH MB / iter",
                  "lower bound ms", "x bound", "modelled peak / budget MB", "outputs identical",
                  "faults % of ondemand", "floor ms", "x floor", "least x bound"], out)


def roomy_table(suite):
    out = []
    for model, (rows, _) in suite.items():
        grid = cells(rows, "grid", "ratio")
        if not has_base(grid):
            continue
        plain, ideal, plan = grid.get((0, "plain")), grid.get((0, "ideal")), grid.get((ROOMY, "plan"))
        out.append([model, time_text(plain), time_text(ideal), overhead(ideal, plain),
                    time_text(plan), overhead(plan, plain)])
    return table(["model", "plain ms", "ideal ms", "ideal vs plain", "plan, B = 1.25 W, ms",
                  "plan vs plain"], out)


def overhead_split_table(suite):
    """The overhead part: each variant's time, its overhead against plain
    and the launch callbacks' ms per steady iteration."""
    out = []
    for model, (rows, _) in suite.items():
        by_exp = {exp: cells(rows, exp, "ratio") for exp in {v[0] for v in OVERHEAD_VARIANTS}}
        found = {(exp, ratio, policy): by_exp[exp].get((ratio, policy))
                 for exp, ratio, policy, _ in OVERHEAD_VARIANTS}
        if not any(found.values()):
            continue
        plain = found["overhead", 0, "plain"]
        line = [model]
        for key in found:
            c = found[key]
            text = time_text(c)
            if key[2] != "plain" and c is not None and c.ms is not None:
                # Without a plan no iteration is found, so no steady one.
                steady = num(c.callback, 2) if key[0] == "overhead" else "–"
                text += f", {overhead(c, plain)}, {steady}"
            line.append(text)
        out.append(line)
    if not out:
        return "No overhead runs."
    return table(["model"] + [v[3] for v in OVERHEAD_VARIANTS], out)


def batch_points(rows):
    """[(batch, W/B, {policy: Cell}, from grid)]: the default batch's grid
    cells at W/B 1.25 if the build ran them, then each maxbatch batch."""
    grid = cells(rows, "grid", "ratio")
    points = []
    gbatch = [r["batch"] for r in rows if r["experiment"] == "grid"]
    if gbatch and any(r == FIXED for r, _ in grid):
        points.append((gbatch[0], FIXED, {"ideal": grid.get((0, "ideal")),
                                          "ondemand": grid.get((FIXED, "ondemand")),
                                          "plan": grid.get((FIXED, "plan"))}, True))
    mb = cells(rows, "maxbatch", "batch")
    for batch in sorted({b for b, _ in mb}):
        ratio = next((r["ratio"] for r in rows if r["experiment"] == "maxbatch"
                      and r["batch"] == batch and r["ratio"]), None)
        points.append((batch, ratio, {p: mb.get((batch, p)) for p in ("ideal", "ondemand", "plan")},
                       False))
    return points


def maxbatch_tables(suite):
    per_batch, reached = [], []
    for model, (rows, _) in suite.items():
        points = batch_points(rows)
        if not any(not from_grid for *_, from_grid in points):
            continue
        best = {"ondemand": [], "plan": []}
        for batch, ratio, c, from_grid in points:
            row = [model, f"{batch} (grid)" if from_grid else batch, num(ratio, 2), time_text(c["ideal"])]
            for p in best:
                share = pct(c["ideal"], c[p])
                row += [time_text(c[p]), num(share)]
                if share is not None and share >= REACHED_PCT:
                    best[p].append(batch)
            per_batch.append(row)
        reached.append([model] + [max(b, default="none") for b in best.values()])
    if not per_batch:
        return "No maxbatch runs."
    return (table(["model", "batch", "W/B", "ideal ms", "ondemand ms", "ondemand % of ideal",
                   "plan ms", "plan % of ideal"], per_batch)
            + "\n\nLargest batch reached under the fixed budget:\n\n"
            + table(["model", "ondemand", "plan"], reached))


def markdown(suite, floors, img):
    """The whole report."""
    parts = ["Generated by `python3 bench/suite_report.py DIR` from bench/suite.sh's outputs.",
             "\n".join(header_line(m, rows, calib) for m, (rows, calib) in suite.items()),
             "### Iteration time by policy and W/B (grid)",
             "Each model's rows are grouped by the build (commit) that made them, and a "
             "policy is compared with the ideal runs of its own build, made in the same GPU "
             "command. Medians over the repetitions that succeeded (rc 0); reps ok = succeeded / run, "
             "with the exit status of the others. % of ideal = ideal median / policy median "
             "x 100. lower bound = max(ideal median, DtoH MB / DtoH GB/s, HtoD MB / HtoD GB/s) "
             "with the policy's own median traffic and the model's calibrated bandwidths. "
             "outputs identical: every loss line and the checksum equal the plain run's in "
             "every repetition that succeeded; NO (k of n): k of n differ. The plan row at "
             "W/B 0.8 ran with a budget of 1.25 W. floor: the plan's capacity floor (umplan "
             "--report, docs/planner.md), the least time any order of its migrations can take "
             "under the budget: the recorded kernels' time plus the evictions of its worst "
             "window, or of its disjoint windows together (umplan since session 88), that "
             "those kernels cannot cover, at the calibrated DtoH bandwidth; for "
             "plan and plan-migrate, where bench/suite.sh kept it. least x bound: the least "
             "step the policy's own traffic allows in any order, max(ideal median, floor, "
             "DtoH MB / DtoH GB/s + HtoD MB / HtoD GB/s: the driver migrates one way at a "
             "time), over the lower bound; above 1.15, no order of that traffic comes within "
             "15 % of the bound.",
             grid_table(suite, floors),
             "### Replay when memory suffices",
             "The program alone (plain), under umreplay's ideal policy (no budget) and under "
             "the plan policy with a budget of 1.25 W; overhead against plain. These are "
             "separate runs, which on a shared host drift apart by more than a few per cent; "
             "bench/overhead_lockstep.sh measures the plan's overhead with the runs taking "
             "their steps in turn (\"Replay's overhead measured in turn\").",
             roomy_table(suite),
             "### Where the overhead goes when memory suffices (overhead)",
             "The overhead part (bench/suite.sh), at the default batch with more steps, "
             "each variant adding one thing to the one before: the program injected under "
             "umreplay --policy ideal without a plan and with PyTorch's caching allocator "
             "kept (the program's command unsets PYTORCH_NO_CUDA_MEMORY_CACHING; the rows "
             "of builds up to e8a1e16 set it to 0 instead, with which PyTorch 2.11 keeps its "
             "cache on too: only 1 turns it off, session 42, bench/results/2026-11-26/s42/); "
             "then every tensor through umkit's "
             "arena (the cache off, as umreplay sets it); then the plan's matching (ideal "
             "with the plan); then the plan policy with a budget of 1.25 W. Each cell: "
             "median ms (min–max), overhead against plain, ms per steady iteration in the "
             "launch callbacks (none without a plan: no iteration is found). A build "
             "run beside another (COMPARE) has no plain runs of its own.",
             overhead_split_table(suite),
             "### Largest batch under a fixed budget (maxbatch)",
             f"The budget is fixed at W / {FIXED} of the default batch; the batch is doubled "
             "and tripled, each run once under ideal (no budget), ondemand and plan. A model's "
             f"first row is the grid's default batch at W/B {FIXED} where the same build ran it. A batch is "
             f"reached by a policy when it gets at least {REACHED_PCT} % of ideal's throughput "
             "at that batch (policy ms at most twice ideal ms); a batch whose ideal run failed "
             "counts as not reached.",
             maxbatch_tables(suite)]
    if img:
        parts += ["### Plots",
                  "![Throughput normalised to ideal per policy, min–max over the repetitions]"
                  "(img/suite-throughput.png)",
                  "![Faults per iteration per policy (log scale)](img/suite-faults.png)",
                  "![HtoD and DtoH MB per iteration per policy](img/suite-traffic.png)"]
    return "\n\n".join(parts) + "\n"


# ---------------------------------------------------------------- plots

def plot_groups(suite):
    """[(label, grid cells, ratio)] for every budgeted grid ratio of every model."""
    groups = []
    for model, (rows, _) in suite.items():
        grid = cells(rows, "grid", "ratio")
        for ratio in sorted({r for r, p in grid if r}):
            label = model.replace(" (", "\n(")   # the build on a line of its own
            groups.append((f"{label}\n{ratio:g}", grid, ratio))
    return groups


def bars(ax, labels, series, ylabel):
    """Grouped bars: series maps a name to one (value, low, high) or None per group."""
    width = 0.8 / len(series)
    for i, (name, values) in enumerate(series.items()):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(labels))]
        ys = [v[0] if v else float("nan") for v in values]
        err = [[v[0] - v[1] if v else 0 for v in values], [v[2] - v[0] if v else 0 for v in values]]
        ax.bar(xs, ys, width, yerr=err if any(map(any, err)) else None, capsize=2, label=name)
    ax.set_xticks(range(len(labels)), labels, fontsize=7)
    ax.set_xlim(-0.5, len(labels) - 0.5)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1, 1))


def plot(suite, img):
    """Writes the three PNGs into img."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise BadInput("--img needs matplotlib (python3-matplotlib, scripts/install-deps.sh)") from None
    os.makedirs(img, exist_ok=True)
    groups = plot_groups(suite)
    labels = [g[0] for g in groups]
    width = max(6, 0.75 * len(groups) + 2)

    def series(value):
        return {p: [value(grid.get((r, p)), grid.get((0, "ideal"))) for _, grid, r in groups]
                for p in TOOLS}

    def norm(c, ideal):
        if pct(ideal, c) is None:
            return None
        return (ideal.ms / c.ms, ideal.ms / c.hi, ideal.ms / c.lo)

    def one(key):
        return lambda c, ideal: None if c is None or getattr(c, key) is None else (getattr(c, key),) * 3

    fig, ax = plt.subplots(figsize=(width, 4))
    bars(ax, labels, series(norm), "throughput as a fraction of ideal's")
    ax.axhline(1, color="grey", linewidth=0.8)
    ax.set_ylim(0, max(1.1, ax.get_ylim()[1]))
    ax.set_xlabel("model, W/B")
    fig.tight_layout()
    fig.savefig(os.path.join(img, PLOTS[0]), dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(width, 4))
    bars(ax, labels, series(one("faults")), "faults / iteration")
    ax.set_yscale("symlog", linthresh=1)   # log above 1; 0 stays drawable
    ax.set_xlabel("model, W/B")
    fig.tight_layout()
    fig.savefig(os.path.join(img, PLOTS[1]), dpi=120)
    plt.close(fig)

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(width, 6), sharex=True)
    bars(top, labels, series(one("htod")), "HtoD MB / iteration")
    bars(bottom, labels, series(one("dtoh")), "DtoH MB / iteration")
    bottom.set_xlabel("model, W/B")
    fig.tight_layout()
    fig.savefig(os.path.join(img, PLOTS[2]), dpi=120)
    plt.close(fig)


# ---------------------------------------------------------------- output

def write_docs(path, text):
    """Replaces the lines between BEGIN and END in path with text."""
    try:
        with open(path) as f:
            lines = f.read().splitlines(keepends=True)
    except OSError as e:
        raise BadInput(f"{path}: {e.strerror}") from None
    marks = [line.strip() for line in lines]
    if BEGIN not in marks or END not in marks[marks.index(BEGIN):]:
        raise BadInput(f"{path}: no '{BEGIN}' line followed by a '{END}' line")
    begin = marks.index(BEGIN)
    end = marks.index(END, begin)
    with open(path, "w") as f:
        f.writelines(lines[:begin + 1] + [text] + lines[end:])


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir")
    p.add_argument("--docs", metavar="FILE")
    p.add_argument("--img", metavar="IMGDIR")
    a = p.parse_args(argv)
    try:
        suite = read_suite(a.dir)
        text = markdown(suite, read_floors(a.dir), a.img)
        if a.img:
            plot(suite, a.img)
        if a.docs:
            write_docs(a.docs, text)
        else:
            sys.stdout.write(text)
    except (BadInput, OSError) as e:
        print(f"suite_report.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
