#!/usr/bin/env bash
# bench/suite.sh: the benchmark suite for one model, on the GPU machine.
#
# Usage, from the repository root with the build present:
#   BUILD=build bash bench/suite.sh MODEL OUTDIR [PARTS]
# MODEL is one of bench/models.sh's; PARTS any of "base grid maxbatch
# overhead" (default the first three; split them, and RATIOS, over several GPU commands when
# one does not fit in 10 minutes). Appends one row per run to OUTDIR/MODEL.csv (bench/measure.py)
# and a line per plan made for a budget to OUTDIR/floors-MODEL.jsonl (its
# capacity floor), and writes OUTDIR/calib-MODEL.json, OUTDIR/MODEL-stats.tar.gz and the runs'
# stdout in OUTDIR/MODEL-outputs.tar.gz. Render with
# bench/suite_report.py.
#
# The model runs at its default batch; W is the live peak of its recorded
# run. REPS repetitions (3; telling two builds 10 % apart took about 9 on
# the GPU hosts so far: docs/benchmarks.md, "Why two replays of one build
# differ"), interleaved so drift touches every policy alike:
# base: the plain program (no tool), ideal (umreplay --policy ideal, no
#   budget), and plan with a budget of 1.25 W (replay when memory suffices);
# grid: at each W/B of RATIOS (1.25 1.5 2 3), POLICIES (ondemand deepum
#   plan) under --gpu-budget B; without base, ideal too, so every build in
#   every command has the reference its rows are normalised to. The
#   pseudo-policy plan-migrate is plan with a plan made without host
#   placement (umplan --host-bw 0): migrations alone.
# With PLAN_RESERVE=BYTES each plan for a budget B is made for B less that
# (umplan --capacity), and replayed under B: room the plan leaves free.
# With DTOH_BW=GB/s the plans assume that eviction bandwidth instead of
# umplan's default (calibrate.py's measurement of it is only recorded).
# With KERNEL_TIMES=1 every replay also times the kernels (umreplay
# --kernel-times), so the CSV tells how long the GPU computed per steady
# iteration (a diagnostic: it adds to each launch).
# With COMPARE=OTHER_BUILD, base, grid and overhead run that build's replays
# beside BUILD's in the same command (for a change to the replayer; recording and
# planning use BUILD); in base and grid, BUILD's replay goes first in odd
# rounds and COMPARE's in even ones.
# Before its first round a command runs WARMUP (1) plan replays per build,
#   at the grid's last ratio (base alone and overhead: B = 1.25 W), as
#   experiment warmup, which no report uses: the first process to evict
#   on a freshly started machine ran up to 1.65x slower, with up to twice
#   the host time in eviction calls (docs/benchmarks.md, "The slow first
#   replay is the machine's first"), and a 5-step run would count that
#   against whichever variant ran first. maxbatch has no rounds and no
#   warm-up.
# maxbatch: the budget fixed at W / 1.25 of the default batch; the batch
#   doubled and tripled; each recorded, planned for that budget and run once
#   under ideal, ondemand and plan.
# overhead: where replay's cost goes when memory suffices, at the default
#   batch with OVERHEAD_STEPS (20) steps, REPS interleaved rounds, each
#   round starting one variant later than the one before, each variant
#   adding one thing to the one before: plain; ideal without a plan and with
#   PyTorch's caching allocator kept (the program's command unsets
#   PYTORCH_NO_CUDA_MEMORY_CACHING: the injection, its launch callbacks,
#   managed memory), experiment overhead-cached; ideal without a plan (every tensor through umkit's
#   arena), overhead-noplan; ideal with the plan (matching), and plan with a
#   budget of 1.25 W, experiment overhead. OVERHEAD_VARIANTS picks which of
#   "cached noplan ideal plan" run beside plain (default all); with fewer,
#   more REPS fit in one command (bench/pooled_steps.py pairs them).
#   Separate runs drift apart by more than the overhead on a shared host;
#   bench/overhead_lockstep.sh runs plain and the plan replay taking their
#   steps in turn, which told DLRM's +1.7 % within about 1 % (session 64).
#
# Traces are kept in $TRACE_CACHE (on the GPU machine, while it stays up),
# named by the recorder library's and the command's hash, so a later part
# reuses its part's recording.
# Safety: --max-managed is 2 W rounded up to whole GiB (at least 8G) and
# must leave 8 GiB of the GPU free, or the run refuses to start.
set -uo pipefail
MODEL=${1:?usage: bench/suite.sh MODEL OUTDIR [PARTS]}
OUTDIR=${2:?usage: bench/suite.sh MODEL OUTDIR [PARTS]}
PARTS=${3:-base grid maxbatch}
OVERHEAD_STEPS=${OVERHEAD_STEPS:-20}
BUILD=${BUILD:-build}
B=$BUILD/bin
RATIOS=${RATIOS:-1.25 1.5 2 3}
POLICIES=${POLICIES:-ondemand deepum plan}   # the grid's, under a budget
REPS=${REPS:-3}
WARMUP=${WARMUP:-1}
RUN_LIMIT_S=${RUN_LIMIT_S:-150}   # a run slower than this is cut off (rc 124)
RECORD_CAP=32G                     # --max-managed of the recording runs
TRACE_CACHE=${TRACE_CACHE:-/tmp/umkit-bench-traces}
. "$(dirname "$0")/models.sh"
export PYTHONUNBUFFERED=1

