# Session 33: BERT-large and ResNet-152 recorded as the suite records them
# (bench/models.sh, default batch, 5 steps), traces returned compressed for
# offline replays of the engine (umreplay --dry-run).
set -uo pipefail
. bench/models.sh
export LD_LIBRARY_PATH=$PWD/build-late/lib
for m in bert resnet152; do
	read -ra cmd < <(model_command $m $(default_batch $m))
	t0=$(date +%s)
	build-late/bin/umrec -q -o /tmp/$m.db --max-managed 32G -- "${cmd[@]}" > /tmp/$m.out 2>&1
	echo "$m rc=$? $(( $(date +%s) - t0 )) s $(stat -c %s /tmp/$m.db) bytes"
	zstd -q -19 -T0 /tmp/$m.db -o $OUT/$m.db.zst
done
ls -la $OUT
