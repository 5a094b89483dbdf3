#!/usr/bin/env bash
# Command-line tests for bench/suite_report.py and bench/measure.py: the
# numbers the report computes from a small synthetic suite, failed and
# missing cells, --docs replacing only the
# text between its markers, --img writing three PNGs, and exit status 2 with
# the file named for a missing directory, one without CSVs, a bad header and
# a floors file that is not bench/suite.sh's; the plans' capacity floors;
# a CSV from before the busy-time columns read alike;
# measure.py's steady medians from a --stats file; bench/report.py's
# tables with the plans' floors and the least step their traffic allows,
# and its errors for DIR or a file missing or malformed.
# The suite: models alpha (batch 4, W = 2 GB, HtoD 40 GB/s, DtoH 10 GB/s) and
# beta (batch 16, W = 1 GB), the grid at W/B 1.25 and 2 with 3 repetitions
# (alpha's plain rows written by bench/measure.py itself), one repetition cut
# off (rc 124), one cell failed in every repetition, one never run, and
# alpha's maxbatch runs at batches 8 and 12, its overhead part and two
# warm-up replays (left out); a second build of beta with its own ideal and
# one cell.
source "$(dirname "$0")/lib.sh"
ROOT=$(realpath "$(dirname "$0")/../..")
REPORT=$ROOT/bench/suite_report.py
MEASURE=$ROOT/bench/measure.py
export PYTHONDONTWRITEBYTECODE=1   # leave no __pycache__ in the checkout
# The plots need matplotlib (python3-matplotlib): use a python3 that has it.
PY=python3
$PY -c 'import matplotlib' 2>/dev/null || { /usr/bin/python3 -c 'import matplotlib' 2>/dev/null && PY=/usr/bin/python3; }

suite=$SCRATCH/suite
mkdir -p "$suite"
echo '{"htod_gbps": 40, "dtoh_gbps": 10, "call_cost_us": 5}' >"$suite/calib-alpha.json"
echo '{"htod_gbps": 20, "dtoh_gbps": 5}' >"$suite/calib-beta.json"
echo '{"htod_gbps": 10, "dtoh_gbps": 1}' >"$suite/calib-beta-b2.json"

