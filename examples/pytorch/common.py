"""Shared helpers for the umkit PyTorch examples.

Every example script imports this module before torch, builds its model, and
hands a loss function to train(). What they print (stdout):

    config key=value ...          the arguments, parameter count and bytes
    step N loss X                 one per step, N from 0, X = repr(float)
    time_per_step_ms X            mean over the steps after the first
    per_step_ms X,X,...         every step's wall time, the first included
    peak_mem_bytes N              torch.cuda.max_memory_allocated(), only when
                                  non-zero (under umkit, which turns off
                                  PyTorch's caching allocator, it is 0) and
                                  not with --managed-allocator
    checksum HEX                  of the final parameters and buffers
                                  (leave out with --no-checksum)

Runs are deterministic: the same arguments on the same GPU and software give
the same loss lines and checksum, bit for bit. An out-of-memory error prints
one 'out of memory: ...' line on stderr and exits with status 2.
"""
import os

# cuBLAS reads this when PyTorch creates its handle; deterministic mode
# refuses matmuls without it. Set before torch is imported.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

import argparse  # noqa: E402
import shlex  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402

import turns  # noqa: E402

# Host copies of this many synthetic batches are made up front and cycled
# through, copied to the device each step as a data loader would.
DATA_BATCHES = 4

# With --cuda-graph: eager steps on a side stream before the capture, so
# that lazy state (optimizer buffers, cuBLAS workspaces) exists before it.
GRAPH_WARMUP_STEPS = 3


class ExampleParser(argparse.ArgumentParser):
    """The examples' parser: parse_args also refuses the options that do
    not go together."""

    def parse_args(self, args=None, namespace=None):
        a = super().parse_args(args, namespace)
        check_positive(self, a, "steps")
        # A CUDA graph's capture (--cuda-graph, and torch.compile's
        # reduce-overhead) allocates from a private pool of PyTorch's
        # caching allocator, which a pluggable allocator of plain malloc
        # and free does not have; and cudaMallocManaged is not allowed
        # while a stream captures. --compile default captures no graph, but
        # has not been run with the managed allocator: refused as well.
        if a.managed_allocator is not None and (a.cuda_graph or a.compile):
            self.error("--managed-allocator does not go with --cuda-graph or --compile")
        return a


def device_arg(text):
    """--device's type=: a torch device string of a CUDA device or the CPU."""
    try:
        kind = torch.device(text).type
    except RuntimeError:  # what torch.device raises on a string it cannot read
        raise argparse.ArgumentTypeError(
            "%r is not a torch device (cuda, cuda:1, cpu)" % text) from None
    if kind not in ("cuda", "cpu"):
        raise argparse.ArgumentTypeError("%r: the examples run on cuda or cpu" % text)
    return text


def make_parser(description, batch_size, lr, steps=10):
    """The options every example takes; scripts add their size knobs."""
    p = ExampleParser(
        description=description,
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--steps", type=int, default=steps,
                   help="training steps (the first counts as warm-up)")
    p.add_argument("--batch-size", type=int, default=batch_size,
                   help="samples per step")
    p.add_argument("--lr", type=float, default=lr, help="learning rate")
    p.add_argument("--seed", type=int, default=0, help="seed of model and data")
    p.add_argument("--device", type=device_arg, default="cuda",
                   help="torch device (cuda, cuda:1, cpu)")
    p.add_argument("--nvtx", action="store_true",
                   help='wrap each step in an NVTX range named "iteration"')
    p.add_argument("--no-checksum", action="store_true",
                   help="skip the final checksum of the parameters")
    p.add_argument("--managed-allocator", metavar="LIB",
                   help="allocate every tensor with cudaMallocManaged, through the PyTorch "
                        "allocator library LIB (build/examples/libmanaged_alloc.so, from "
                        "examples/pytorch/managed_alloc.c), as programs that oversubscribe "
                        "the GPU with Unified Memory do")
    p.add_argument("--copy-stream", action="store_true",
                   help="copy each batch in on a stream of its own, as a prefetching "
                        "data loader does (the program then uses two streams)")
    p.add_argument("--turn-fds", metavar="R,W", type=turns.parse_fds,
                   help="take each step in turn with other runs: read a byte from fd R "
                        "before it, write one to fd W after it (bench/lockstep.py)")
    graphs = p.add_mutually_exclusive_group()
    graphs.add_argument("--cuda-graph", action="store_true",
                        help="from step %d on, replay one CUDA graph of the whole step "
                             "(forward, backward, optimizer), captured at that step; the "
                             "steps before warm up on a side stream, as PyTorch asks"
                             % GRAPH_WARMUP_STEPS)
    graphs.add_argument("--compile", metavar="MODE", choices=("default", "reduce-overhead"),
                        help="run the loss (forward and backward) through torch.compile in "
                             "MODE; reduce-overhead replays CUDA graphs of it once warmed up")
    return p


