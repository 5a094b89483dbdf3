# Session 33: tests/gpu/run.sh on the build carried as build/ (23b2272).
# The stats files are in checks.txt (one line per JSON file), which
# tests/gpu/run.sh writes; the device returns a limited number of files.
export LD_LIBRARY_PATH=$PWD/build/lib
bash tests/gpu/run.sh $OUT > $OUT/run.log 2>&1
echo rc=$?
tail -95 $OUT/run.log