batch0=$(default_batch "$MODEL") || { echo "bench/suite.sh: unknown model '$MODEL' (one of: $MODELS)" >&2; exit 2; }
work=$(mktemp -d /tmp/umkit-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$OUTDIR" "$work/stats"
csv=$OUTDIR/$MODEL.csv
date=$(date -u +%Y-%m-%d)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
builds=("$BUILD" ${COMPARE:-})   # the replays of each part run with each of these
for b in "${builds[@]}"; do
	[ -s "$b/COMMIT" ] || { echo "bench/suite.sh: no $b/COMMIT: make all first" >&2; exit 2; }
done
free_mib=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits | head -1)
echo "$MODEL on $gpu, $free_mib MiB free, $date"
if [ "$free_mib" -lt $(((32 + 8) * 1024)) ]; then
	echo "refusing to run: less than 40 GiB free on the GPU" >&2; exit 1
fi

python3 tests/gpu/calibrate.py 1 >"$OUTDIR/calib-$MODEL.json" || exit 1
# The plans take the measured prefetch bandwidth (45-51 GB/s in every run
# so far) but umplan's default eviction bandwidth (8.6 GB/s, h100-facts.md):
# the measured one ranged from 8.5 to 18 GB/s between runs, and BERT-large's
# plan made assuming 18 ran 1.8x slower than those assuming 9 or 13
# (docs/benchmarks.md, "Eviction bandwidth the plan assumes").
htod=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["htod_gbps"])' "$OUTDIR/calib-$MODEL.json")
plan_opts=(--htod-bw "$htod")
[ -n "${DTOH_BW:-}" ] && plan_opts+=(--dtoh-bw "$DTOH_BW")

