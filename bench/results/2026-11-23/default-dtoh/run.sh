# ViT-B/16 and ResNet-152 at W/B 2 under plan with the suite's plans at umplan's default eviction bandwidth (c60ad8f's replayer)
mkdir -p $OUT/s
t0=$(date +%s)
for m in vit resnet152; do
BUILD=build-lead RATIOS="2" POLICIES="plan" REPS=2 RUN_LIMIT_S=90 bash bench/suite.sh $m $OUT/s grid > $OUT/s/$m.log 2>&1
echo "$m rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/s/$m.log
done
grep -h "rc=" $OUT/s/*.log | tail -n 30
tar czf $OUT/all.tar.gz -C $OUT s && rm -rf $OUT/s
