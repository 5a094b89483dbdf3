# Session 35: does the NUMA node a replay runs on explain why two plan
# replays of one build differ by up to 40 % on ViT-B/16 at W/B 2 (the same
# faults and traffic)? One recording and plan; REPS rounds of plan replays
# pinned with numactl to the GPU's node (local), to another node (remote),
# and unpinned (none), the order rotated each round. From the repository
# root on the GPU machine: bash THIS.
set -uo pipefail
REPS=${REPS:-3}
W=/tmp/s35-numa
. "$(dirname "$0")/vit-replays.sh"
bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1 | tr 'A-F' 'a-f' | sed 's/^0000//')
gpu_node=$(cat /sys/bus/pci/devices/0000$bus/numa_node 2>/dev/null || cat /sys/bus/pci/devices/$bus/numa_node 2>/dev/null)
nodes=$(ls -d /sys/devices/system/node/node* 2>/dev/null | sed 's/.*node//' | sort -n | tr '\n' ' ')
echo "GPU $bus on NUMA node ${gpu_node:-?}; nodes: $nodes; numactl: $(command -v numactl || echo none)"
for n in $nodes; do echo "node $n cpus $(cat /sys/devices/system/node/node$n/cpulist)"; done
other=$(for n in $nodes; do [ "$n" != "$gpu_node" ] && echo $n; done | head -1)
variants="none"
if command -v numactl >/dev/null && [ -n "${gpu_node:-}" ] && [ "$gpu_node" -ge 0 ]; then
	variants="local none"
	[ -n "$other" ] && variants="local remote none"
fi
record_and_plan
"${cmd[@]}" >"$W/plain.out" 2>&1
read -ra order <<<"$variants"
for rep in $(seq "$REPS"); do
	k=$(((rep - 1) % ${#order[@]}))
	for v in "${order[@]:k}" "${order[@]:0:k}"; do
		pin=()
		[ $v = local ] && pin=(numactl --cpunodebind=$gpu_node --membind=$gpu_node)
		[ $v = remote ] && pin=(numactl --cpunodebind=$other --membind=$other)
		replay_plan "$v.$rep" "${pin[@]}"
	done
done
tar czf "$OUT/all.tar.gz" -C "$OUT" s && rm -rf "$OUT/s"
