"""Host time per PyTorch op on a tiny tensor: in place (a launch, no
allocation) and out of place (a launch, an allocation and a free)."""
import sys, time, torch
n, trials = int(sys.argv[1]), int(sys.argv[2])
x = torch.zeros(256, device="cuda")
torch.cuda.synchronize()
for mode in ("inplace", "alloc"):
    res = []
    for t in range(trials):
        t0 = time.perf_counter()
        if mode == "inplace":
            for i in range(n):
                x.add_(1.0)
        else:
            for i in range(n):
                y = x + 1.0
        torch.cuda.synchronize()
        res.append((time.perf_counter() - t0) / n * 1e6)
    res.sort()
    print(f"{mode} us_per_op min {res[0]:.3f} median {res[len(res)//2]:.3f} all {' '.join('%.3f' % r for r in res)}")
print("checksum", x.sum().item())
