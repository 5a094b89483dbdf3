"""A PyTorch program on two GPUs, for tests/gpu/run.sh's devices section:
a matrix on each device, multiplied there each step, device 1's result
brought to device 0 and added. Prints one line per step with the sum,
which must read the same plain, under umrec and under umreplay: umkit's
arena is device 0's, and device 1's tensors are the runtime's."""
import torch

torch.manual_seed(0)
a = torch.randn(1024, 1024, device="cuda:0")
b = torch.randn(1024, 1024, device="cuda:1")
for step in range(4):
    x = a @ a.T
    y = b @ b.T
    z = x + y.to("cuda:0")
    print(f"step {step} sum {z.sum().item():.6e}")
    a = z / z.norm()
    b = y / y.norm()
