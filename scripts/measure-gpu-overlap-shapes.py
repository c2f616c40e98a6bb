#!/usr/bin/env python3
# Companion to scripts/measure-gpu-overlap.py: the GEMM slowdown beside k spinning blocks across
# GEMM sizes (one wave or many), a cuDNN convolution and fused attention, and block size (512 vs
# 640 threads, NCCL's NCCL_MAX_NTHREADS). Needs a CUDA GPU, PyTorch and CuPy; prints a TSV
# (tests/data/gpu-overlap/ keeps a run). Usage: python3 scripts/measure-gpu-overlap-shapes.py
import time, torch, cupy as cp
import torch.nn.functional as F
dev = torch.device("cuda")
sms = torch.cuda.get_device_properties(0).multi_processor_count
print("gpu", torch.cuda.get_device_name(0), "sms", sms, flush=True)
mod = cp.RawModule(code=r'''
extern "C" __global__ void spin(unsigned long long ns) {
  unsigned long long t0; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  unsigned long long t = t0;
  while (t - t0 < ns) { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); }
}''')
spin = mod.get_function("spin")
side = cp.cuda.Stream(non_blocking=True)

def bench(fn, reps):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn(); torch.cuda.current_stream().synchronize()
    s.record()
    for _ in range(reps): fn()
    e.record(); e.synchronize()
    return s.elapsed_time(e) / reps

def beside(k, threads, fn, reps):
    with side: spin((k,), (threads,), (cp.uint64(300_000_000),))
    time.sleep(0.005)
    ms = bench(fn, reps)
    side.synchronize()
    return ms

cases = []
for m, n, kk in ((1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (4096, 1024, 4096), (16384, 4096, 1024)):
    a = torch.randn(m, kk, device=dev, dtype=torch.bfloat16); b = torch.randn(kk, n, device=dev, dtype=torch.bfloat16)
    cases.append((f"gemm_bf16_{m}x{n}x{kk}", (lambda a=a, b=b: torch.mm(a, b)), 2 * m * n * kk))
x = torch.randn(64, 256, 56, 56, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
w = torch.randn(256, 256, 3, 3, device=dev, dtype=torch.float16).to(memory_format=torch.channels_last)
torch.backends.cudnn.benchmark = True
cases.append(("conv3x3_fp16_b64_256ch_56x56", lambda: F.conv2d(x, w, padding=1), 2 * 64 * 256 * 56 * 56 * 256 * 9))
q = torch.randn(1, 32, 4096, 128, device=dev, dtype=torch.bfloat16)
cases.append(("attention_bf16_32h_4096s", lambda: F.scaled_dot_product_attention(q, q, q, is_causal=True), 4 * 32 * 4096 * 4096 * 128 // 2))
print("case\tms_alone\ttflops\tk=8\tk=16\tk=32\tk=16@640thr", flush=True)
for name, fn, flops in cases:
    try:
        reps = max(5, min(200, int(30 / max(bench(fn, 3), 0.01))))
        base = bench(fn, reps)
        r = [beside(k, 512, fn, reps) / base for k in (8, 16, 32)]
        r.append(beside(16, 640, fn, reps) / base)
        print(f"{name}\t{base:.4f}\t{flops / base / 1e9:.0f}\t" + "\t".join(f"{v:.3f}" for v in r), flush=True)
    except Exception as ex:
        print(name, "failed", ex, flush=True)