def check_positive(parser, args, *names):
    for name in names:
        if getattr(args, name) < 1:
            parser.error("--%s must be at least 1" % name.replace("_", "-"))


def adamw(args, model):
    """AdamW over the model's parameters at --lr. With --cuda-graph on a GPU
    its step is captured in the graph, which PyTorch allows only of a
    capturable AdamW (its step counts kept on the GPU): made so then, not
    otherwise, where the eager runs' arithmetic stays PyTorch's default. On
    the CPU, where train() captures nothing, PyTorch refuses a capturable
    one."""
    on_gpu = torch.device(args.device).type == "cuda"
    return torch.optim.AdamW(model.parameters(), lr=args.lr, capturable=bool(args.cuda_graph) and on_gpu)


def setup(args):
    """Seed and make everything deterministic; returns the device."""
    if args.managed_allocator is not None:
        # ctypes loads LIB and looks up the two functions: OSError (no such
        # file, not a library for this machine), AttributeError (a function
        # missing); either names LIB.
        try:
            allocator = torch.cuda.memory.CUDAPluggableAllocator(
                args.managed_allocator, "umkit_managed_malloc", "umkit_managed_free")
        except (OSError, AttributeError) as e:
            sys.exit("error: --managed-allocator: %s" % e)
        # Before the first allocation, which fixes the allocator.
        torch.cuda.memory.change_current_allocator(allocator)
    torch.manual_seed(args.seed)
    torch.use_deterministic_algorithms(True)
    # Deterministic mode also fills every new tensor with NaN, one extra
    # kernel write per allocation that real training does not do; correct
    # kernels never read uninitialised memory, so leave it off.
    try:
        import torch.utils.deterministic as det
        det.fill_uninitialized_memory = False
    except ImportError:  # torch < 2.1
        pass
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit("error: no CUDA device available (try --device cpu)")
    if device.type == "cuda" and device.index is not None \
            and device.index >= torch.cuda.device_count():
        sys.exit("error: --device %s: no such CUDA device (%d visible)"
                 % (args.device, torch.cuda.device_count()))
    return device


def host_batches(args, make_batch):
    """DATA_BATCHES batches from make_batch(generator), each a tuple of CPU
    tensors, pinned when the device is a GPU so copies can be asynchronous."""
    g = torch.Generator().manual_seed(args.seed + 1)
    pin = torch.device(args.device).type == "cuda"
    batches = []
    for _ in range(DATA_BATCHES):
        batch = tuple(make_batch(g))
        batches.append(tuple(t.pin_memory() if pin else t for t in batch))
    return batches


def config_value(v):
    """An option's value as one word of the config line: a list or tuple
    (dlrm's MLP sizes, --turn-fds) as the option takes it, 3,4; a string
    with a space (a --managed-allocator path) quoted as the shell would."""
    if isinstance(v, (list, tuple)):
        return ",".join(map(str, v))
    return shlex.quote(v) if isinstance(v, str) else str(v)


def print_config(args, model):
    n = sum(p.numel() for p in model.parameters())
    nbytes = sum(p.numel() * p.element_size() for p in model.parameters())
    opts = " ".join("%s=%s" % (k, config_value(v)) for k, v in vars(args).items())
    print("config script=%s %s params=%d param_bytes=%d"
          % (os.path.basename(sys.argv[0]), opts, n, nbytes), flush=True)


