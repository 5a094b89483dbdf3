# Session 36, no GPU: how much of a plan's eviction traffic host placement
# could take if iteration tensors (activations, temporaries) qualified
# under the rules persistent ones do (1-3 uses, no re-reading kernel, a
# pass cheaper than an eviction and a prefetch, whole 2 MB blocks).
# Builds host-census.patch (a census printed by plan/host.c) in a
# worktree, plans the fixtures at W/B 2 and 3, and sums the evict and
# prefetch ops on such tensors. Run from the repository root.
set -e
here=$(pwd); wt=$(mktemp -d /tmp/umkit-census.XXXXXX)
git worktree add -q "$wt/src" HEAD
trap 'git worktree remove --force "$wt/src"; rm -rf "$wt"' EXIT
(cd "$wt/src" && git apply "$here/bench/results/2026-11-26/s36/host-census.patch" && make -s all >/dev/null)
B=$wt/src/build/bin
for f in vit_varying_ids bert_large mlp train_sim; do
	db=tests/fixtures/h100_$f.db
	w=$($B/umplan $db --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["live_peak"])')
	for r in 2 3; do
		$B/umplan $db --capacity $((w / r)) -q -o $wt/p.plan 2>$wt/census.txt
		$B/umplan --dump $wt/p.plan >$wt/p.json
		python3 - $f $r $wt <<'PY'
import json, sys
f, r, wt = sys.argv[1:]
el = {int(l.split()[1]) for l in open(f"{wt}/census.txt") if l.startswith("eligible")}
ops = json.load(open(f"{wt}/p.json"))["ops"]
mb = lambda kind, only: sum(o["bytes"] for o in ops if o["kind"] == kind and (not only or o["alloc"] in el)) / 1e6
print(f"{f} W/B {r}: evicted {mb('evict', 0):.0f} MB, {mb('evict', 1):.0f} MB of them on qualifying iteration tensors; "
      f"prefetched {mb('prefetch', 0):.0f} MB, {mb('prefetch', 1):.0f} MB")
PY
	done
done
