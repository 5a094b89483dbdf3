# Session 84, on the GPU: does the GPU compute while the driver migrates
# (tests/gpu/um_costs.py overlap_ms), and which call ends the one stream
# order in ViT-B/16 and ResNet-50 under umrec, whose allocations then wait
# for fences (UMKIT_LOG=debug names it), beside a convolution and a linear
# layer trained alone.
#   OUT=$OUT bash bench/results/2026-12-03/s84/run-probes.sh
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/build/lib PYTHONUNBUFFERED=1
mkdir -p $OUT/probes
timeout 150 python3 tests/gpu/um_costs.py 1 overlap_ms >$OUT/probes/overlap.json 2>$OUT/probes/overlap.err
echo "overlap_ms: exit $?"
layer() { # MODULE: a layer trained alone, two steps
	echo "import torch
m = torch.nn.$1.cuda()
x = torch.randn(8, 3, 64, 64, device='cuda')
for _ in range(2):
    m(x).sum().backward()
torch.cuda.synchronize()
print('done')"
}
for case in conv linear vit resnet50; do
	case $case in
	conv) cmd=(python3 -c "$(layer 'Conv2d(3, 64, 7, stride=2)')") ;;
	linear) cmd=(python3 -c "$(layer 'Linear(64, 64)')") ;;
	vit) cmd=(python3 examples/pytorch/vit.py --steps 2 --batch-size 8) ;;
	resnet50) cmd=(python3 examples/pytorch/resnet.py --depth 50 --steps 2 --batch-size 8) ;;
	esac
	UMKIT_LOG=debug timeout 150 build/bin/umrec -o /tmp/$case.db --max-managed 16G -- "${cmd[@]}" \
		>$OUT/probes/$case.out 2>/tmp/$case.err
	rc=$?
	grep -m5 "second stream" /tmp/$case.err >$OUT/probes/$case.order-ends
	tail -5 /tmp/$case.err >$OUT/probes/$case.err-tail
	echo "$case: exit $rc; $(wc -l </tmp/$case.err) debug lines; $(head -1 $OUT/probes/$case.order-ends)"
done
python3 - $OUT/probes/overlap.json <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))["overlap_ms"]
print("bump", o["bump_ms"], "ms x", o["bumps"], "; MB moved", o["bytes_each"] >> 20)
for way in ("evict", "prefetch"):
    for case, rows in o[way].items():
        print(f"{way:8} {case:14}", " | ".join(", ".join(f"{k} {v}" for k, v in r.items()) for r in rows))
PY
