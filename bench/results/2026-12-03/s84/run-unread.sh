# Session 84, on the GPU: how much of what the plan evicts is freed off
# the GPU, never read back (engine.unread_evicted_blocks), on the models
# of bench/models.sh at W/B 2: each recorded once, planned for half its
# live peak and replayed once under plan beside a plain run; prints the
# steady iterations' means.
#   OUT=$OUT bash bench/results/2026-12-03/s84/run-unread.sh
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/build/lib PYTHONUNBUFFERED=1
. bench/models.sh
W=/tmp/unread; rm -rf $W; mkdir -p $W $OUT/unread
for m in $MODELS; do
	read -ra cmd < <(model_command $m $(default_batch $m))
	"${cmd[@]}" >$W/$m.plain 2>&1 || { tail -3 $W/$m.plain; continue; }
	build/bin/umrec -q -o $W/$m.db --max-managed 32G -- "${cmd[@]}" >/dev/null 2>$W/$m.rec.err ||
		{ tail -3 $W/$m.rec.err; continue; }
	w=$(build/bin/umplan $W/$m.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
	maxm=$(((2 * w + (1 << 30) - 1) >> 30))G b=$((w / 2))
	build/bin/umplan $W/$m.db --capacity $b -q -o $W/$m.plan || continue
	build/bin/umreplay -q --plan $W/$m.plan --policy plan --gpu-budget $b --max-managed $maxm \
		--stats $OUT/unread/$m.json -- "${cmd[@]}" >$W/$m.out 2>$W/$m.err
	rc=$?
	same=no
	diff <(grep -E '^(checksum|step|loss)' $W/$m.plain) <(grep -E '^(checksum|step|loss)' $W/$m.out) >/dev/null &&
		[ $rc -eq 0 ] && same=yes
	python3 - $OUT/unread/$m.json $m $same <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1])); its = d["measured"]["iterations"][1:]
mean = lambda k: statistics.mean(i[k] for i in its)
print(f"{sys.argv[2]} W/B 2: same output {sys.argv[3]}, step {d['iteration_median_ns'] / 1e6:.1f} ms, per steady iteration "
      f"({len(its)}): DtoH {mean('dtoh_bytes') / 1e6:.0f} MB, HtoD {mean('htod_bytes') / 1e6:.0f} MB, "
      f"unread evicted {mean('unread_evicted_blocks') * 2.097152:.0f} MB; whole run: evicted "
      f"{d['engine']['ops']['evict']['bytes'] / 1e6:.0f} MB, unread {d['engine']['unread_evicted_blocks'] * 2.097152:.0f} MB "
      f"({d['engine']['unread_evicted_budget_blocks'] * 2.097152:.0f} by the budget)")
PY
done