def train(args, model, optimizer, batches, compute_loss):
    """The step loop: copy a batch in, forward, backward, optimizer step."""
    device = torch.device(args.device)
    nvtx = args.nvtx
    print_config(args, model)
    model.train()
    copy_stream = torch.cuda.Stream(device) if args.copy_stream and device.type == "cuda" else None
    graphed = GraphedStep(device, compute_loss) if args.cuda_graph and device.type == "cuda" else None
    if args.compile:
        compute_loss = torch.compile(compute_loss, mode=args.compile)
    times = []
    turn = turns.Turns(args.turn_fds)
    for step in turn.steps(args.steps):
        if nvtx:
            torch.cuda.nvtx.range_push("iteration")
        t0 = time.perf_counter()
        if copy_stream:
            with torch.cuda.stream(copy_stream):
                batch = [t.to(device, non_blocking=True) for t in batches[step % len(batches)]]
            torch.cuda.current_stream(device).wait_stream(copy_stream)
            for t in batch:
                t.record_stream(torch.cuda.current_stream(device))
        else:
            batch = [t.to(device, non_blocking=True) for t in batches[step % len(batches)]]
        if graphed:
            loss = graphed.step(step, batch, optimizer)
        else:
            optimizer.zero_grad(set_to_none=True)
            loss = compute_loss(*batch)
            loss.backward()
            optimizer.step()
        value = loss.item()  # waits for the step's kernels
        times.append(time.perf_counter() - t0)
        if nvtx:
            torch.cuda.nvtx.range_pop()
        print("step %d loss %r" % (step, value), flush=True)

    if times:
        rest = times[1:] or times
        print("time_per_step_ms %.3f" % (1e3 * sum(rest) / len(rest)))
        print("per_step_ms %s" % ",".join("%.3f" % (1e3 * t) for t in times))
    if device.type == "cuda" and not args.managed_allocator:  # no statistics there
        peak = torch.cuda.max_memory_allocated(device)
        if peak:
            print("peak_mem_bytes %d" % peak)
    if not args.no_checksum:
        print("checksum %016x" % checksum(model))
    sys.stdout.flush()


class GraphedStep:
    """One training step as a CUDA graph (PyTorch's whole-network capture):
    the first GRAPH_WARMUP_STEPS steps run eagerly on a side stream, the
    next is captured and then replayed every step, its batch copied into
    the graph's static inputs. Gradients are zeroed inside the graph, so
    they stay allocated at fixed addresses."""

    def __init__(self, device, compute_loss):
        self.device = device
        self.compute_loss = compute_loss
        self.side = torch.cuda.Stream(device)
        self.graph = None

    def step(self, step, batch, optimizer):
        current = torch.cuda.current_stream(self.device)
        if self.graph is None and step < GRAPH_WARMUP_STEPS:
            self.side.wait_stream(current)
            with torch.cuda.stream(self.side):
                optimizer.zero_grad(set_to_none=True)
                loss = self.compute_loss(*batch)
                loss.backward()
                optimizer.step()
            current.wait_stream(self.side)
            # Detached: a loss that kept its autograd graph alive into the
            # next step would hold AccumulateGrad nodes of this stream.
            return loss.detach()
        if self.graph is None:
            self.inputs = [t.clone() for t in batch]
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                optimizer.zero_grad(set_to_none=False)
                self.loss = self.compute_loss(*self.inputs)
                self.loss.backward()
                optimizer.step()
        for static, t in zip(self.inputs, batch):
            static.copy_(t)
        self.graph.replay()
        return self.loss


def train_classifier(args, model, optimizer, sample_shape, classes):
    """train() on random inputs of sample_shape and random labels among
    classes, with cross-entropy."""
    criterion = torch.nn.CrossEntropyLoss()

    def make_batch(g):
        x = torch.randn(args.batch_size, *sample_shape, generator=g)
        y = torch.randint(0, classes, (args.batch_size,), generator=g)
        return x, y

    def compute_loss(x, y):
        return criterion(model(x), y)

    train(args, model, optimizer, host_batches(args, make_batch), compute_loss)


@torch.no_grad()
def checksum(model, chunk=8 << 20):
    """A 64-bit hash of the bytes of every parameter and buffer, computed on
    their device in chunks (integer sums, so independent of reduction order):
    any changed bit changes it."""
    h = 0xCBF29CE484222325
    for name, t in model.state_dict().items():
        data = t.detach().reshape(-1).contiguous().view(torch.uint8)
        for start in range(0, data.numel(), chunk):
            part = data[start:start + chunk].to(torch.int64)
            w = torch.arange(start, start + part.numel(), device=part.device) % 65521 + 1
            s = int((part * w).sum())  # < 255 * 65521 * 8M, no overflow
            h = ((h ^ s) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
        h = ((h ^ data.numel()) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def run(main):
    """Run main(); an out-of-memory error becomes one line and exit status 2."""
    oom = getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError
    try:
        main()
    except oom as e:
        sys.stdout.flush()
        first = str(e).strip().splitlines()[0] if str(e).strip() else "no details"
        print("out of memory: %s" % first, file=sys.stderr)
        sys.exit(2)
