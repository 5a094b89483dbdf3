# Session 29: DLRM's replay overhead when memory suffices (plain against plan at B = 1.25 W, idle), 200-step runs,
# with and without pinning every process to 4 CPUs of the GPU's NUMA node (taskset), REPS interleaved pairs each;
# and um_costs.py's dependent part (event records on a stream waiting for a deferred eviction).
mkdir -p $OUT/s
export LD_LIBRARY_PATH=$PWD/build-lead/lib
bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1 | sed 's/^0000//' | tr 'A-F' 'a-f')
local_cpus=$(cat /sys/bus/pci/devices/$bus/local_cpulist 2>/dev/null)
echo "GPU $bus local CPUs: ${local_cpus:-unknown}; $(nproc) CPUs" | tee $OUT/s/cpus.txt
lscpu | grep -iE "numa|model name|mhz" >> $OUT/s/cpus.txt
first=$(echo ${local_cpus:-0-15} | cut -d, -f1 | cut -d- -f1)
pin="$((first + 2))-$((first + 5))"
(cd tests/gpu && timeout 120 python3 um_costs.py 1 dependent) > $OUT/s/um_costs_dependent.json 2>&1
cat $OUT/s/um_costs_dependent.json
for mode in free pinned; do
	mkdir -p $OUT/s/$mode
	pre=(); [ $mode = pinned ] && pre=(taskset -c $pin)
	t0=$(date +%s)
	OVERHEAD_VARIANTS=plan REPS=${REPS:-5} OVERHEAD_STEPS=${STEPS:-200} BUILD=build-lead timeout ${LIMIT:-250} "${pre[@]}" bash bench/suite.sh dlrm $OUT/s/$mode overhead > $OUT/s/$mode/dlrm.log 2>&1
	echo "$mode (${pre[*]}): rc=$? $(( $(date +%s) - t0 )) s" | tee -a $OUT/s/$mode/dlrm.log
	python3 bench/pooled_steps.py $OUT/s/$mode/dlrm-outputs.tar.gz
done
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
