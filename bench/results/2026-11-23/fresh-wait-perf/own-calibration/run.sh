mkdir -p $OUT/s/new $OUT/s/old
t0=$(date +%s)
. bench/models.sh
for m in bert resnet152; do
BUILD=build-lead RATIOS="2" POLICIES="plan" REPS=2 RUN_LIMIT_S=90 bash bench/suite.sh $m $OUT/s/new grid > $OUT/s/new/$m.log 2>&1
echo "$m rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/new/$m.log
done
# The old build replays the same traces: each under the old recorder's cache key.
for m in bert resnet152; do
  for f in /tmp/umkit-bench-traces/$m.b*.db; do
    tag=$(basename $f | cut -d. -f1-2); b=${tag#*.b}
    read -ra cmd < <(model_command "$m" "$b")
    key=$( (md5sum <build-diag/lib/libumrec.so; echo "${cmd[*]}") | md5sum | cut -c1-16)
    [ -e /tmp/umkit-bench-traces/$tag.$key.db ] || cp $f /tmp/umkit-bench-traces/$tag.$key.db
  done
done
for m in bert resnet152; do
BUILD=build-diag RATIOS="2" POLICIES="plan" REPS=2 RUN_LIMIT_S=90 bash bench/suite.sh $m $OUT/s/old grid > $OUT/s/old/$m.log 2>&1
echo "$m rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/old/$m.log
done

tail -n 3 $OUT/s/*/*.log
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