# record BATCH: records the model at BATCH (or takes the cached trace);
# prints W and the managed cap.
record() {
	local cmd tag=$MODEL.b$1 w key
	read -ra cmd < <(model_command "$MODEL" "$1")
	key=$( (md5sum <"$BUILD/lib/libumrec.so"; echo "${cmd[*]}") | md5sum | cut -c1-16)
	mkdir -p "$TRACE_CACHE"
	if [ ! -s "$TRACE_CACHE/$tag.$key.db" ]; then
		$B/umrec -q -o "$work/$tag.db" --max-managed "$RECORD_CAP" -- "${cmd[@]}" \
			>"$work/$tag.rec" 2>"$work/$tag.rec.err" || { tail -3 "$work/$tag.rec.err" >&2; return 1; }
		mv "$work/$tag.db" "$TRACE_CACHE/$tag.$key.db"
	fi
	ln -sf "$TRACE_CACHE/$tag.$key.db" "$work/$tag.db"
	$B/umplan "$work/$tag.db" --report | grep -E '^(iterations|planned) ' >&2
	w=$($B/umplan "$work/$tag.db" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])') || return 1
	local maxm=$(((2 * w + (1 << 30) - 1) >> 30))
	[ $maxm -lt 8 ] && maxm=8
	if [ $((maxm + 8)) -gt $((free_mib / 1024)) ]; then
		echo "refusing: --max-managed ${maxm}G would leave less than 8 GiB of $free_mib MiB free" >&2
		return 1
	fi
	echo "$w ${maxm}G"
}

# floor_row BATCH BUDGET POLICY JSON: appends the capacity floor of a plan
# made for BUDGET (umplan --json's plan.capacity_floor: the least time any
# order of its migrations can take there) to OUTDIR/floors-MODEL.jsonl, which
# bench/suite_report.py reads for the grid's "x floor".
floor_row() {
	python3 -c 'import json, sys
floor = json.load(open(sys.argv[4]))["plan"]["capacity_floor"]
print(json.dumps(dict(batch=int(sys.argv[1]), budget_bytes=int(sys.argv[2]), policy=sys.argv[3], **floor)))' \
		"$@" >>"$OUTDIR/floors-$MODEL.jsonl"
}

# plan BATCH BUDGET: the plan for the recorded BATCH under BUDGET bytes (0:
# none, the plan ideal runs with: its ops are not used, its signature is);
# for the pseudo-policy plan-migrate, also the plan without host placement.
# Under a budget, each plan's capacity floor goes to floors-MODEL.jsonl.
plan() {
	local cap=() out=$work/$MODEL.b$1.$2.plan
	[ -s "$out" ] && return 0   # made by an earlier part of this command
	if [ "$2" = 0 ]; then
		$B/umplan "$work/$MODEL.b$1.db" "${plan_opts[@]}" -q -o "$out"
		return
	fi
	cap=(--capacity "$(($2 - ${PLAN_RESERVE:-0}))")
	$B/umplan "$work/$MODEL.b$1.db" "${cap[@]}" "${plan_opts[@]}" -q -o "$out" --json >"$out.json" &&
		floor_row "$1" "$2" plan "$out.json" || return 1
	[[ " $POLICIES " != *" plan-migrate "* ]] ||
		{ $B/umplan "$work/$MODEL.b$1.db" "${cap[@]}" "${plan_opts[@]}" --host-bw 0 -q -o "$out.migrate" \
			--json >"$out.migrate.json" && floor_row "$1" "$2" plan-migrate "$out.migrate.json"; }
}

