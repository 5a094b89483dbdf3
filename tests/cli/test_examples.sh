#!/usr/bin/env bash
# Command-line tests for the PyTorch examples (examples/pytorch) without
# torch or a GPU: a stand-in torch package on PYTHONPATH lets a script parse
# its arguments and set up; building the model ends the run (status 0, the
# line "stand-in torch: model built"). Checked: options that do not go
# together, --steps below 1, a --turn-fds descriptor not open, a --device
# that is not cuda or cpu and dlrm.py's MLP sizes below 1 are usage errors;
# a CUDA device not there, and a --managed-allocator library missing or
# without its functions, are named; the config line prints --turn-fds as
# 3,4, a value with a space quoted, and its common keys in the order
# examples/README.md gives; the AdamW the transformer examples make is
# capturable only for a GPU graph.
source "$(dirname "$0")/lib.sh"
ROOT=$(realpath "$(dirname "$0")/../..")
EX=$ROOT/examples/pytorch
export PYTHONDONTWRITEBYTECODE=1

# The stand-in: torch.device parses as torch's does (RuntimeError on a bad
# string); STANDIN_GPUS CUDA devices (default none); the pluggable allocator
# loads its library with ctypes, as torch's does.
mkdir -p "$SCRATCH/standin/torch"
cat >"$SCRATCH/standin/torch/__init__.py" <<'PY'
import ctypes, os, re, sys, types


class device:
    def __init__(self, spec):
        m = re.fullmatch(r"(cpu|cuda|meta)(?::(\d+))?", str(spec))
        if not m:
            raise RuntimeError("Invalid device string: '%s'" % spec)
        self.type, self.index = m[1], None if m[2] is None else int(m[2])

    def __str__(self):
        return self.type if self.index is None else "%s:%d" % (self.type, self.index)


class OutOfMemoryError(RuntimeError):
    pass


class _PluggableAllocator:
    def __init__(self, path, alloc, free):
        lib = ctypes.CDLL(path)
        getattr(lib, alloc), getattr(lib, free)


def _gpus():
    return int(os.environ.get("STANDIN_GPUS", "0"))


cuda = types.SimpleNamespace(
    is_available=lambda: _gpus() > 0, device_count=_gpus, OutOfMemoryError=OutOfMemoryError,
    memory=types.SimpleNamespace(CUDAPluggableAllocator=_PluggableAllocator,
                                 change_current_allocator=lambda a: None))
backends = types.SimpleNamespace(cudnn=types.SimpleNamespace())


def manual_seed(seed):
    pass


def use_deterministic_algorithms(on):
    pass


def no_grad():
    return lambda f: f


class optim:
    class AdamW:
        """Prints how it was made; PyTorch asserts at the first step that
        a capturable one is on a GPU."""
        def __init__(self, params, **kwargs):
            print("AdamW %s" % " ".join("%s=%s" % kv for kv in sorted(kwargs.items())))
PY
cat >"$SCRATCH/standin/torch/nn.py" <<'PY'
import sys


class Module:
    def __init__(self, *args, **kwargs):
        print("stand-in torch: model built", flush=True)
        sys.exit(0)


Linear = ReLU = Sequential = ModuleList = EmbeddingBag = Module
CrossEntropyLoss = BCEWithLogitsLoss = Module
PY
export PYTHONPATH=$SCRATCH/standin
# A library with the two functions --managed-allocator looks up.
printf 'void *umkit_managed_malloc(void) { return 0; }\nvoid umkit_managed_free(void) {}\n' >"$SCRATCH/alloc.c"
cc -shared -fPIC -o "$SCRATCH/alloc.so" "$SCRATCH/alloc.c" || { status=-; out=; err=; not_ok "cc built a stand-in allocator library"; finish; }
LIB=$SCRATCH/alloc.so

# built SCRIPT DESC: the script parsed its arguments, set up, and built its model.
built() {
	if [ "$status" -eq 0 ] && grep -qxF "stand-in torch: model built" <<<"$out"; then ok "$1"; else not_ok "$1"; fi
}
# refused DESC TEXT: a usage error (status 2) saying TEXT, no traceback.
refused() {
	if [ "$status" -eq 2 ] && grep -qF -- "$2" <<<"$err" && ! grep -q Traceback <<<"$err"; then ok "$1"
	else not_ok "$1 (wanted status 2 and '$2')"; fi
}

run python3 "$EX/mlp.py" --device cpu
built "mlp.py: the stand-in torch takes a script to its model"
run python3 "$EX/dlrm.py" --device cpu
built "dlrm.py: the stand-in torch takes a script to its model"

# --managed-allocator: PyTorch's graph capture allocates from its caching
# allocator's private pools, which a pluggable allocator does not have.
run python3 "$EX/mlp.py" --device cpu --managed-allocator "$LIB"
built "--managed-allocator alone is taken"
run python3 "$EX/mlp.py" --device cpu --managed-allocator "$LIB" --cuda-graph
refused "--managed-allocator with --cuda-graph is a usage error" \
	"--managed-allocator does not go with --cuda-graph or --compile"
run python3 "$EX/mlp.py" --device cpu --managed-allocator "$LIB" --compile reduce-overhead
refused "--managed-allocator with --compile is a usage error" \
	"--managed-allocator does not go with --cuda-graph or --compile"
run python3 "$EX/dlrm.py" --device cpu --compile default --managed-allocator "$LIB"
refused "--managed-allocator after --compile default: the same, in another script" \
	"--managed-allocator does not go with --cuda-graph or --compile"
