"""Under --max-managed, an allocation past the cap must raise PyTorch's own
out-of-memory error, and the process must stay usable afterwards."""
import torch

small = torch.ones(1024, device="cuda")
try:
    big = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    print("oom not raised")
except (torch.OutOfMemoryError, RuntimeError) as e:
    print("oom raised", type(e).__name__, "out of memory" in str(e))
print("still usable", float((small * 2).sum()))
