# bench/models.sh: the models of the benchmark suite (sourced by bench/suite.sh).
# model_command MODEL BATCH prints the command line that trains MODEL with
# BATCH samples per step; default_batch MODEL the batch the suite's grid uses.
# Sizes were chosen so W (the live peak umplan reports) is a few GB. A run
# costs 15-20 s of start-up alone (imports; transformers' takes most), so a
# model's suite needs several GPU commands: on the H100, "base grid" at two
# ratios took 508 s for gpt2 and 370 s for resnet152.
MODELS="gpt2 bert vit resnet152 dlrm"
STEPS=${STEPS:-5}   # the first is warm-up; the median of the others is reported

default_batch() {
	case $1 in
	gpt2) echo 4 ;;      # GPT-2 small: 12 x 768, 124 M parameters, 512 tokens
	bert) echo 8 ;;      # BERT-large: 24 x 1024, 335 M parameters, 128 tokens
	vit) echo 32 ;;      # ViT-B/16: 86 M parameters, 224 x 224 images
	resnet152) echo 16 ;;
	dlrm) echo 4096 ;;   # 8 tables x 2 M rows x 64: 4 GB of embeddings
	*) return 1 ;;
	esac
}

model_command() {
	local py=examples/pytorch common=(--steps $STEPS --nvtx --batch-size "$2")
	case $1 in
	gpt2) echo python3 $py/gpt2.py --n-layer 12 --n-embd 768 --n-head 12 --seq-len 512 "${common[@]}" ;;
	bert) echo python3 $py/bert.py --seq-len 128 "${common[@]}" ;;
	vit) echo python3 $py/vit.py --arch vit_base_patch16_224 "${common[@]}" ;;
	resnet152) echo python3 $py/resnet.py --depth 152 "${common[@]}" ;;
	dlrm) echo python3 $py/dlrm.py --rows 2000000 "${common[@]}" ;;
	*) return 1 ;;
	esac
}

# roomy_plan BIN MODEL DIR: records MODEL's 5-step run (its default batch)
# with BIN/umrec into DIR/MODEL.db and plans it for B = 1.25 W into
# DIR/MODEL.plan: memory suffices, so a replay of it stays idle. Sets w (W,
# the live peak, in bytes), budget (B) and maxm (2 W rounded up to GiB, for
# --max-managed), and prints them.
roomy_plan() {
	local bin=$1 m=$2 dir=$3 cmd
	read -ra cmd < <(STEPS=5 model_command $m $(default_batch $m))
	$bin/umrec -q -o $dir/$m.db --max-managed 32G -- "${cmd[@]}" > $dir/rec.out 2> $dir/rec.err ||
		{ tail -3 $dir/rec.err; return 1; }
	w=$($bin/umplan $dir/$m.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
	budget=$((w * 5 / 4)); maxm=$(((2 * w + (1 << 30) - 1) >> 30))G
	$bin/umplan $dir/$m.db --capacity $budget -q -o $dir/$m.plan || return 1
	echo "W=$w budget=$budget max-managed=$maxm"
}

# record_and_plan BIN DIR RATIO MAXM COMMAND...: records COMMAND with
# BIN/umrec under --max-managed MAXM into DIR/m.db and plans it into
# DIR/m.plan for B = W / RATIO, at the host-to-device speed
# tests/gpu/calibrate.py measures (or $htod, if set). Sets w (W, the live
# peak, in bytes), budget (B) and htod; the A/B scripts of bench/results
# start with it, and bench/overhead_lockstep.sh with RATIO.
record_and_plan() {
	local bin=$1 dir=$2 ratio=$3 maxm=$4
	shift 4
	$bin/umrec -q -o $dir/m.db --max-managed $maxm -- "$@" >$dir/rec.out 2>$dir/rec.err ||
		{ tail -3 $dir/rec.err; return 1; }
	w=$($bin/umplan $dir/m.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
	budget=$(python3 -c "print(int($w / $ratio))")
	htod=${htod:-$(python3 tests/gpu/calibrate.py 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["htod_gbps"])')}
	$bin/umplan $dir/m.db --capacity $budget --htod-bw $htod -q -o $dir/m.plan
}

# dlrm_half_plan DIR STEPS: DLRM (batch 4096) recorded for 5 steps and
# planned for B = W / 2 in DIR (record_and_plan), as sessions 69 and 70's
# scripts in bench/results do. Sets what record_and_plan sets, maxm (2 W
# rounded up to GiB, for --max-managed) and the array cmd, DLRM for STEPS
# steps, and prints W, B and the host-to-device speed.
dlrm_half_plan() {
	local rec
	mkdir -p "$1"
	read -ra rec < <(STEPS=5 model_command dlrm 4096)
	record_and_plan build/bin "$1" 2 32G "${rec[@]}" || return 1
	maxm=$(((2 * w + (1 << 30) - 1) >> 30))G
	echo "W=$w budget=$budget htod=$htod"
	read -ra cmd < <(STEPS=$2 model_command dlrm 4096)
}
