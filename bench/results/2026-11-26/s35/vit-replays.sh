# Sourced by run-numa.sh, run-first-slow.sh, run-spread.sh and s36/run-first-long.sh, from the
# repository root on the GPU machine, with W (a scratch folder) and OUT set:
# ViT-B/16 at its default batch (STEPS steps), record_and_plan for W/B 2,
# and replay_plan, one plan replay checked against $W/plain.out and
# summarised as a line of $OUT/s/table.txt.
MAXM=12G
export LD_LIBRARY_PATH=$PWD/build/lib
. bench/models.sh
read -ra cmd < <(model_command vit "$(default_batch vit)")
rm -rf "$W"; mkdir -p "$W" "$OUT/s"

record_and_plan() { # sets budget
	build/bin/umrec -q -o "$W/vit.db" --max-managed $MAXM -- "${cmd[@]}" >/dev/null 2>&1
	local w
	w=$(build/bin/umplan "$W/vit.db" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
	budget=$((w / 2))
	build/bin/umplan "$W/vit.db" --capacity $budget -o "$W/vit.plan" >/dev/null
}

replay_plan() { # TAG [PIN...]: PIN, a command to run the replay under
	local tag=$1 same=no
	shift
	"$@" build/bin/umreplay -q --plan "$W/vit.plan" --policy plan --gpu-budget $budget --max-managed $MAXM \
		--stats "$OUT/s/$tag.json" -- "${cmd[@]}" >"$W/$tag.out" 2>&1
	diff <(grep -E '^(checksum|step) ' "$W/plain.out") <(grep -E '^(checksum|step) ' "$W/$tag.out") >/dev/null && same=yes
	python3 - "$OUT/s/$tag.json" "$tag" $same <<'PY' | tee -a "$OUT/s/table.txt"
import json, sys
d = json.load(open(sys.argv[1])); m = d["measured"]
print("%-10s same=%s iteration_ms=%s faults=%s dtoh_MB=%s evict_call_ms=%.0f" % (sys.argv[2], sys.argv[3],
      [round(t / 1e6) for t in d["iteration_ns"]], [i["fault_migrations"] for i in m["iterations"]],
      [round(i["dtoh_bytes"] / 1e6) for i in m["iterations"]], m["host"]["driver_calls"]["evict"]["ns"] / 1e6))
PY
}
