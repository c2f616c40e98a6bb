#!/usr/bin/env python3
# Large-model kernels and whole transformer layers on one NVIDIA GPU, to check ddlsim's
# llm_training compute model (models/src/llm_compute.cpp) against what the GPU does. Needs PyTorch
# with CUDA. Usage: OUT=DIR python3 scripts/measure-gpu-llm.py
# Writes to $OUT (default .):
#  llm_kernels.tsv: kernels the model counts by their bytes (cross-entropy over the vocabulary,
#      rotary embeddings, FP8 cast and transpose), as seconds and the bytes a kernel moves.
#  layers.tsv: one transformer layer (the shapes of the corpus rows in tests/data/llm/corpus.tsv)
#      forward, and forward + backward, in plain PyTorch: cuBLAS GEMMs, cuDNN fused attention,
#      unfused norms/activations/adds; compare with the model's sum of kernel times.
# Random normal data (zeros run faster).
import os, time, subprocess
import torch
from gpu_timing import smi, timeit
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

out = os.environ.get("OUT", ".")
dev = torch.device("cuda")
props = torch.cuda.get_device_properties(0)






t0 = time.time()
header = f"# on {props.name} ({props.multi_processor_count} SMs), torch {torch.__version__}, CUDA {torch.version.cuda}\n"
with open(f"{out}/llm_kernels.tsv", "w") as f:
    f.write(header)
    f.write("# cross_entropy: Megatron's loss path, bf16 logits [tokens, vocab] cast to fp32, F.cross_entropy,"
            " forward + backward (the gradient written back in bf16); bytes counted: the bf16 logits read and"
            " their gradient written (4 bytes a logit)\n")
    f.write("# rope_unfused: q and k [tokens, heads, 128] bf16 rotated in PyTorch ops (x*cos + rotate_half(x)*sin);"
            " bytes counted: q and k read and written once (8 bytes a value pair)\n")
    f.write("# fp8_cast_transpose: bf16 [tokens, hidden] to e4m3 plus its transpose (TE's cast_transpose does"
            " both in one kernel; here two); bytes counted: 2 read + 1 + 1 written a value\n")
    f.write("kernel\tshape\tbytes\tseconds\tgbytes_per_s\n")
    for tokens, vocab in [(4096, 32000), (4096, 50304), (8192, 50304), (4096, 128256), (4096, 131072)]:
        logits = torch.randn(tokens, vocab, device=dev, dtype=torch.bfloat16, requires_grad=True)
        target = torch.randint(0, vocab, (tokens,), device=dev)
        def ce():
            loss = F.cross_entropy(logits.float(), target)
            loss.backward()
        sec = timeit(ce)
        nbytes = 4 * tokens * vocab
        f.write(f"cross_entropy\t{tokens}x{vocab}\t{nbytes}\t{sec:.6e}\t{nbytes/sec/1e9:.0f}\n")
        del logits
    for tokens, heads in [(4096, 16), (4096, 32), (8192, 32), (4096, 64)]:
        q = torch.randn(tokens, heads, 128, device=dev, dtype=torch.bfloat16)
        k = torch.randn_like(q)
        ang = torch.randn(tokens, 1, 128, device=dev, dtype=torch.bfloat16)
        cos, sin = ang.cos(), ang.sin()
        def rot(x):
            x1, x2 = x[..., :64], x[..., 64:]
            return torch.cat((-x2, x1), dim=-1)
        def rope():
            return q * cos + rot(q) * sin, k * cos + rot(k) * sin
        sec = timeit(rope)
        nbytes = 2 * 2 * 2 * tokens * heads * 128
        f.write(f"rope_unfused\t{tokens}x{heads}x128\t{nbytes}\t{sec:.6e}\t{nbytes/sec/1e9:.0f}\n")
        del q, k
    for tokens, hidden in [(4096, 2048), (4096, 4096), (8192, 4096), (4096, 8192)]:
        x = torch.randn(tokens, hidden, device=dev, dtype=torch.bfloat16)
        def cast_t():
            return x.to(torch.float8_e4m3fn), x.t().contiguous().to(torch.float8_e4m3fn)
        sec = timeit(cast_t)
        nbytes = 4 * tokens * hidden
        f.write(f"fp8_cast_transpose\t{tokens}x{hidden}\t{nbytes}\t{sec:.6e}\t{nbytes/sec/1e9:.0f}\n")
        del x
print("kernels done", time.time() - t0, smi(), flush=True)