# reps MODEL EXPERIMENT BATCH W RATIO POLICY "TIMES" [FAULTS HTOD DTOH PEAK CALLBACK]:
# appends one row per entry of TIMES to MODEL.csv: "30" a repetition of 30 ms,
# "30/0" one whose outputs differ from the plain run's, "rc124" one that
# failed. The budget is W / RATIO (0: none). The busy-time and the block
# columns are empty; OLD_CSV=1 leaves them out, as CSVs written before them
# did.
reps() {
	local model=$1 exp=$2 batch=$3 w=$4 ratio=$5 policy=$6 rep=0 t budget build=${BUILD_ID:-b1} tail=,,,,,
	[ "${OLD_CSV:-0}" = 1 ] && tail=
	budget=$(awk -v w="$w" -v r="$ratio" 'BEGIN { printf "%d", (r > 0 ? w / r : 0) }')
	for t in $7; do
		rep=$((rep + 1))
		local common="2026-01-02,Test GPU,$build,$model,$exp,$batch,$w,$ratio,$budget,$policy,$rep"
		case $t in
		rc*) echo "$common,${t#rc},0,,,,,,,,,,,,,$tail" ;;
		*/*) echo "$common,0,${t#*/},${t%/*},${8:-},${9:-},${10:-},,${11:-},,,,,,${12:-},$tail" ;;
		*) echo "$common,0,1,$t,${8:-},${9:-},${10:-},,${11:-},,,,,,${12:-},$tail" ;;
		esac
	done >>"$suite/$model.csv"
}

# alpha's plain rows through bench/measure.py (it writes the header too).
for rep in 1 2 3; do
	printf 'per_step_ms 500,%s\nstep 1 loss 2.5\nchecksum 42\n' $((8 + rep)) >"$SCRATCH/plain$rep.out"
	python3 "$MEASURE" "$suite/alpha.csv" --out "$SCRATCH/plain$rep.out" --ref "$SCRATCH/plain1.out" \
		date=2026-01-02 gpu="Test GPU" build=b1 model=alpha experiment=grid batch=4 w_bytes=2000000000 \
		ratio=0 budget_bytes=0 policy=plain rep=$rep
done
W=2000000000
reps alpha grid 4 $W 0 ideal "20 21 25" 0 0 0 1000
reps alpha grid 4 $W 0.8 plan "22 23 24" 0 50 0 1900
reps alpha grid 4 $W 1.25 ondemand "60 70 80" 1100 800 400 1590
reps alpha grid 4 $W 1.25 deepum "50 50 50" 900 700 300 1590
reps alpha grid 4 $W 1.25 plan "30 28/0 35" 11 400 100 1590
reps alpha grid 4 $W 2 ondemand "100 120 rc124" 2000 1600 800 990
reps alpha grid 4 $W 2 deepum "90 90 90" 1800 1500 700 990
reps alpha grid 4 $W 2 plan "42 42 42" 40 900 500 990
# the command's warm-up replays (bench/suite.sh), slow, which no table uses
reps alpha warmup 4 $W 2 plan "500 600" 90 900 500 990
reps alpha maxbatch 8 4000000000 0 ideal "40" 0 0 0 3900
reps alpha maxbatch 8 4000000000 2.5 ondemand "100" 3000 2000 1000 1590
reps alpha maxbatch 8 4000000000 2.5 plan "70" 50 900 400 1590
reps alpha maxbatch 12 6000000000 0 ideal "60" 0 0 0 5900
reps alpha maxbatch 12 6000000000 3.75 ondemand "rc124"
reps alpha maxbatch 12 6000000000 3.75 plan "150" 90 2000 1500 1590
reps alpha overhead 4 $W 0 plain "10 11 12"
reps alpha overhead-cached 4 $W 0 ideal "10.5 10.5 10.5" 0 0 0 1000 1.5
reps alpha overhead-noplan 4 $W 0 ideal "12 12 12" 0 0 0 1000 2
reps alpha overhead 4 $W 0 ideal "13.2 13.2 13.2" 0 0 0 1000 3
reps alpha overhead 4 $W 0.8 plan "rc124 14.3 14.3" 0 0 0 1000 3.5

# beta's CSV is as older suites wrote it, without the busy-time columns.
python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); from measure import COLUMNS
print(",".join(COLUMNS[:COLUMNS.index("steady_lost") + 1]))' "$ROOT/bench" >"$suite/beta.csv"
export OLD_CSV=1
W=1000000000
reps beta grid 16 $W 0 plain "5 5 5"
reps beta grid 16 $W 0 ideal "10 10 10" 0 0 0 900
reps beta grid 16 $W 0.8 plan "11 11 11" 0 0 0 900
reps beta grid 16 $W 1.25 ondemand "40 40 40" 500 400 200 790
reps beta grid 16 $W 1.25 deepum "30 30 30" 400 300 100 790
reps beta grid 16 $W 1.25 plan "15 15 15" 5 100 50 790
reps beta grid 16 $W 2 ondemand "80 80 80" 900 800 400 490
reps beta grid 16 $W 2 deepum "rc137 rc137 rc137"
# beta's plan at W/B 2 is not run.
# Another build of beta, whose plan is compared with its own ideal only.
BUILD_ID=b2 reps beta grid 16 $W 0 ideal "20 20 20" 0 0 0 900
BUILD_ID=b2 reps beta grid 16 $W 1.25 plan "40 40 40" 5 100 50 790
unset OLD_CSV

# alpha's capacity floors (bench/suite.sh's floors-MODEL.jsonl): at W/B
# 1.25 and 2, the latter's first line overridden by a later one; the
# roomy plan's window covered by its kernels (its budget as reps writes
# it: awk's %d stops at 2^31 - 1).
cat >"$suite/floors-alpha.jsonl" <<'EOF_FLOORS'
{"batch": 4, "budget_bytes": 1600000000, "policy": "plan", "ns": 25000000, "kernel_ns": 15000000, "from": 9, "to": 3, "evict_bytes": 100000000, "window_kernel_ns": 4000000}
{"batch": 4, "budget_bytes": 1000000000, "policy": "plan", "ns": 15000000, "kernel_ns": 15000000, "from": 0, "to": 0, "evict_bytes": 0, "window_kernel_ns": 0}
{"batch": 4, "budget_bytes": 2147483647, "policy": "plan", "ns": 15000000, "kernel_ns": 15000000, "from": 1, "to": 2, "evict_bytes": 10000000, "window_kernel_ns": 5000000}
{"batch": 4, "budget_bytes": 1000000000, "policy": "plan", "ns": 45000000, "kernel_ns": 15000000, "from": 9, "to": 3, "evict_bytes": 300000000, "window_kernel_ns": 4000000}
EOF_FLOORS

run python3 "$REPORT" "$suite"
expect_status 0 "the report exits 0"
expect_out_has "- **alpha (b1)**: 2026-01-02; Test GPU; batch 4; W = 2.00 GB; calibrated HtoD 40 GB/s, DtoH 10 GB/s" \
	"the header line has date, GPU, batch, W and the calibration"
expect_out_has "- **beta (b1)**: 2026-01-02; Test GPU; batch 16; W = 1.00 GB; calibrated HtoD 20 GB/s, DtoH 5 GB/s" \
	"each model has its header line"
# ideal 21 ms; ondemand 70 (60-80): 30 % of ideal; bound max(21, 400/10, 800/40) = 40, 1.75x.
expect_out_has "| alpha (b1) | 1.25 | ondemand | 70.0 (60.0–80.0) | 3/3 | 30.0 | 1100 | 800 | 400 | 40.0 | 1.75 | 1590 / 1600 | yes | – |" \
	"median, spread, % of ideal, traffic, bound and x bound"
# plan 30 (28-35): 70 %; bound max(21, 10, 10) = 21, 30/21 = 1.43x; faults 11 of 1100 = 1 %.
expect_out_has "| alpha (b1) | 1.25 | plan | 30.0 (28.0–35.0) | 3/3 | 70.0 | 11 | 400 | 100 | 21.0 | 1.43 | 1590 / 1600 | NO (1 of 3) | 1.00 |" \
	"plan's faults as % of ondemand's and differing outputs"
# The floor at the calibrated DtoH (10 GB/s), not umplan's ns: 15 ms of
# kernels + 100 MB / 10 GB/s - 4 ms = 21 ms, 30 / 21 = 1.43x; at W/B 2 the
# later line's 15 + 30 - 4 = 41 ms, 42 / 41 = 1.02x; the roomy plan's window
# covered: its kernels' 15 ms, 23 / 15 = 1.53x.
expect_out_has "| NO (1 of 3) | 1.00 | 21.0 | 1.43 | 1.00 |" "the plan's floor at the calibrated eviction bandwidth, and x floor"
expect_out_has "| alpha (b1) | 2 | plan | 42.0 (42.0–42.0) | 3/3 | 50.0 | 40 | 900 | 500 | 50.0 | 0.84 | 990 / 1000 | yes | 2.00 | 41.0 | 1.02 | 1.45 |" \
	"a later line for the same plan wins; the least step its traffic allows, one way at a time: 500 / 10 + 900 / 40 = 72.5 ms over its 50 ms bound"
expect_out_has "| alpha (b1) | 0.8 (B = 1.25 W) | plan | 23.0 (22.0–24.0) | 3/3 | 91.3 | 0 | 50 | 0 | 21.0 | 1.10 | 1900 / 2147 | yes | – | 15.0 | 1.53 |" \
	"a window its kernels cover leaves the kernels' time"
expect_out_has "| alpha (b1) | 2 | deepum | 90.0 (90.0–90.0) | 3/3 | 23.3 | 1800 | 1500 | 700 | 70.0 | 1.29 | 990 / 1000 | yes | – | – | – | 1.54 |" \
	"no floor for a policy bench/suite.sh kept none for; its least step from its traffic alone: 107.5 ms over a 70 ms bound"
expect_out_has "| beta (b1) | 1.25 | plan | 15.0 (15.0–15.0) | 3/3 | 66.7 | 5 | 100 | 50 | 10.0 | 1.50 | 790 / 800 | yes | 1.00 | – | – | 1.50 |" \
	"no floor for a model without floors-MODEL.jsonl; both ways 50 / 5 + 100 / 20 = 15 ms over a 10 ms bound"
expect_out_has "| alpha (b1) | – | plain | 10.0 (9.0–11.0) | 3/3 | 210.0 | – | – | – | – | – | – / none | yes | – |" \
	"the plain rows written by measure.py are read"
expect_out_has "| alpha (b1) | – | ideal | 21.0 (20.0–25.0) | 3/3 | 100.0 | 0 | 0 | 0 | 21.0 | 1.00 | 1000 / none | yes | – | – | – | 1.00 |" \
	"ideal is 100 % of itself and its own bound, and its least step"
expect_out_has "| alpha (b1) | 0.8 (B = 1.25 W) | plan | 23.0 (22.0–24.0) | 3/3 | 91.3 |" "the roomy plan run is a grid row"
# one of three cut off: the median of the other two, 21 / 110 = 19.1 %.
expect_out_has "| alpha (b1) | 2 | ondemand | 110.0 (100.0–120.0) | 2/3 (rc 124) | 19.1 | 2000 | 1600 | 800 | 80.0 | 1.38 |" \
	"a failed repetition is left out of the median and counted"
expect_out_has "| alpha (b1) | 2 | plan | 42.0 (42.0–42.0) | 3/3 | 50.0 | 40 |" "the warm-up replays are read and left out"
expect_out_has "| beta (b1) | 2 | deepum | failed (rc 137) | 0/3 (rc 137) | – |" "a cell failed in every repetition says so"
expect_out_has "| beta (b1) | 2 | plan | not run | 0/0 | – |" "a missing cell says not run"
# b2's bound with its own calibration (HtoD 10, DtoH 1): max(20, 50 / 1, 100 / 10) = 50.
expect_out_has "| beta (b2) | 1.25 | plan | 40.0 (40.0–40.0) | 3/3 | 50.0 | 5 | 100 | 50 | 50.0 | 0.80 |" \
	"a build's policy is compared with that build's ideal (20 ms, not b1's 10) and calibration"
expect_out_has "| beta (b2) | 1.25 | ondemand | not run |" "a build's grid lists every policy at its ratios"
grep -q "| beta (b2) | – | plain |" <<<"$out" && not_ok "no base rows for a build that did not run base" \
	|| ok "no base rows for a build that did not run base"
grep -q "| beta (b2) | 2 |" <<<"$out" && not_ok "a build's grid lists only the ratios it ran" \
	|| ok "a build's grid lists only the ratios it ran"
expect_out_has "| alpha (b1) | 10.0 (9.0–11.0) | 21.0 (20.0–25.0) | +110.0 % | 23.0 (22.0–24.0) | +130.0 % |" \
	"replay when memory suffices: overheads against plain"
expect_out_has "| beta (b1) | 5.0 (5.0–5.0) | 10.0 (10.0–10.0) | +100.0 % | 11.0 (11.0–11.0) | +120.0 % |" \
	"replay when memory suffices: every model"
expect_out_has "| alpha (b1) | 4 (grid) | 1.25 | 21.0 (20.0–25.0) | 70.0 (60.0–80.0) | 30.0 | 30.0 (28.0–35.0) | 70.0 |" \
	"max batch starts at the grid's default batch"
expect_out_has "| alpha (b1) | 8 | 2.50 | 40.0 | 100.0 | 40.0 | 70.0 | 57.1 |" "max batch: each batch with % of ideal"
expect_out_has "| alpha (b1) | 12 | 3.75 | 60.0 | failed (rc 124) | – | 150.0 | 40.0 |" "max batch: a failed run says so"
expect_out_has "| alpha (b1) | none | 8 |" "largest batch reached per policy (ondemand: 30 % at batch 4)"
expect_out_has "at least 50 % of ideal's throughput" "the criterion is stated"
# overhead against alpha's overhead plain (11 ms), not the grid's (10 ms).
expect_out_has "| alpha (b1) | 11.0 (10.0–12.0) | 10.5 (10.5–10.5), -4.5 %, – | 12.0 (12.0–12.0), +9.1 %, – | 13.2 (13.2–13.2), +20.0 %, 3.00 | 14.3 (14.3–14.3), +30.0 %, 3.50 |" \
	"the overhead part: each variant against plain, with its callbacks' ms where a plan finds iterations"
grep -q "| beta (b1) | .*, " <<<"$out" && not_ok "no overhead row for a model without the part" \
	|| ok "no overhead row for a model without the part"
grep -q "img/" <<<"$out" && not_ok "no image links without --img" || ok "no image links without --img"

# --docs: only the text between the markers changes.
docs=$SCRATCH/benchmarks.md
printf '# Benchmarks\nbefore\n<!-- suite:begin -->\nOLD TABLE\n<!-- suite:end -->\nafter\n' >"$docs"
run python3 "$REPORT" "$suite" --docs "$docs"
expect_status 0 "--docs exits 0"
[ -z "$out" ] && ok "--docs prints nothing" || not_ok "--docs prints nothing"
if [ "$(head -3 "$docs")" = "$(printf '# Benchmarks\nbefore\n<!-- suite:begin -->')" ] &&
	[ "$(tail -2 "$docs")" = "$(printf '<!-- suite:end -->\nafter')" ] &&
	! grep -q "OLD TABLE" "$docs" && grep -qF "| alpha (b1) | 8 | 2.50 |" "$docs"; then
	ok "--docs replaces the text between the markers and keeps the rest"
else
	not_ok "--docs replaces the text between the markers and keeps the rest"; cat "$docs"
fi
cp "$docs" "$SCRATCH/once.md"
run python3 "$REPORT" "$suite" --docs "$docs"
[ "$status" -eq 0 ] && cmp -s "$docs" "$SCRATCH/once.md" && ok "--docs twice gives the same file" || not_ok "--docs twice gives the same file"
printf 'no markers here\n' >"$SCRATCH/plain.md"
run python3 "$REPORT" "$suite" --docs "$SCRATCH/plain.md"
expect_status 2 "--docs without markers exits 2"
expect_err_has "$SCRATCH/plain.md" "the file without markers is named"
expect_err_has "<!-- suite:begin -->" "the missing marker is named"

# --img: three PNGs, linked relative to docs/.
run "$PY" "$REPORT" "$suite" --img "$SCRATCH/img"
expect_status 0 "--img exits 0"
for png in suite-throughput suite-faults suite-traffic; do
	if [ "$(head -c 8 "$SCRATCH/img/$png.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; then
		ok "--img writes $png.png as a PNG"
	else
		not_ok "--img writes $png.png as a PNG"
	fi
	expect_out_has "(img/$png.png)" "the markdown links img/$png.png"
done

# bench/measure.py with a --stats file: steady medians leave the first
# iteration (the warm-up) out; the callbacks also averaged over the whole run.
cat >"$SCRATCH/stats.json" <<'EOF_STATS'
{"engine": {"iterations": 3, "matched": 90, "resynced": 4, "lost": 12, "signature_mismatch": false,
  "modelled_peak_bytes": 2000000},
 "iteration_ns": [9000000, 3000000, 5000000],
 "measured": {"peak_residency_bytes": 3000000, "budget_bytes": 4000000,
  "host": {"callback_ns": 30000000, "driver_calls": {"prefetch": {"calls": 6, "ns": 600}}},
  "iterations": [
   {"fault_migrations": 50, "htod_bytes": 9000000, "dtoh_bytes": 0, "callback_ns": 20000000, "resynced": 4, "lost": 10,
    "refault_blocks": 30, "unissued_blocks": 9},
   {"fault_migrations": 2, "htod_bytes": 1000000, "dtoh_bytes": 2000000, "callback_ns": 4000000, "resynced": 0, "lost": 0,
    "refault_blocks": 1, "unissued_blocks": 2},
   {"fault_migrations": 4, "htod_bytes": 3000000, "dtoh_bytes": 4000000, "callback_ns": 6000000, "resynced": 0, "lost": 2,
    "refault_blocks": 3, "unissued_blocks": 4}]}}
EOF_STATS
printf 'per_step_ms 9,4,5\nstep 1 loss 2.5\nchecksum 42\n' >"$SCRATCH/plan.out"
run python3 "$MEASURE" "$SCRATCH/one.csv" --out "$SCRATCH/plan.out" --stats "$SCRATCH/stats.json" \
	--ref "$SCRATCH/plain1.out" build=b1 model=alpha policy=plan rep=1
expect_status 0 "measure.py with --stats exits 0"
row=$(python3 -c 'import csv,sys; r=next(csv.DictReader(open(sys.argv[1]))); print(" ".join(f"{k}={r[k]}" for k in
	("step_ms","faults_per_iter","htod_mb_per_iter","dtoh_mb_per_iter","lost","callback_ms_per_iter","steady_callback_ms","steady_lost","steady_refault_blocks","steady_unissued_blocks","same_output")))' \
	"$SCRATCH/one.csv")
want="step_ms=4.500 faults_per_iter=3.000 htod_mb_per_iter=2.000 dtoh_mb_per_iter=3.000 lost=12 callback_ms_per_iter=10.000 steady_callback_ms=5.000 steady_lost=1.000 steady_refault_blocks=2.000 steady_unissued_blocks=3.000 same_output=1"
[ "$row" = "$want" ] && ok "measure.py: steady medians, whole-run callback average, same output" \
	|| not_ok "measure.py: steady medians, whole-run callback average, same output (got: $row)"

# A replay idle throughout counted no traffic: its faults and bytes are
# left empty, not written as 0.
cat >"$SCRATCH/idle.json" <<'EOF_STATS'
{"engine": {"iterations": 0, "matched": 0, "resynced": 0, "lost": 0, "signature_mismatch": false,
  "modelled_peak_bytes": 2000000},
 "iteration_ns": [],
 "measured": {"traffic_counted": "none: idle throughout", "peak_residency_bytes": 3000000, "budget_bytes": 4000000,
  "host": {"callback_ns": 0, "driver_calls": {}}, "iterations": []}}
EOF_STATS
run python3 "$MEASURE" "$SCRATCH/idle.csv" --out "$SCRATCH/plan.out" --stats "$SCRATCH/idle.json" \
	build=b1 model=alpha policy=plan rep=1
expect_status 0 "measure.py with an idle replay's --stats exits 0"
row=$(python3 -c 'import csv,sys; r=next(csv.DictReader(open(sys.argv[1]))); print(" ".join(f"{k}={r[k]}" for k in
	("faults_per_iter","htod_mb_per_iter","dtoh_mb_per_iter","peak_mb","steady_refault_blocks")))' "$SCRATCH/idle.csv")
want="faults_per_iter= htod_mb_per_iter= dtoh_mb_per_iter= peak_mb=3.000 steady_refault_blocks="
[ "$row" = "$want" ] && ok "measure.py: an idle replay's traffic is unknown, not 0" \
	|| not_ok "measure.py: an idle replay's traffic is unknown, not 0 (got: $row)"

# A replay that followed the program but completed no iteration (as the
# GPU checks' mlp.woken: 112,985 fault migrations, engine.iterations 0)
# measured no steady one: its per-iteration figures are unknown, not 0,
# and its whole-run callback time is no iteration's.
cat >"$SCRATCH/noiter.json" <<'EOF_STATS'
{"engine": {"iterations": 0, "matched": 0, "resynced": 0, "lost": 1777, "signature_mismatch": false,
  "modelled_peak_bytes": 2000000},
 "iteration_ns": [],
 "measured": {"traffic_counted": "whole run", "peak_residency_bytes": 3000000, "budget_bytes": 4000000,
  "host": {"callback_ns": 143000000, "driver_calls": {"evict": {"calls": 391, "ns": 600}}}, "iterations": []}}
EOF_STATS
run python3 "$MEASURE" "$SCRATCH/noiter.csv" --out "$SCRATCH/plan.out" --stats "$SCRATCH/noiter.json" \
	build=b1 model=alpha policy=plan rep=1
expect_status 0 "measure.py with the stats of a replay without iterations exits 0"
row=$(python3 -c 'import csv,sys; r=next(csv.DictReader(open(sys.argv[1]))); print(" ".join(f"{k}={r[k]}" for k in
	("faults_per_iter","htod_mb_per_iter","dtoh_mb_per_iter","steady_callback_ms","steady_lost","callback_ms_per_iter","lost")))' "$SCRATCH/noiter.csv")
want="faults_per_iter= htod_mb_per_iter= dtoh_mb_per_iter= steady_callback_ms= steady_lost= callback_ms_per_iter= lost=1777"
[ "$row" = "$want" ] && ok "measure.py: no iteration completed, no per-iteration figure" \
	|| not_ok "measure.py: no iteration completed, no per-iteration figure (got: $row)"

# Bad input: one line naming the file, exit 2, no traceback.
run python3 "$REPORT" "$SCRATCH/absent"
expect_status 2 "a missing directory exits 2"
expect_err_has "$SCRATCH/absent" "the missing directory is named"
mkdir "$SCRATCH/empty"
run python3 "$REPORT" "$SCRATCH/empty"
expect_status 2 "a directory without CSVs exits 2"
expect_err_has "$SCRATCH/empty: no MODEL.csv" "the directory without CSVs is named"
mkdir "$SCRATCH/bad"
cp "$suite/calib-alpha.json" "$SCRATCH/bad/"
printf 'model,step_ms\nalpha,3\n' >"$SCRATCH/bad/alpha.csv"
run python3 "$REPORT" "$SCRATCH/bad"
expect_status 2 "a wrong header exits 2"
expect_err_has "$SCRATCH/bad/alpha.csv: header" "the CSV with the wrong header is named"
[ "$(wc -l <<<"$err")" -eq 1 ] && ! grep -q Traceback <<<"$err" && ok "the error is one line, no traceback" \
	|| not_ok "the error is one line, no traceback"
# A floors file that is not bench/suite.sh's: its path and line named.
mkdir "$SCRATCH/badfloor"
cp "$suite/alpha.csv" "$suite/calib-alpha.json" "$SCRATCH/badfloor/"
# floor_fails DESC LINE TEXT: LINE as floors-alpha.jsonl's second line
# (after a good one) exits 2 with one line naming the file, line 2 and TEXT.
floor_fails() {
	{ head -1 "$suite/floors-alpha.jsonl"; printf '%s\n' "$2"; } >"$SCRATCH/badfloor/floors-alpha.jsonl"
	run python3 "$REPORT" "$SCRATCH/badfloor"
	if [ "$status" -eq 2 ] && [ "$(wc -l <<<"$err")" -eq 1 ] &&
		grep -qF "$SCRATCH/badfloor/floors-alpha.jsonl: line 2: $3" <<<"$err"; then
		ok "$1"
	else not_ok "$1 (status $status: $err)"; fi
}
floor_fails "a floors line that is not JSON exits 2" '{"batch": 4,' "not JSON"
printf '\377\n' >"$SCRATCH/badfloor/floors-alpha.jsonl"
run python3 "$REPORT" "$SCRATCH/badfloor"
[ "$status" -eq 2 ] && [ "$(wc -l <<<"$err")" -eq 1 ] && grep -qF "$SCRATCH/badfloor/floors-alpha.jsonl: not text" <<<"$err" \
	&& ok "a floors file that is not text exits 2" || not_ok "a floors file that is not text exits 2 (status $status: $err)"
floor_fails "a floors line that is not an object exits 2" '[4]' "not a JSON object"
floor_fails "a floor without its window's bytes exits 2" \
	'{"batch": 4, "budget_bytes": 1, "policy": "plan", "kernel_ns": 1, "window_kernel_ns": 0}' \
	"evict_bytes is missing or not a whole number >= 0"
floor_fails "a negative kernel time exits 2" \
	'{"batch": 4, "budget_bytes": 1, "policy": "plan", "kernel_ns": -1, "window_kernel_ns": 0, "evict_bytes": 0}' \
	"kernel_ns is missing or not a whole number >= 0"
floor_fails "a floor's windows that are not a list exits 2" \
	'{"batch": 4, "budget_bytes": 1, "policy": "plan", "kernel_ns": 1, "window_kernel_ns": 0, "evict_bytes": 0, "windows": {}}' \
	"windows is not a list of windows"
floor_fails "an unknown policy exits 2" \
	'{"batch": 4, "budget_bytes": 1, "policy": "lru", "kernel_ns": 1, "window_kernel_ns": 0, "evict_bytes": 0}' \
	"policy is missing or not a policy"

# bench/report.py (tests/gpu/run.sh's replay.txt): a replay that failed
# leaves "TAG rc=N" and no figures; its row says so, the others stand.
rp=$SCRATCH/replay-report
mkdir -p "$rp"
echo '{"htod_gbps": 40, "dtoh_gbps": 10, "used_drop_after_evict_bytes": 1}' >"$rp/calib.json"
cat >"$rp/replay.txt" <<'EOF_RT'
mlp.2.ideal rc=0 iter_ms=10.0 htod_mb_per_iter=0 dtoh_mb_per_iter=0 faults_per_iter=0 modelled_peak_mb=1 budget_mb=0
mlp.2.ondemand rc=0 iter_ms=30.0 htod_mb_per_iter=100 dtoh_mb_per_iter=100 faults_per_iter=50 modelled_peak_mb=1 budget_mb=5
mlp.2.plan rc=139
EOF_RT
run python3 "$ROOT/bench/report.py" "$rp"
[ "$status" = 0 ] && grep -qF "| mlp | 2 | plan | failed (rc 139) |" <<<"$out" && grep -qF "| mlp | 2 | ondemand | 30.0 | 33.3 |" <<<"$out" \
	&& ok "report.py: a failed replay's row says so, the others stand" \
	|| not_ok "report.py: a failed replay's row says so, the others stand (status $status: $(tail -1 <<<"$err"))"
# ondemand's least step by its traffic, one way at a time: 100 / 10 + 100 / 40
# = 12.5 ms over its bound of max(10, 100 / 10, 100 / 40) = 10 ms.
grep -qF "| mlp | 2 | ondemand | 30.0 | 33.3 | 50 | 100 | 100 | 10.0 | 3.00 | 1 | 5 | – | – | 1.25 |" <<<"$out" \
	&& ok "report.py: the least multiple of its bound a replay's traffic allows" \
	|| not_ok "report.py: the least multiple of its bound a replay's traffic allows (got: $(grep '| ondemand |' <<<"$out"))"
# A replay that exits 0 having completed no iteration, its line as
# tests/gpu/run.sh writes it (replay_table.py's summary): no figures to
# read, its row says why.
echo "mlp.2.deepum rc=0 $(python3 "$ROOT/tests/gpu/replay_table.py" "$SCRATCH/noiter.json")" >>"$rp/replay.txt"
run python3 "$ROOT/bench/report.py" "$rp"
[ "$status" = 0 ] && grep -qF "| mlp | 2 | deepum | no steady iteration |" <<<"$out" && grep -qF "| mlp | 2 | ondemand | 30.0 | 33.3 |" <<<"$out" \
	&& ok "report.py: a replay without iterations says so, the others stand" \
	|| not_ok "report.py: a replay without iterations says so, the others stand (status $status: $(tail -1 <<<"$err"))"
# ideal's row reads its own figures as the others do: its faults and
# traffic as measured, its bound max(10, 0 / 10, 800 / 40) = 20 ms.
rp2=$SCRATCH/replay-ideal
mkdir -p "$rp2"
cp "$rp/calib.json" "$rp2/"
echo "mlp.2.ideal rc=0 iter_ms=10.0 htod_mb_per_iter=800 dtoh_mb_per_iter=0 faults_per_iter=7 modelled_peak_mb=1 budget_mb=0" >"$rp2/replay.txt"
run python3 "$ROOT/bench/report.py" "$rp2"
[ "$status" = 0 ] && grep -qF "| mlp | 2 | ideal | 10.0 | 100.0 | 7 | 800 | 0 | 20.0 | 0.50 | – | none | – | – | 1.00 |" <<<"$out" \
	&& ok "report.py: ideal's faults and bound as measured" \
	|| not_ok "report.py: ideal's faults and bound as measured (got: $(grep '| ideal |' <<<"$out"))"

# The plan's capacity floor from the umplan --json run.sh keeps beside its
# replay (NAME.RATIO.plan.json), at the calibrated DtoH (10 GB/s): 2 ms of
# kernels + 150 MB / 10 GB/s - 1 ms in the window = 16 ms, and it raises the
# least step to 16 ms over a bound of max(10, 100 / 10, 100 / 40) = 10.
rp3=$SCRATCH/replay-floor
mkdir -p "$rp3"
cp "$rp/calib.json" "$rp3/"
printf '%s\n' "mlp.2.ideal rc=0 iter_ms=10.0 htod_mb_per_iter=0 dtoh_mb_per_iter=0 faults_per_iter=0 modelled_peak_mb=1 budget_mb=0" \
	"mlp.2.plan rc=0 iter_ms=32.0 htod_mb_per_iter=100 dtoh_mb_per_iter=100 faults_per_iter=0 modelled_peak_mb=4 budget_mb=5" \
	"mlp.3.ideal rc=0 iter_ms=10.0 htod_mb_per_iter=0 dtoh_mb_per_iter=0 faults_per_iter=0 modelled_peak_mb=1 budget_mb=0" \
	"mlp.3.plan rc=0 iter_ms=40.0 htod_mb_per_iter=100 dtoh_mb_per_iter=100 faults_per_iter=0 modelled_peak_mb=3 budget_mb=3" >"$rp3/replay.txt"
echo '{"plan": {"capacity_floor": {"ns": 17000000, "kernel_ns": 2000000, "from": 5, "to": 2, "evict_bytes": 150000000, "window_kernel_ns": 1000000}}}' >"$rp3/mlp.2.plan.json"
run python3 "$ROOT/bench/report.py" "$rp3"
[ "$status" = 0 ] && grep -qF "| mlp | 2 | plan | 32.0 | 31.2 | 0 | 100 | 100 | 10.0 | 3.20 | 4 | 5 | 16.0 | 2.00 | 1.60 |" <<<"$out" \
	&& grep -qF "| mlp | 3 | plan | 40.0 | 25.0 | 0 | 100 | 100 | 10.0 | 4.00 | 3 | 3 | – | – | 1.25 |" <<<"$out" \
	&& ok "report.py: the plan's floor where run.sh kept its JSON, none where it did not" \
	|| not_ok "report.py: the plan's floor where run.sh kept its JSON, none where it did not (got: $(grep '| plan |' <<<"$out"))"
# report_floor FLOOR_JSON: report.py on rp3 with the MLP's plan at W/B 2
# floored by FLOOR_JSON (its umplan --json's plan.capacity_floor).
report_floor() {
	echo "{\"plan\": {\"capacity_floor\": $1}}" >"$rp3/mlp.2.plan.json"
	run python3 "$ROOT/bench/report.py" "$rp3"
}
# floor_row DESC FLOOR_JSON ROW: the table has ROW.
floor_row() {
	report_floor "$2"
	[ "$status" = 0 ] && grep -qF "$3" <<<"$out" && ok "$1" || not_ok "$1 (status $status: $(grep '| plan |' <<<"$out"))"
}
# floor_refused DESC FLOOR_JSON TEXT: exit 1, one line on stderr naming
# the file and TEXT, no table.
floor_refused() {
	report_floor "$2"
	[ "$status" = 1 ] && [ "$(wc -l <<<"$err")" -eq 1 ] && [ -z "$out" ] &&
		grep -qF "$rp3/mlp.2.plan.json: $3" <<<"$err" && ok "$1" || not_ok "$1 (status $status: $err)"
}
# Disjoint windows add up where they give more than the tightest alone:
# two of 100 MB in 1 ms each leave 9 + 9 ms uncovered at 10 GB/s, against
# the tightest's 14: a floor of 2 + 18 = 20 ms.
floor_row "report.py: a floor's disjoint windows add up" \
	'{"ns": 17000000, "kernel_ns": 2000000, "from": 5, "to": 2, "evict_bytes": 150000000, "window_kernel_ns": 1000000,
	  "windows": [{"from": 0, "to": 1, "evict_bytes": 100000000, "kernel_ns": 1000000},
	              {"from": 3, "to": 4, "evict_bytes": 100000000, "kernel_ns": 1000000}]}' \
	"| mlp | 2 | plan | 32.0 | 31.2 | 0 | 100 | 100 | 10.0 | 3.20 | 4 | 5 | 20.0 | 1.60 | 2.00 |"
floor_refused "report.py: a floor's window without its kernel time is named" \
	'{"ns": 1, "kernel_ns": 1, "from": 0, "to": 0, "evict_bytes": 0, "window_kernel_ns": 0, "windows": [{"evict_bytes": 1}]}' \
	"plan.capacity_floor.windows is not a list of windows"
# A floor of 0 ms (nothing timed) has no x floor.
floor_row "report.py: a floor of 0 ms, no x floor" \
	'{"ns": 0, "kernel_ns": 0, "from": 0, "to": 0, "evict_bytes": 0, "window_kernel_ns": 0}' \
	"| mlp | 2 | plan | 32.0 | 31.2 | 0 | 100 | 100 | 10.0 | 3.20 | 4 | 5 | 0.0 | – | 1.25 |"
floor_refused "report.py: a plan JSON without the floor's window is named, with the field" \
	'{"kernel_ns": 2000000, "evict_bytes": 1}' "plan.capacity_floor.window_kernel_ns is missing"
echo 'Warning: not JSON' >"$rp3/mlp.2.plan.json"
run python3 "$ROOT/bench/report.py" "$rp3"
[ "$status" = 1 ] && [ "$(wc -l <<<"$err")" -eq 1 ] && grep -qF "$rp3/mlp.2.plan.json: not umplan --json's output" <<<"$err" \
	&& ok "report.py: a plan JSON that is not JSON is named" || not_ok "report.py: a plan JSON that is not JSON is named (status $status: $err)"

# report.py's errors: no DIR is a usage error; a folder or file missing,
# or not as the GPU run writes it, is named on one line (exit 1).
# report_fails DESC TEXT: exit 1, stderr one line holding TEXT, no table.
report_fails() {
	if [ "$status" -eq 1 ] && [ "$(wc -l <<<"$err")" -eq 1 ] && grep -qF -- "$2" <<<"$err" && [ -z "$out" ]; then
		ok "$1"
	else not_ok "$1 (wanted exit 1 and one line with '$2')"; fi
}
run python3 "$ROOT/bench/report.py"
expect_status 2 "report.py: no DIR is a usage error"
expect_err_has "usage: report.py" "report.py: the usage is printed"
expect_err_lacks "Traceback" "report.py: no DIR, no traceback"
run python3 "$ROOT/bench/report.py" "$SCRATCH/nothing"
report_fails "report.py: a folder that is not there is named" "report.py: $SCRATCH/nothing: No such folder"
rp3=$SCRATCH/replay-bad
mkdir -p "$rp3"
run python3 "$ROOT/bench/report.py" "$rp3"
report_fails "report.py: a folder with neither replay.txt nor overhead.csv says so" "$rp3: neither replay.txt nor overhead.csv"
cp "$rp2/replay.txt" "$rp3/"
run python3 "$ROOT/bench/report.py" "$rp3"
report_fails "report.py: replay.txt without calib.json names calib.json" "$rp3/calib.json: No such file or directory"
echo '{"htod_gbps": 40}' >"$rp3/calib.json"
run python3 "$ROOT/bench/report.py" "$rp3"
report_fails "report.py: a calib.json without a bandwidth names what it lacks" "$rp3/calib.json: no number dtoh_gbps"
echo '{"htod_gbps": 40, "dtoh_gbps": 0, "used_drop_after_evict_bytes": 1}' >"$rp3/calib.json"
run python3 "$ROOT/bench/report.py" "$rp3"
report_fails "report.py: a calib.json with a bandwidth of 0 names it" "$rp3/calib.json: dtoh_gbps is not above 0"
echo 'not json' >"$rp3/calib.json"
run python3 "$ROOT/bench/report.py" "$rp3"
report_fails "report.py: a calib.json that is not JSON says so" "$rp3/calib.json: not JSON"
cp "$rp2/calib.json" "$rp3/"
echo "mlp.2.plan rc=0 iter_ms=12.0" >>"$rp3/replay.txt"
run python3 "$ROOT/bench/report.py" "$rp3"
report_fails "report.py: a replay.txt line without its figures names the line" "$rp3/replay.txt:2: no htod_mb_per_iter"
echo "mlp.2.ideal rc=0 iter_ms=fast htod_mb_per_iter=0 dtoh_mb_per_iter=0 faults_per_iter=0 modelled_peak_mb=1 budget_mb=0" >"$rp3/replay.txt"
run python3 "$ROOT/bench/report.py" "$rp3"
report_fails "report.py: a figure that is not a number names the file" "$rp3/replay.txt: could not convert string to float: 'fast'"
echo "mlp.2.ideal rc=0 iter_ms=0 htod_mb_per_iter=0 dtoh_mb_per_iter=0 faults_per_iter=0 modelled_peak_mb=1 budget_mb=0" >"$rp3/replay.txt"
run python3 "$ROOT/bench/report.py" "$rp3"
report_fails "report.py: an iteration of 0 ms names the line" "$rp3/replay.txt:1: iter_ms is not above 0"
cp "$rp2/replay.txt" "$rp3/"
printf 'model,steps,plain_ms,plain_uncached_ms,umrec_ms,umrec_cache_ms,umrec_over_plain,umrec_over_uncached\nmlp,20,10\n' >"$rp3/overhead.csv"
run python3 "$ROOT/bench/report.py" "$rp3"
report_fails "report.py: an overhead.csv row short of fields names the line" "$rp3/overhead.csv:2: fewer fields than the header's"
echo "model,steps" >"$rp3/overhead.csv"
run python3 "$ROOT/bench/report.py" "$rp3"
report_fails "report.py: an overhead.csv without its columns names them" "$rp3/overhead.csv: no plain_ms,"
printf 'model,steps,plain_ms,plain_uncached_ms,umrec_ms,umrec_cache_ms,umrec_over_plain,umrec_over_uncached\nmlp,20,10,11,12,12,1.2,1.09\n' >"$rp3/overhead.csv"
run python3 "$ROOT/bench/report.py" "$rp3"
[ "$status" = 0 ] && grep -qF "| mlp | 2 | ideal | 10.0 |" <<<"$out" && grep -qF "| mlp | 20 | 10.00 | 11.00 | 12.00 | 12.00 | 1.20x |" <<<"$out" \
	&& ok "report.py: both tables from the three files" || not_ok "report.py: both tables from the three files"
rm "$rp3/replay.txt" "$rp3/calib.json"
run python3 "$ROOT/bench/report.py" "$rp3"
[ "$status" = 0 ] && grep -qF "| mlp | 20 | 10.00 |" <<<"$out" && ! grep -q "Measured link" <<<"$out" \
	&& ok "report.py: a folder with overhead.csv only, its table (docs/benchmarks.md's overhead command)" \
	|| not_ok "report.py: a folder with overhead.csv only, its table (docs/benchmarks.md's overhead command)"
finish
