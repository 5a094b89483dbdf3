# Session 22, command 4: where replay's cost goes when memory suffices, GPT-2 small, f7689c6
mkdir -p $OUT/s
BUILD=build-lead REPS=3 RUN_LIMIT_S=90 bash bench/suite.sh gpt2 $OUT/s overhead > $OUT/s/gpt2.log 2>&1
