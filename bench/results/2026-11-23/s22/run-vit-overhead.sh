# Session 22, command 3: where replay's cost goes when memory suffices, ViT-B/16, f7689c6
mkdir -p $OUT/s
t0=$(date +%s)
BUILD=build-lead REPS=3 RUN_LIMIT_S=90 bash bench/suite.sh vit $OUT/s overhead > $OUT/s/vit.log 2>&1
echo "vit rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/vit.log
tail -n 3 $OUT/s/vit.log
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
