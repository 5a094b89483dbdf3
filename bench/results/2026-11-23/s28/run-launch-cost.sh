# Session 28: what a launch costs the program's thread (host time per PyTorch op on a tiny tensor):
# plain, PyTorch's cache off, under a trivial CUPTI subscriber (nothing enabled / launch callbacks on /
# on, then off inside the first launch's exit callback), and under umreplay (an idle plan: the DLRM
# fixture's, planned for 80G; and following every launch, --policy ideal without a plan). 3 rounds.
# Before the GPU command, here:
#   mkdir -p build-lead/lc && cp bench/results/2026-11-23/s28/launch-cost/launch_cost.py build-lead/lc/
#   gcc -shared -fPIC -O2 -I/usr/local/cuda/include -o build-lead/lc/cb_probe.so \
#     bench/results/2026-11-23/s28/launch-cost/cb_probe.c -L/usr/local/cuda/lib64 -lcupti \
#     -Wl,-rpath,/usr/local/cuda/lib64:/usr/local/cuda-13.0/targets/x86_64-linux/lib:/usr/local/cuda/targets/x86_64-linux/lib
#   build-lead/bin/umplan tests/fixtures/h100_dlrm.db --capacity 80G -q -o build-lead/lc/dlrm.plan
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-lead/lib PYTHONUNBUFFERED=1
L=build-lead/lc B=build-lead/bin
run() { # tag, command...
	local tag=$1; shift
	timeout 120 "$@" > $OUT/s/$tag.out 2>&1; echo "$tag rc=$? $(grep us_per_op $OUT/s/$tag.out | awk '{print $1, $4, $6}' | tr '\n' ' ') $(grep checksum $OUT/s/$tag.out)"
}
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv
for round in 1 2 3; do
	run plain.$round python3 $L/launch_cost.py 20000 7
	run nocache.$round env PYTORCH_NO_CUDA_MEMORY_CACHING=1 python3 $L/launch_cost.py 20000 7
	for m in none launch onoff; do
		run probe-$m.$round env LC_MODE=$m CUDA_INJECTION64_PATH=$PWD/$L/cb_probe.so python3 $L/launch_cost.py 20000 7
	done
	run idle.$round $B/umreplay -q --plan $L/dlrm.plan --policy plan --gpu-budget 8G --max-managed 8G --stats $OUT/s/idle.$round.json -- python3 $L/launch_cost.py 20000 7
	run follow.$round $B/umreplay -q --policy ideal --max-managed 8G --stats $OUT/s/follow.$round.json -- python3 $L/launch_cost.py 20000 7
done | tee $OUT/s/table.txt
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
