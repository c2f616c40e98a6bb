#!/usr/bin/env python3
"""torch.topk on the GPU for the sizes bench_cuda_backend times (fp32, k = 1% of n), to compare
with our radix-select top-k. Prints one line per size, or why it cannot run (no PyTorch, no GPU)."""
import sys

try:
    import torch
except ImportError:
    print("torch.topk: PyTorch is not installed here (pip install torch to compare)")
    sys.exit(0)
if not torch.cuda.is_available():
    print("torch.topk: PyTorch sees no GPU")
    sys.exit(0)

for n in (1 << 20, 16 << 20, 64 << 20):
    k = n // 100
    x = torch.randn(n, device="cuda")
    torch.topk(x.abs(), k, sorted=False)  # warm up
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        torch.topk(x.abs(), k, sorted=False)
    stop.record()
    torch.cuda.synchronize()
    print(f"torch.topk n={n} k={k}: {start.elapsed_time(stop) / 10:.3f} ms")
