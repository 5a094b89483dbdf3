P=build/gpu-probes/fence_probe
for side in old new; do
  B=carry/$side/bin
  echo "== $side umrec"; timeout 60 $B/umrec -q -o /tmp/mhw.$side.db --max-managed 8G -- $P managed-host-write; echo "rc $?"
  echo "== $side umreplay ondemand"; timeout 60 $B/umreplay --policy ondemand --max-managed 8G -q -- $P managed-host-write; echo "rc $?"
done
echo "== plain"; timeout 60 $P managed-host-write; echo "rc $?"
