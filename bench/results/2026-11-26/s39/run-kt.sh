# Session 39: (1) the BERT-large and GPT-2 fixtures recorded again, with the
# commands of tests/fixtures/README.md, by a recorder that keeps every
# pointer of a launch; (2) fault_sources with --kernel-times, which charges
# each fault as of its kernel's launch: ViT-B/16 and BERT-large planned for
# W/B 3 and replayed under plan, to set owner_changed beside session 38's
# diagnostic count (76.5 % of ViT's steady migrations, 0-0.5 % of BERT's).
# Usage, from the repository root on the GPU machine with build/ carried:
# bash THIS (after the GPU checks, which warm the machine up).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/build/lib PYTHONUNBUFFERED=1
S=$OUT/s39; W=/tmp/s39; rm -rf $W; mkdir -p $S $W/vit $W/bert
. bench/models.sh
build/bin/umrec -o $S/h100_gpt2_small.db --max-managed 8G -- python3 examples/pytorch/gpt2.py --n-layer 2 --n-embd 128 \
	--n-head 2 --seq-len 64 --batch-size 2 --vocab-size 1000 --steps 4 --nvtx >$S/gpt2.rec.out 2>$S/gpt2.rec.err
echo "gpt2 fixture rc=$?"
read -ra bert < <(model_command bert "$(default_batch bert)")
build/bin/umrec -o $S/h100_bert_large.db --max-managed 32G -- "${bert[@]}" >$S/bert.rec.out 2>$S/bert.rec.err
echo "bert fixture rc=$?"
tail -n 2 $S/*.rec.err
kt_replay() { # MODEL DIR COMMAND...: the plan in DIR replayed with --kernel-times
	local m=$1 d=$2; shift 2
	"$@" >$d/plain.out 2>&1
	build/bin/umreplay -q --plan $d/m.plan --policy plan --gpu-budget $budget --max-managed 12G --kernel-times \
		--stats $S/$m.kt.json -- "$@" >$d/kt.out 2>&1
	local rc=$? same=no
	diff <(grep -E '^(checksum|step) ' $d/plain.out) <(grep -E '^(checksum|step) ' $d/kt.out) >/dev/null && same=yes
	echo "$m W/B 3 plan --kernel-times: rc=$rc same=$same budget=$budget" | tee -a $S/table.txt
	python3 bench/fault_report.py $S/$m.kt.json --plan $d/m.plan | head -8 | tee -a $S/table.txt
}
read -ra vit < <(model_command vit "$(default_batch vit)")
record_and_plan build/bin $W/vit 3 12G "${vit[@]}" && kt_replay vit $W/vit "${vit[@]}"
cp $S/h100_bert_large.db $W/bert/m.db
htod=${htod:-$(python3 tests/gpu/calibrate.py 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["htod_gbps"])')}
w=$(build/bin/umplan $W/bert/m.db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
budget=$(python3 -c "print(int($w / 3))")
build/bin/umplan $W/bert/m.db --capacity $budget --htod-bw $htod -q -o $W/bert/m.plan && kt_replay bert $W/bert "${bert[@]}"
tar czf $OUT/s39.tar.gz -C $OUT s39 && rm -rf $S