# run EXPERIMENT BATCH W MAXM RATIO BUDGET POLICY REP REF: one run, one CSV row.
# POLICY "plain" runs the program without umkit; BUDGET 0 means none.
run() {
	local exp=$1 batch=$2 w=$3 maxm=$4 ratio=$5 budget=$6 policy=$7 rep=$8 ref=$9 rbuild=${10:-$BUILD}
	local tag=$exp.b$batch.r$ratio.$policy.$rep cmd rc stats=()
	[ "$rbuild" != "$BUILD" ] && tag+=.$(basename "$rbuild")
	read -ra cmd < <(model_command "$MODEL" "$batch")
	if [ "$policy" = plain ]; then
		timeout "$RUN_LIMIT_S" "${cmd[@]}" >"$work/$tag.out" 2>"$work/$tag.err"
		rc=$?
	else
		local budget_opt=() plan_opt=(--plan "$work/$MODEL.b$batch.$budget.plan") pre=() diag_opt=()
		local rpolicy=$policy
		[ "$policy" = plan-migrate ] && rpolicy=plan plan_opt[1]+=.migrate
		[ "$budget" != 0 ] && budget_opt=(--gpu-budget "$budget")
		[ "${KERNEL_TIMES:-0}" = 1 ] && diag_opt=(--kernel-times)
		case $exp in
		overhead-noplan) plan_opt=() ;;
		# PyTorch honours the variable whatever its value, and umreplay
		# sets it: the program's command unsets it.
		overhead-cached) plan_opt=() pre=(env -u PYTORCH_NO_CUDA_MEMORY_CACHING) ;;
		esac
		timeout "$RUN_LIMIT_S" "$rbuild/bin/umreplay" -q "${plan_opt[@]}" \
			--policy "$rpolicy" "${budget_opt[@]}" "${diag_opt[@]}" --max-managed "$maxm" \
			--stats "$work/stats/$MODEL.$tag.json" -- "${pre[@]}" "${cmd[@]}" >"$work/$tag.out" 2>"$work/$tag.err"
		rc=$?
		stats=(--stats "$work/stats/$MODEL.$tag.json")
	fi
	[ $rc -ne 0 ] && tail -3 "$work/$tag.err" >&2
	local refopt=()
	[ -n "$ref" ] && refopt=(--ref "$ref")
	python3 bench/measure.py "$csv" --out "$work/$tag.out" "${stats[@]}" "${refopt[@]}" --rc $rc \
		date="$date" gpu="$gpu" build="$(cat "$rbuild/COMMIT")" model="$MODEL" experiment="$exp" batch="$batch" w_bytes="$w" \
		ratio="$ratio" budget_bytes="$budget" policy="$policy" rep="$rep"
	echo "$MODEL $tag rc=$rc $(tail -1 "$csv" | cut -d, -f13-19)"
}

budget_at() { python3 -c "import sys; print(int(int(sys.argv[1]) / float(sys.argv[2])))" "$1" "$2"; }

# warm_up RATIO BUDGET: the command's warm-up replays, once per command.
warmed=0
warm_up() {
	[ "$warmed" = 1 ] && return
	warmed=1
	for rb in "${builds[@]}"; do
		for i in $(seq "$WARMUP"); do
			run warmup "$batch0" "$w" "$maxm" "$1" "$2" plan "$i" "" "$rb"
		done
	done
}

part() { [[ " $PARTS " == *" $1 "* ]]; }
variant() { [[ " ${OVERHEAD_VARIANTS:-cached noplan ideal plan} " == *" $1 "* ]]; }