def layer_fn(h, heads, kv, ffn, act, norm, tokens_per_seq, mb, tp):
    # One tensor-parallel rank's share: heads / tp, kv / tp, ffn / tp (Megatron's column- and
    # row-parallel split); norms and residual adds on the full hidden state of every token.
    d = h // heads
    heads, kv, ffn = heads // tp, max(kv // tp, 1), ffn // tp
    g = lambda *s: (torch.randn(*s, device=dev, dtype=torch.bfloat16) * 0.02).requires_grad_()
    w_qkv = g((heads + 2 * kv) * d, h); w_o = g(h, heads * d)
    w_up = g(2 * ffn if act == "swiglu" else ffn, h); w_down = g(h, ffn)
    ln1, ln2 = (torch.ones(h, device=dev, dtype=torch.bfloat16, requires_grad=True) for _ in range(2))
    def normf(x, w):
        return F.rms_norm(x, (h,), w) if norm == "rms" else F.layer_norm(x, (h,), w)
    def fwd(x):
        y = normf(x, ln1)
        qkv = F.linear(y, w_qkv).view(mb, tokens_per_seq, heads + 2 * kv, d)
        q, k, v = qkv.split([heads, kv, kv], dim=2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        if kv != heads:
            k = k.repeat_interleave(heads // kv, dim=1); v = v.repeat_interleave(heads // kv, dim=1)
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION]):
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + F.linear(o.transpose(1, 2).reshape(mb, tokens_per_seq, heads * d), w_o)
        y = normf(x, ln2)
        u = F.linear(y, w_up)
        if act == "swiglu":
            a, b = u.chunk(2, dim=-1); u = F.silu(a) * b
        else:
            u = F.gelu(u, approximate="tanh")
        return x + F.linear(u, w_down)
    return fwd


with open(f"{out}/layers.tsv", "w") as f:
    f.write(header)
    f.write("# one transformer layer, bf16, plain PyTorch (cuBLAS, cuDNN attention, unfused elementwise),"
            " micro-batch x sequence tokens, one TP rank's share (tp); fwd: forward only; fwd+bwd: forward and backward\n")
    f.write("row\thidden\theads\tkv_heads\tffn\tact\tnorm\tseq\tmicro_batch\ttp\tpass\tseconds\n")
    rows = [("mlm24-gpt-1.7b", 2048, 16, 16, 8192, "gelu", "ln", 4096, 1, 1),
            ("nemo2407-gpt3-5b", 4096, 32, 32, 16384, "gelu", "ln", 2048, 4, 1),
            ("mlm24-gpt-7.1b", 4096, 32, 32, 16384, "gelu", "ln", 4096, 1, 1),
            ("llama2-7b", 4096, 32, 32, 11008, "swiglu", "rms", 4096, 1, 1),
            ("llama3-8b", 4096, 32, 8, 14336, "swiglu", "rms", 8192, 1, 1),
            ("mlm24-gpt-7.1b-tp2", 4096, 32, 32, 16384, "gelu", "ln", 4096, 1, 2),
            ("mlm24-gpt-32b-tp8", 7168, 56, 56, 28672, "gelu", "ln", 4096, 1, 8),
            ("mlm24-gpt-70b-tp8", 8192, 64, 64, 32768, "gelu", "ln", 4096, 1, 8),
            ("llama2-70b-tp8", 8192, 64, 8, 28672, "swiglu", "rms", 4096, 1, 8),
            ("gpt3-175b-tp4", 12288, 96, 96, 49152, "gelu", "ln", 2048, 1, 4)]
    for name, h, heads, kv, ffn, act, norm, seq, mb, tp in rows:
        try:
            fwd = layer_fn(h, heads, kv, ffn, act, norm, seq, mb, tp)
            x = torch.randn(mb, seq, h, device=dev, dtype=torch.bfloat16, requires_grad=True)
            grad = torch.randn(mb, seq, h, device=dev, dtype=torch.bfloat16)
            with torch.no_grad():
                sec = timeit(lambda: fwd(x))
            f.write(f"{name}\t{h}\t{heads}\t{kv}\t{ffn}\t{act}\t{norm}\t{seq}\t{mb}\t{tp}\tfwd\t{sec:.6e}\n")
            sec = timeit(lambda: fwd(x).backward(grad))
            f.write(f"{name}\t{h}\t{heads}\t{kv}\t{ffn}\t{act}\t{norm}\t{seq}\t{mb}\t{tp}\tfwd+bwd\t{sec:.6e}\n")
            f.flush()
            del x, grad, fwd
        except Exception as ex:
            f.write(f"# {name}: {str(ex)[:160]}\n")
print("layers done", time.time() - t0, smi(), flush=True)
