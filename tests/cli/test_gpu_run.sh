#!/usr/bin/env bash
# test_gpu_run.sh: what tests/gpu/run.sh refuses before it touches the GPU,
# with status 2 and the reason named: a misspelt section, case or ratio, a
# replay section with no case or no ratio, or no section at all (each
# would check nothing and pass), and a tool that does not start where it
# runs (a library missing on the GPU machine, which would fail every check
# alike). With what it
# needs, it gets as far as the GPU's free memory, which a fake nvidia-smi
# first on PATH puts at 0 MiB, so that it never runs a check on a machine
# with a GPU either: status 1.
source "$(dirname "$0")/lib.sh"
ROOT=$(realpath "$(dirname "$0")/../..")
GPU_RUN=$ROOT/tests/gpu/run.sh
BUILD_DIR=$(realpath "${UMKIT_BUILD:-build}")

mkdir -p "$SCRATCH/fake"
printf '#!/bin/sh\necho 0\n' >"$SCRATCH/fake/nvidia-smi"
chmod +x "$SCRATCH/fake/nvidia-smi"
PATH=$SCRATCH/fake:$PATH

# gpu_run [VAR=VALUE...]: run.sh from the checkout's root on BUILD_DIR,
# its output in the scratch folder.
gpu_run() {
	run env BUILD="$BUILD_DIR" "$@" bash "$GPU_RUN" "$SCRATCH/gpu-out"
}
cd "$ROOT"

gpu_run SECTIONS="record replya"
expect_status 2 "run.sh: a misspelt section is refused"
expect_err_has "gpu: unknown section 'replya'" "run.sh: the misspelt section named"

gpu_run SECTIONS=replay CASES="sim mpl"
expect_status 2 "run.sh: a misspelt case is refused"
expect_err_has "gpu: unknown case 'mpl'" "run.sh: the misspelt case named"

gpu_run SECTIONS=replay RATIOS="1.5 two"
expect_status 2 "run.sh: a ratio that is no number is refused"
expect_err_has "gpu: 'two' is no W/B ratio" "run.sh: the bad ratio named"

gpu_run SECTIONS=replay CASES=" "
expect_status 2 "run.sh: the replay section with no case is refused"
expect_err_has "gpu: the replay section needs a case and a ratio" "run.sh: no case, said"
expect_err_lacks "command not found" "run.sh: its functions defined before their use"

gpu_run SECTIONS=replay RATIOS=" "
expect_status 2 "run.sh: the replay section with no ratio is refused"
expect_err_has "gpu: the replay section needs a case and a ratio" "run.sh: no ratio, said"

# Set empty, as a script passing on its own empty argument would: refused,
# not the defaults.
gpu_run SECTIONS=replay CASES=
expect_status 2 "run.sh: an empty CASES is refused"
expect_err_has "gpu: the replay section needs a case and a ratio" "run.sh: an empty CASES, said"

gpu_run SECTIONS=replay RATIOS=
expect_status 2 "run.sh: an empty RATIOS is refused"
expect_err_has "gpu: the replay section needs a case and a ratio" "run.sh: an empty RATIOS, said"

gpu_run SECTIONS=
expect_status 2 "run.sh: an empty SECTIONS is refused"
expect_err_has "gpu: SECTIONS names no section" "run.sh: an empty SECTIONS, said"

# A build whose umplan cannot load a library, as the loader says it.
broken=$SCRATCH/broken
mkdir -p "$broken/bin"
for t in umrec umreplay; do ln -s "$BUILD_DIR/bin/$t" "$broken/bin/$t"; done
printf '#!/bin/sh\necho "umplan: error while loading shared libraries: libcjson.so.1: cannot open shared object file" >&2\nexit 127\n' >"$broken/bin/umplan"
chmod +x "$broken/bin/umplan"
run env BUILD="$broken" SECTIONS=record bash "$GPU_RUN" "$SCRATCH/gpu-out"
expect_status 2 "run.sh: a tool that does not start stops it"
expect_err_has "gpu: $broken/bin/umplan does not start: umplan: error while loading shared libraries: libcjson.so.1" \
	"run.sh: the tool and the loader's reason named"
expect_err_has "copy what it lacks into $broken/lib" "run.sh: where the library goes, said"

# Everything in order: it goes on to the GPU's free memory.
gpu_run SECTIONS=record
expect_status 1 "run.sh: with its tools and arguments in order, it goes as far as the GPU"
expect_out_has "GPU free: 0 MiB" "run.sh: the free memory read"
expect_out_has "refusing to run: less than 16 GiB free on the GPU" "run.sh: too little free, refused"

exit $((failures > 0))