run python3 "$EX/mlp.py" --device cpu --cuda-graph --compile default
refused "--cuda-graph with --compile is a usage error" "not allowed with argument"
run python3 "$EX/mlp.py" --device cpu --managed-allocator "$SCRATCH/none.so"
expect_status 1 "--managed-allocator LIB that is not there: exit 1"
expect_err_has "error: --managed-allocator: $SCRATCH/none.so: cannot open shared object file" "it names LIB"
expect_err_lacks "Traceback" "no traceback"
echo 'int umkit_managed_malloc;' >"$SCRATCH/other.c"
cc -shared -fPIC -o "$SCRATCH/other.so" "$SCRATCH/other.c"
run python3 "$EX/mlp.py" --device cpu --managed-allocator "$SCRATCH/other.so"
expect_status 1 "--managed-allocator LIB without umkit_managed_free: exit 1"
expect_err_has "error: --managed-allocator: $SCRATCH/other.so: undefined symbol: umkit_managed_free" "it names LIB and the function"
run python3 "$EX/mlp.py" --device cpu --cuda-graph
built "--cuda-graph alone is taken"
run python3 "$EX/mlp.py" --device cpu --compile reduce-overhead
built "--compile alone is taken"

# config NAME ARGS...: the config line print_config makes of ARGS (a model
# without parameters), as script NAME.
config() {
	local name=$1
	shift
	run python3 -c 'import sys; sys.argv[0] = sys.argv.pop(1); sys.path.insert(0, sys.argv.pop(1))
import common
class Model:
    def parameters(self): return []
common.print_config(common.make_parser("x", 8, 0.1).parse_args(), Model())' "$name" "$EX" "$@"
}
config mlp.py --turn-fds 3,4 3</dev/null 4>/dev/null
expect_out_has " turn_fds=3,4 " "the config line prints --turn-fds as it was given"
stray=$(sed 's/^config //' <<<"$out" | tr ' ' '\n' | grep -v '^[a-z_]*=')
# (No config line at all has no stray word either.)
[ -z "$stray" ] && grep -q '^config script=' <<<"$out" && ok "every word of the config line is a key=value" \
	|| not_ok "every word of the config line is a key=value (not: $stray)"
config mlp.py --managed-allocator "/opt/my libs/lib.so"
expect_out_has " managed_allocator='/opt/my libs/lib.so' " "a path with a space is quoted, one word to the shell"
config mlp.py
expect_out_has " turn_fds=None " "and without --turn-fds, None as other options not given"
keys=$(sed 's/^config //' <<<"$out" | tr ' ' '\n' | cut -d= -f1 | tr '\n' ' ')
[ "$keys" = "script steps batch_size lr seed device nvtx no_checksum managed_allocator copy_stream turn_fds cuda_graph compile params param_bytes " ] \
	&& ok "the config line's common keys, in the order examples/README.md gives" \
	|| not_ok "the config line's common keys, in the order examples/README.md gives (got: $keys)"
run python3 "$EX/mlp.py" --device cpu --turn-fds 3,9 3</dev/null
refused "a script: --turn-fds with a descriptor not open is a usage error" \
	"argument --turn-fds: file descriptor 9 (for writing) is not open"

# --device: a string torch cannot read, or a device the examples do not
# run on, is a usage error; a CUDA device that is not there is named.
for bad in gpu cuda:x cuda:-1 meta; do
	run python3 "$EX/mlp.py" --device=$bad
	refused "--device $bad is a usage error" "argument --device: '$bad'"
done
run python3 "$EX/mlp.py"
expect_status 1 "--device cuda without a GPU: exit 1"
expect_err_has "error: no CUDA device available (try --device cpu)" "it says so"
STANDIN_GPUS=1 run python3 "$EX/mlp.py" --device cuda:1
expect_status 1 "--device cuda:1 with one GPU: exit 1"
expect_err_has "error: --device cuda:1: no such CUDA device (1 visible)" "it names the device"
expect_err_lacks "Traceback" "no traceback"
STANDIN_GPUS=2 run python3 "$EX/dlrm.py" --device cuda:1
built "--device cuda:1 with two GPUs is taken"

for steps in 0 -2; do
	run python3 "$EX/mlp.py" --device cpu --steps=$steps
	refused "--steps $steps is a usage error" "--steps must be at least 1"
done

# dlrm.py's MLP sizes: each layer at least 1 wide.
for bad in 512,0 -3 512,,256 wide; do
	run python3 "$EX/dlrm.py" --device cpu --bottom-mlp=$bad
	refused "dlrm.py: --bottom-mlp $bad is a usage error" "argument --bottom-mlp: '$bad'"
done
run python3 "$EX/dlrm.py" --device cpu --top-mlp 0
refused "dlrm.py: --top-mlp 0 is a usage error" "argument --top-mlp: '0': a layer's size must be at least 1"
run python3 "$EX/dlrm.py" --device cpu --bottom-mlp 1,2,3 --top-mlp ''
built "dlrm.py: sizes of 1 and up, or none, are taken"

# common.adamw (gpt2, bert, vit): capturable only where --cuda-graph
# captures its step, on a GPU; PyTorch refuses a capturable AdamW on the CPU.
# adamw ARGS...: the AdamW made for the examples' options ARGS.
adamw() {
	run python3 -c 'import sys, types; sys.path.insert(0, sys.argv[1]); import common
args = common.make_parser("t", batch_size=1, lr=0.5).parse_args(sys.argv[2:])
common.adamw(args, types.SimpleNamespace(parameters=list))' "$EX" "$@"
}
adamw --device cuda --cuda-graph
expect_out_has "AdamW capturable=True lr=0.5" "adamw: capturable under --cuda-graph on a GPU"
adamw --device cuda
expect_out_has "AdamW capturable=False lr=0.5" "adamw: PyTorch's default without --cuda-graph"
adamw --device cpu --cuda-graph
expect_out_has "AdamW capturable=False lr=0.5" "adamw: not capturable on the CPU, where nothing is captured"
finish
