#!/usr/bin/env python3
# Kernel rates of one NVIDIA GPU, for ddlsim's GPU compute model (models/kernel-rates/ holds
# one run). Needs PyTorch with CUDA. Usage: OUT=DIR python3 scripts/measure-gpu-kernels.py
# Writes TSVs to $OUT (default .): GEMM TFLOP/s per (M, N, K, layout) in bf16 and fp8, attention TFLOP/s per
# backend, and memory-bound kernels' bandwidth. Random normal data (zeros run faster).
import os, sys, time, subprocess, itertools
import torch
from gpu_timing import smi, timeit
import torch.nn.functional as F

out = os.environ.get("OUT", ".")
dev = torch.device("cuda")
torch.backends.cuda.matmul.allow_tf32 = False
props = torch.cuda.get_device_properties(0)
with open(f"{out}/env.txt", "w") as f:
    f.write(f"torch {torch.__version__} cuda {torch.version.cuda} device {props.name} sms {props.multi_processor_count} "
            f"mem {props.total_memory/2**30:.1f} GiB cc {props.major}.{props.minor}\n")
    f.write("nvidia-smi before: " + smi() + "\n")
    f.write(subprocess.run(["nvidia-smi", "-q", "-d", "CLOCK,POWER"], capture_output=True, text=True).stdout)


t0 = time.time()
Ms = [1024, 2048, 4096, 8192, 16384, 32768]
Ns = [1024, 2048, 4096, 8192, 16384, 28672]
Ks = [1024, 2048, 4096, 8192, 16384]
with open(f"{out}/gemm_bf16.tsv", "w") as f:
    f.write("# bf16 GEMM on %s, torch %s (cuBLAS), random normal data; layout fwd: Y[M,N] = X[M,K] W[N,K]^T;"
            " dgrad: dX[M,N] = dY[M,K] W[K,N]; wgrad: dW[M,N] = dY[K,M]^T X[K,N]\n" % (props.name, torch.__version__))
    f.write("m\tn\tk\tlayout\tseconds\ttflops\n")
    for m, n, k in itertools.product(Ms, Ns, Ks):
        flops = 2.0 * m * n * k
        x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
        sec = timeit(lambda: F.linear(x, w))
        f.write(f"{m}\t{n}\t{k}\tfwd\t{sec:.6e}\t{flops/sec/1e12:.1f}\n")
        w2 = w.t().contiguous()  # [K, N] row-major: dgrad's W (stored [out=K? no]) NN product
        sec = timeit(lambda: torch.matmul(x, w2))
        f.write(f"{m}\t{n}\t{k}\tdgrad\t{sec:.6e}\t{flops/sec/1e12:.1f}\n")
        xt = x.t().contiguous()  # [K, M]; wgrad = xt^T @ w2  (TN)
        sec = timeit(lambda: torch.matmul(xt.t(), w2))
        f.write(f"{m}\t{n}\t{k}\twgrad\t{sec:.6e}\t{flops/sec/1e12:.1f}\n")
        del x, w, w2, xt
    f.flush()
print("bf16 done", time.time() - t0, smi(), flush=True)
with open(f"{out}/env.txt", "a") as f: f.write("nvidia-smi after bf16: " + smi() + "\n")

