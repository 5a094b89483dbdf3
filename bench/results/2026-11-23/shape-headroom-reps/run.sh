mkdir -p $OUT/s/new $OUT/s/old
t0=$(date +%s)
. bench/models.sh
run() { # build outdir model steps
  STEPS=$4 BUILD=$1 RATIOS="2" POLICIES="plan" REPS=3 RUN_LIMIT_S=90 bash bench/suite.sh $3 $2 grid > $2/$3.log 2>&1
  echo "$3 rc=$? $(( $(date +%s) - t0 )) s" >> $2/$3.log
}
run build-lead $OUT/s/new vit 5
run build-lead $OUT/s/new dlrm 20
for m in vit dlrm; do
  for f in /tmp/umkit-bench-traces/$m.b*.db; do
    tag=$(basename $f | cut -d. -f1-2); b=${tag#*.b}
    st=5; [ $m = dlrm ] && st=20
    read -ra cmd < <(STEPS=$st model_command "$m" "$b")
    key=$( (md5sum <build-old/lib/libumrec.so; echo "${cmd[*]}") | md5sum | cut -c1-16)
    [ -e /tmp/umkit-bench-traces/$tag.$key.db ] || cp $f /tmp/umkit-bench-traces/$tag.$key.db
  done
done
run build-old $OUT/s/old vit 5
run build-old $OUT/s/old dlrm 20
ls /tmp/umkit-bench-traces/
tail -n 8 $OUT/s/*/*.log
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
