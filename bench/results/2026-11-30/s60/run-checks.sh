# Session 60: the GPU checks on the build carried as build/, in two device
# commands on two H200s (the devices section needs both):
#   bash bench/results/2026-11-30/s60/run-checks.sh "devices record graphs demo"
#   bash bench/results/2026-11-30/s60/run-checks.sh "reset replay"
# The devices section first and apart, as in session 59, then the others
# through session 46's script (one archive per command).
sections=$1
case " $sections " in
*" devices "*)
	export LD_LIBRARY_PATH=$PWD/build/lib
	SECTIONS=devices timeout 120 bash tests/gpu/run.sh $OUT/dev > $OUT/devices.log 2>&1
	echo "rc=$? build $(cat build/COMMIT)" >> $OUT/devices.log
	tail -15 $OUT/devices.log
	find $OUT/dev -name '*.db' -delete
	tar czf $OUT/devices.tgz -C $OUT dev && rm -rf $OUT/dev
	sections=$(echo " $sections " | sed 's/ devices / /; s/^ *//; s/ *$//')
	;;
esac
bash bench/results/2026-11-29/s46/run-gpu-checks.sh "$sections"
