#!/usr/bin/env python3
# Compute slowed by a concurrent communication-like kernel on one GPU: a bf16 GEMM and a
# memory-bound elementwise kernel, alone and beside a kernel of k thread blocks (NCCL runs one
# block per channel) that either spins (SMs taken, no memory traffic) or copies (SMs and HBM).
# With --shapes: GEMMs of several sizes, a cuDNN convolution and fused attention beside k spinning
# blocks, as a TSV. Needs a CUDA GPU, PyTorch and CuPy; tests/data/gpu-overlap/ keeps runs as TSV.
# Usage: python3 scripts/measure-gpu-overlap.py [--shapes]
import sys, time, torch, cupy as cp
import torch.nn.functional as F
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

def beside(k, threads, fn, reps):
    with side: spin((k,), (threads,), (cp.uint64(300_000_000),))
    time.sleep(0.005)
    ms = bench(fn, reps)
    side.synchronize()
    return ms


def shapes():
    # GEMM sizes (one wave or many), a cuDNN convolution and fused attention beside k spinning
    # blocks, and blocks of 640 threads (NCCL's NCCL_MAX_NTHREADS) against 512.
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


def base():
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


shapes() if "--shapes" in sys.argv[1:] else base()
