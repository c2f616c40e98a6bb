#!/usr/bin/env python3
# Compute slowed by a concurrent communication-like kernel on one GPU: a bf16 GEMM and a
# memory-bound elementwise kernel, alone and beside a kernel of k thread blocks (NCCL runs one
# block per channel) that either spins (SMs taken, no memory traffic) or copies (SMs and HBM).
# Needs a CUDA GPU, PyTorch and CuPy; prints one line per case (tests/data/gpu-overlap/ keeps a
# run as TSV). Usage: python3 scripts/measure-gpu-overlap.py
import sys, time, torch, cupy as cp
torch.backends.cuda.matmul.allow_tf32 = False
dev = torch.device("cuda")
print("gpu", torch.cuda.get_device_name(0), "sms", torch.cuda.get_device_properties(0).multi_processor_count, flush=True)
src = r'''
extern "C" __global__ void spin(unsigned long long ns) {
  unsigned long long t0; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  unsigned long long t = t0;
  while (t - t0 < ns) { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); }
}
extern "C" __global__ void copyk(const float4* a, float4* b, unsigned long long n, unsigned long long ns) {
  unsigned long long t0; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  unsigned long long t = t0; unsigned long long passes = 0;
  while (t - t0 < ns) {
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x) b[i] = a[i];
    passes++;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  }
  if (threadIdx.x == 0 && blockIdx.x == 0) ((unsigned long long*)b)[0] = passes;
}
'''
mod = cp.RawModule(code=src)
spin = mod.get_function("spin"); copyk = mod.get_function("copyk")
side = cp.cuda.Stream(non_blocking=True)
nbytes = 256 << 20
A = cp.zeros(nbytes // 4, dtype=cp.float32); B = cp.zeros_like(A)
n4 = nbytes // 16

def bench(fn, reps):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn(); torch.cuda.current_stream().synchronize()
    s.record()
    for _ in range(reps): fn()
    e.record(); e.synchronize()
    return s.elapsed_time(e) / reps

M = 8192
x = torch.randn(M, M, device=dev, dtype=torch.bfloat16); w = torch.randn(M, M, device=dev, dtype=torch.bfloat16)
gemm = lambda: torch.mm(x, w)
v = torch.randn(1 << 28, device=dev, dtype=torch.float32)  # 1 GiB
ew = lambda: v.mul(1.0001).add_(0.5)
# 4096-token slices of a transformer-like GEMM too
xs = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16); ws = torch.randn(4096, 4096 * 4, device=dev, dtype=torch.bfloat16)
gemm_s = lambda: torch.mm(xs, ws)

def copy_alone_gbs(k):
    with side:
        t0 = time.perf_counter(); copyk((k,), (512,), (A, B, cp.uint64(n4), cp.uint64(200_000_000)))
        side.synchronize(); dt = time.perf_counter() - t0
    passes = int(B.view(cp.uint64)[0].get())
    return passes * 2 * nbytes / dt / 1e9

def with_side(kind, k, fn, reps):
    ns = cp.uint64(400_000_000)  # longer than the timed loop (0.4 s); stopped by its own clock
    with side:
        if kind == "spin": spin((k,), (512,), (ns,))
        else: copyk((k,), (512,), (A, B, cp.uint64(n4), ns))
    time.sleep(0.01)
    ms = bench(fn, reps)
    return ms

for name, fn, reps, flops in (("gemm8192", gemm, 20, 2 * M**3), ("gemm4096x4096x16384", gemm_s, 40, 2 * 4096 * 4096 * 16384), ("elementwise1GiB", ew, 20, 0)):
    try:
        base = bench(fn, reps)
        line = f"{name}: alone {base:.3f} ms"
        if flops: line += f" ({flops / base / 1e9:.0f} TFLOP/s)"
        else: line += f" ({3 * (1 << 30) / base / 1e6:.0f} GB/s incl. read+write+write)"
        print(line, flush=True)
        for kind in ("spin", "copy"):
            for k in (8, 16, 32, 64):
                ms = with_side(kind, k, fn, reps)
                side.synchronize()
                print(f"  beside {kind} k={k}: {ms:.3f} ms, x{ms / base:.3f} (SM share lost {k / 132:.3f})", flush=True)
    except Exception as ex:
        print(name, "failed:", ex, flush=True)
for k in (8, 16, 32, 64):
    try: print(f"copy kernel alone k={k}: {copy_alone_gbs(k):.0f} GB/s read+write", flush=True)
    except Exception as ex: print("copy alone failed", ex)