if part base || part grid; then
	read -r w maxm < <(record "$batch0") || exit 1
	echo "$MODEL batch $batch0: W = $w bytes, --max-managed $maxm"
	plan "$batch0" 0 || exit 1
	roomy=$(budget_at "$w" 0.8)
	part base && { plan "$batch0" "$roomy" || exit 1; }
	if part grid; then
		declare -A budget
		for ratio in $RATIOS; do
			budget[$ratio]=$(budget_at "$w" "$ratio")
			plan "$batch0" "${budget[$ratio]}" || exit 1
		done
	fi
	# Outputs are compared with the first plain run (made here when base is
	# not run, under a name that is no run's: bench/pooled_steps.py would
	# take it for the grid's plain, run cold before the warm-up).
	ref=$work/grid.b$batch0.r0.plain.1.out
	if ! part base; then
		ref=$work/reference.b$batch0.out
		read -ra cmd < <(model_command "$MODEL" "$batch0")
		timeout "$RUN_LIMIT_S" "${cmd[@]}" >"$ref" 2>"$work/reference.err" ||
			{ echo "bench/suite.sh: the plain reference run failed (exit $?)" >&2; tail -3 "$work/reference.err" >&2; exit 1; }
	fi
	if part grid; then
		read -ra ratios <<<"$RATIOS"
		warm_up "${ratios[-1]}" "${budget[${ratios[-1]}]}"
	else
		warm_up 0.8 "$roomy"
	fi
	for rep in $(seq "$REPS"); do
		# With COMPARE, the build that goes first changes each round: in
		# session 34's A/Bs the build first in a round was the slower in 8
		# of 10 pairs, whichever build it was.
		k=$(((rep - 1) % ${#builds[@]}))
		order=("${builds[@]:k}" "${builds[@]:0:k}")
		if part base; then
			run grid "$batch0" "$w" "$maxm" 0 0 plain "$rep" "$ref"
			for rb in "${order[@]}"; do
				run grid "$batch0" "$w" "$maxm" 0 0 ideal "$rep" "$ref" "$rb"
				run grid "$batch0" "$w" "$maxm" 0.8 "$roomy" plan "$rep" "$ref" "$rb"
			done
		fi
		part grid || continue
		if ! part base; then
			for rb in "${order[@]}"; do
				run grid "$batch0" "$w" "$maxm" 0 0 ideal "$rep" "$ref" "$rb"
			done
		fi
		for ratio in $RATIOS; do
			for policy in $POLICIES; do
				for rb in "${order[@]}"; do
					run grid "$batch0" "$w" "$maxm" "$ratio" "${budget[$ratio]}" $policy "$rep" "$ref" "$rb"
				done
			done
		done
	done
fi

if part overhead; then
	[ -n "${w:-}" ] || read -r w maxm < <(record "$batch0") || exit 1
	roomy=$(budget_at "$w" 0.8)
	plan "$batch0" 0 && plan "$batch0" "$roomy" || exit 1
	steps0=$STEPS
	STEPS=$OVERHEAD_STEPS   # model_command's, for these runs only
	warm_up 0.8 "$roomy"
	ref=$work/overhead.b$batch0.r0.plain.1.out
	# A round's runs: EXPERIMENT RATIO BUDGET POLICY BUILD.
	rounds=("overhead 0 0 plain $BUILD")
	for rb in "${builds[@]}"; do
		variant cached && rounds+=("overhead-cached 0 0 ideal $rb")
		variant noplan && rounds+=("overhead-noplan 0 0 ideal $rb")
		variant ideal && rounds+=("overhead 0 0 ideal $rb")
		variant plan && rounds+=("overhead 0.8 $roomy plan $rb")
	done
	# Each round starts one place later, so no variant always runs first:
	# DLRM measured a run that does nothing per step at +9.4 % after plain
	# in every round, and at -10.0 % with the order rotated (session 30).
	for rep in $(seq "$REPS"); do
		for i in "${!rounds[@]}"; do
			read -r exp ratio budget policy rb <<<"${rounds[$(((i + rep - 1) % ${#rounds[@]}))]}"
			run "$exp" "$batch0" "$w" "$maxm" "$ratio" "$budget" "$policy" "$rep" "$ref" "$rb"
		done
	done
	STEPS=$steps0
fi

if part maxbatch; then
	[ -n "${w:-}" ] || read -r w maxm < <(record "$batch0") || exit 1
	fixed=$(budget_at "$w" 1.25)
	for mult in 2 3; do
		batch=$((batch0 * mult))
		read -r wb maxmb < <(record "$batch") || { echo "$MODEL batch $batch: not recorded" >&2; break; }
		plan "$batch" 0 && plan "$batch" "$fixed" || exit 1
		ratio=$(python3 -c "print(round($wb / $fixed, 2))")
		run maxbatch "$batch" "$wb" "$maxmb" 0 0 ideal 1 ""
		ref=$work/maxbatch.b$batch.r0.ideal.1.out
		for policy in ondemand plan; do
			run maxbatch "$batch" "$wb" "$maxmb" "$ratio" "$fixed" $policy 1 "$ref"
		done
	done
fi

tar -C "$work/stats" -czf "$OUTDIR/$MODEL-stats.tar.gz" .
(cd "$work" && tar -czf "$OUTDIR/$MODEL-outputs.tar.gz" -- *.out)
