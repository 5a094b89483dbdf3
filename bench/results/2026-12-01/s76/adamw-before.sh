# Session 76: the AdamW examples with --cuda-graph as they were before
# 34fabf7 (common.adamw): a copy of examples/pytorch with gpt2.py's default
# AdamW put back, run small with --cuda-graph, then the same with this
# tree's gpt2.py; each one's exit status and the last line of its stderr.
#   bash bench/results/2026-12-01/s76/adamw-before.sh
old=$(mktemp -d)
cp examples/pytorch/*.py "$old"/
sed -i 's/common\.adamw(args, model)/torch.optim.AdamW(model.parameters(), lr=args.lr)/' "$old"/gpt2.py
grep -c 'torch.optim.AdamW' "$old"/gpt2.py
A=(--steps 6 --cuda-graph --n-layer 2 --n-embd 128 --n-head 2 --seq-len 64 --vocab-size 1000 --batch-size 4)
for tree in "$old" examples/pytorch; do
	python3 "$tree"/gpt2.py "${A[@]}" >"$OUT/adamw.out" 2>"$OUT/adamw.err"
	echo "$tree/gpt2.py --cuda-graph: exit $?, $(grep -c '^step ' "$OUT/adamw.out") steps; $(tail -n 1 "$OUT/adamw.err")"
done
rm -rf "$old"
