# Session 30: where DLRM's idle-replay overhead goes once PyTorch's cache is kept. REPS (5) interleaved rounds
# of 200-step runs, each round in the order VARIANTS gives, rotated by one more place each round when ROTATE=1: plain; umreplay --policy plan at B = 1.25 W (this build: idle, cache kept); the same from
# a diagnostic build (diag.patch: build-lead/diag) without the residency sampler (DIAG_NO_SAMPLER=1); without
# any CUPTI subscription, hence no launch callbacks and no sampler (DIAG_NO_CALLBACKS=1); and that with the
# arena over device memory instead of managed (the child command sets UMKIT_NO_MANAGED=1).
mkdir -p $OUT/s/runs $OUT/s/stats
export LD_LIBRARY_PATH=$PWD/build-lead/lib PYTHONUNBUFFERED=1
B=build-lead/bin D=build-lead/diag/bin
. bench/models.sh
roomy_plan $B dlrm $OUT/s || exit 1
STEPS=200; read -ra cmd < <(model_command dlrm 4096)
replay() { # VARIANT BIN [ENV...] -- [CHILD PREFIX...]
	local v=$1 bin=$2; shift 2
	local envs=(); while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
	env "${envs[@]}" $bin/umreplay -q --plan $OUT/s/dlrm.plan --policy plan --gpu-budget $budget --max-managed $maxm \
		--stats $OUT/s/stats/$v.$rep.json -- "$@" "${cmd[@]}" > $OUT/s/runs/overhead.b4096.r0.8.plan.$rep.$v.out 2>&1
	echo "rep $rep $v rc=$?"
}
one() {
	case $1 in
	plain) "${cmd[@]}" > $OUT/s/runs/overhead.b4096.r0.plain.$rep.out 2>/dev/null ;;
	cachekept) replay cachekept $B -- ;;
	nosampler) replay nosampler $D DIAG_NO_SAMPLER=1 -- ;;
	nocupti) replay nocupti $D DIAG_NO_CALLBACKS=1 -- ;;
	nocupti-devmem) replay nocupti-devmem $D DIAG_NO_CALLBACKS=1 -- env UMKIT_NO_MANAGED=1 ;;
	esac
}
read -ra variants <<<"${VARIANTS:-plain cachekept nosampler nocupti nocupti-devmem}"
for rep in $(seq ${REPS:-5}); do
	k=0; [ "${ROTATE:-0}" = 1 ] && k=$(( (rep - 1) % ${#variants[@]} ))
	for i in "${!variants[@]}"; do
		one "${variants[$(( (i + k) % ${#variants[@]} ))]}"
	done
done
python3 bench/pooled_steps.py $OUT/s/runs
rm -f $OUT/s/dlrm.db
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
