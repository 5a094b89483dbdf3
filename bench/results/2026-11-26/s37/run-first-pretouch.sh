# Session 37: is the slow first replay the VM backing host memory that no
# process touched before? The first replay of a command is the first to
# evict gigabytes (its host pages are fresh); the recording and the plain
# run evict nothing. Here TOUCH_GB (16) of host memory is written twice
# through /dev/shm (each timed) before ViT-B/16 at W/B 2, STEPS (15) steps,
# is recorded, planned and replayed twice (the plain program first).
# From the repository root on the GPU machine: bash THIS.
set -uo pipefail
W=/tmp/s37-touch
STEPS=${STEPS:-15}
TOUCH_GB=${TOUCH_GB:-16}
. "$(dirname "$0")/../s35/vit-replays.sh"
for pass in 1 2; do
	t0=$(date +%s%N)
	dd if=/dev/zero of=/dev/shm/umkit-touch bs=1M count=$((TOUCH_GB * 1024)) status=none
	echo "writing $TOUCH_GB GB of host memory, pass $pass: $((($(date +%s%N) - t0) / 1000000)) ms" | tee -a "$OUT/s/table.txt"
	rm -f /dev/shm/umkit-touch
done
"${cmd[@]}" >"$W/plain.out" 2>&1
record_and_plan
for rep in 1 2; do
	replay_plan "touched.$rep"
done
tar czf "$OUT/all.tar.gz" -C "$OUT" s && rm -rf "$OUT/s"