try:
    with open(f"{out}/gemm_fp8.tsv", "w") as f:
        f.write("# fp8 e4m3 GEMM (torch._scaled_mm, per-tensor scales, bf16 out) on %s, torch %s\n" % (props.name, torch.__version__))
        f.write("m\tn\tk\tlayout\tseconds\ttflops\n")
        one = torch.tensor(1.0, device=dev)
        for m, n, k in itertools.product(Ms, Ns, Ks):
            a = (torch.randn(m, k, device=dev) * 0.5).to(torch.float8_e4m3fn)
            b = (torch.randn(n, k, device=dev) * 0.5).to(torch.float8_e4m3fn)
            sec = timeit(lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
            f.write(f"{m}\t{n}\t{k}\tfwd\t{sec:.6e}\t{2.0*m*n*k/sec/1e12:.1f}\n")
            del a, b
    print("fp8 done", time.time() - t0, smi(), flush=True)
except Exception as ex:
    print("fp8 failed:", ex, flush=True)

from torch.nn.attention import sdpa_kernel, SDPBackend
with open(f"{out}/attention.tsv", "w") as f:
    f.write("# causal self-attention (F.scaled_dot_product_attention) bf16, batch 1, head_dim 128, on %s, torch %s;"
            " flops counted causal: fwd 2*2*s*s*d*heads/2, bwd 2.5x fwd\n" % (props.name, torch.__version__))
    f.write("backend\theads\tseq\tpass\tseconds\ttflops\n")
    for backend in [SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]:
        for heads, seq in itertools.product([8, 16, 32, 64], [2048, 4096, 8192, 16384]):
            try:
                q, k_, v = (torch.randn(1, heads, seq, 128, device=dev, dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
                fl = 4.0 * seq * seq * 128 * heads / 2
                with sdpa_kernel([backend]):
                    sec = timeit(lambda: F.scaled_dot_product_attention(q, k_, v, is_causal=True))
                    f.write(f"{backend.name}\t{heads}\t{seq}\tfwd\t{sec:.6e}\t{fl/sec/1e12:.1f}\n")
                    o = F.scaled_dot_product_attention(q, k_, v, is_causal=True)
                    g = torch.randn_like(o)
                    def fb():
                        o = F.scaled_dot_product_attention(q, k_, v, is_causal=True)
                        o.backward(g)
                    sec = timeit(fb)
                    f.write(f"{backend.name}\t{heads}\t{seq}\tfwd+bwd\t{sec:.6e}\t{3.5*fl/sec/1e12:.1f}\n")
                del q, k_, v
            except Exception as ex:
                f.write(f"# {backend.name} {heads} {seq}: {str(ex)[:100]}\n")
print("attention done", time.time() - t0, flush=True)

with open(f"{out}/memory.tsv", "w") as f:
    f.write("# memory-bound kernels on %s: bytes counted read+written\nkernel\tbytes\tseconds\tgbytes_per_s\n" % props.name)
    n = 1 << 30  # 1 Gi elements bf16 = 2 GiB
    a = torch.randn(n, device=dev, dtype=torch.bfloat16); b = torch.empty_like(a); c = torch.randn_like(a)
    for name, fn, nbytes in [("copy", lambda: b.copy_(a), 4 * n), ("add", lambda: torch.add(a, c, out=b), 6 * n)]:
        sec = timeit(fn); f.write(f"{name}\t{nbytes}\t{sec:.6e}\t{nbytes/sec/1e9:.0f}\n")
    del a, b, c
    for rows, hid in [(16384, 8192), (8192, 12288), (32768, 4096)]:
        x = torch.randn(rows, hid, device=dev, dtype=torch.bfloat16); wt = torch.ones(hid, device=dev, dtype=torch.bfloat16)
        nbytes = 2 * 2 * rows * hid
        sec = timeit(lambda: F.layer_norm(x, (hid,), wt, wt)); f.write(f"layernorm_{rows}x{hid}\t{nbytes}\t{sec:.6e}\t{nbytes/sec/1e9:.0f}\n")
        sec = timeit(lambda: F.rms_norm(x, (hid,), wt)); f.write(f"rmsnorm_{rows}x{hid}\t{nbytes}\t{sec:.6e}\t{nbytes/sec/1e9:.0f}\n")
        sec = timeit(lambda: F.gelu(x)); f.write(f"gelu_{rows}x{hid}\t{nbytes}\t{sec:.6e}\t{nbytes/sec/1e9:.0f}\n")
    # launch overhead: a tiny kernel back to back
    y = torch.ones(16, device=dev)
    sec = timeit(lambda: y.add_(1.0), min_ms=20)
    f.write(f"tiny_add_launch\t128\t{sec:.6e}\t0\n")
with open(f"{out}/env.txt", "a") as f: f.write("nvidia-smi end: " + smi() + f"\ntotal {time.time()-t0:.0f} s\n")
print("all done", time.time() - t0, flush=True)
