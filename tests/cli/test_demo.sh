#!/usr/bin/env bash
# Command-line test for scripts/demo.sh (`make demo`) on a machine without a
# GPU: it plans every bundled fixture for half its working set, and must
# finish with status 0 however long the plans' dumps are (a dump piped into
# head died of SIGPIPE under pipefail and failed the demo).
source "$(dirname "$0")/lib.sh"
ROOT=$(realpath "$(dirname "$0")/../..")

# No GPU, whatever this machine has: nvidia-smi fails.
mkdir -p "$SCRATCH/nogpu"
printf '#!/bin/sh\nexit 9\n' >"$SCRATCH/nogpu/nvidia-smi"
chmod +x "$SCRATCH/nogpu/nvidia-smi"

run env PATH="$SCRATCH/nogpu:$PATH" DEMO_DIR="$SCRATCH/demo" bash "$ROOT/scripts/demo.sh" "${UMKIT_BUILD:-build}"
expect_status 0 "the demo without a GPU succeeds"
expect_out_has "no GPU here" "it says that it plans the bundled traces"
fixtures=("$FIXTURES"/*.db)
[ ${#fixtures[@]} -ge 9 ] && [ -f "${fixtures[0]}" ] && ok "the fixtures are unpacked (${#fixtures[@]})" \
	|| not_ok "the fixtures are unpacked (make fixtures): ${fixtures[*]}"
for t in "${fixtures[@]}"; do
	name=$(basename "$t" .db)
	if "$BIN/umplan" --dump "$SCRATCH/demo/$name.plan" >"$SCRATCH/dump" 2>/dev/null &&
		cmp -s "$SCRATCH/dump" "$SCRATCH/demo/$name.json"; then
		ok "$name: a valid plan, and its whole dump beside it"
	else
		not_ok "$name: a valid plan, and its whole dump beside it"
	fi
done
finish
