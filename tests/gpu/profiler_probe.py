"""A training step under torch.profiler: umrec must let it run to the end
(the profiler is refused CUPTI, with a warning), and the loss must be finite."""
import torch

model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 1)).cuda()
x = torch.randn(64, 256, device="cuda")
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                        torch.profiler.ProfilerActivity.CUDA]) as prof:
    loss = model(x).square().mean()
    loss.backward()
torch.cuda.synchronize()
print("profiler ok loss", float(loss), "events", len(prof.key_averages()))
