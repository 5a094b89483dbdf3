# Session 37: is the slow first replay the VM backing host memory that no
# process touched before? The first replay of a command is the first to
# evict gigabytes (its host pages are fresh); the recording and the plain
# run evict nothing. Here a process writes a byte in every page of
# TOUCH_GB (16) of anonymous memory, twice (each timed), before ViT-B/16 at
# W/B 2, STEPS (15) steps, is recorded, planned and replayed twice (the
# plain program first). TOUCH_GB=0 touches nothing: the control.
# From the repository root on the GPU machine: bash THIS.
set -uo pipefail
W=/tmp/s37-touch
STEPS=${STEPS:-15}
TOUCH_GB=${TOUCH_GB:-16}
. "$(dirname "$0")/../s35/vit-replays.sh"
for pass in $( [ "$TOUCH_GB" -gt 0 ] && echo 1 2); do
	python3 - "$TOUCH_GB" "$pass" <<'PY' | tee -a "$OUT/s/table.txt"
import mmap, sys, time
size = int(sys.argv[1]) << 30
t0 = time.perf_counter()
m = mmap.mmap(-1, size)
for i in range(0, size, 4096):
    m[i] = 1
print("writing %s GB of host memory, pass %s: %.0f ms" % (sys.argv[1], sys.argv[2], (time.perf_counter() - t0) * 1e3))
PY
done
"${cmd[@]}" >"$W/plain.out" 2>&1
record_and_plan
for rep in 1 2; do
	replay_plan "touched.$rep"
done
tar czf "$OUT/all.tar.gz" -C "$OUT" s && rm -rf "$OUT/s"
