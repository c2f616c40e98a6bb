#include "llm_compute.hpp"

#include "kernel_rates.hpp"

#include "ddlsim/core/sim_time.hpp"

#include <cstdint>

namespace ddlsim::models {
namespace {

// One roofline "layer" of `flops` per sequence (forward; backward twice that).
Layer roofline_layer(LayerKind kind, double parameters, double flops, double activation_bytes) {
  Layer layer;
  layer.kind = kind;
  layer.parameters = static_cast<std::uint64_t>(parameters);
  layer.forward_flops = flops;
  layer.backward_flops = 2 * flops;
  layer.activation_bytes = static_cast<std::uint64_t>(activation_bytes * 2); // fp32 convention
  return layer;
}

// The GPU for the matrix multiplies: FP8 training runs them at the FP8 peak (Transformer Engine
// keeps attention's softmax and the norms in BF16).
GpuSpec gemm_gpu(const LlmSpec& spec) {
  GpuSpec gpu = spec.gpu;
  if (spec.precision == LlmPrecision::fp8) gpu.fp16_flops = gpu.fp8_flops;
  return gpu;
}

// Checked: a measured rate of zero (never in the tables) or an absurd shape throws, not wraps.
Picoseconds seconds_to_ps(double seconds) {
  return checked_ps(seconds * 1e12);
}

LayerTimes operator+(LayerTimes a, LayerTimes b) {
  return {a.forward + b.forward, a.backward + b.backward};
}
LayerTimes operator*(double n, LayerTimes a) {
  return {static_cast<Picoseconds>(n * static_cast<double>(a.forward)),
          static_cast<Picoseconds>(n * static_cast<double>(a.backward))};
}

LayerTimes with_overhead(LayerTimes times, Picoseconds overhead) {
  return {times.forward + overhead, times.backward + overhead};
}

// Bytes the forward pass of one layer's memory-bound kernels moves per micro-batch on one TP
// rank, BF16 (2 bytes a value), as Megatron-Core runs them (Korthikanti et al. 2022, Figure 5,
// for where sequence parallelism splits them): per block a norm (reads and writes the hidden
// state: 4h bytes a token) and the bias-dropout-add into the residual (reads two, writes one:
// 6h); the FFN's activation (GeLU reads and writes f / t values: 4 f / t; SwiGLU reads two
// halves and writes one: 6 f / t). With sequence parallelism the norms and residual adds run on
// s / t tokens, else on all s of every TP rank. Not counted: a rotary embedding (4 (h + kv) / t,
// which the shape does not say whether the model has) and dropout masks. FP8's casts and
// transposes are fp8_cast_bytes below.
struct ElementwiseBytes {
  double attention = 0, ffn = 0;
};

ElementwiseBytes elementwise_bytes(const LlmSpec& spec, int layer) {
  const LlmShape& m = spec.shape;
  const double t = spec.parallel.tp, h = static_cast<double>(m.hidden);
  const double tokens = static_cast<double>(m.seq_len) * spec.micro_batch;
  const double split = spec.parallel.sequence_parallel && spec.parallel.tp > 1 ? t : 1;
  const double residual_path = (4 * h + 6 * h) * tokens / split;
  double activated = tokens * static_cast<double>(m.ffn); // values through the activation
  if (m.is_moe_layer(layer)) {
    const MoeShape& moe = *m.moe;
    activated = tokens * static_cast<double>(moe.expert_ffn) *
                (moe.top_k * moe.capacity_factor + moe.shared_experts);
  }
  const double activation = (m.gated_ffn ? 6 : 4) * activated / t;
  return {residual_path, residual_path + activation};
}

} // namespace

// Transformer Engine's FP8 casts and transposes (llm_compute.hpp), beyond the BF16 path's
// elementwise bytes above. A GEMM in FP8 takes both operands in FP8 and, for its weight gradient,
// transposed (transformer_engine/pytorch/module/{linear,layernorm_linear,layernorm_mlp}.py):
//  - forward: the attention output projection's input comes from attention in BF16 and is cast
//    and transposed in one kernel (cast_transpose: reads 2 bytes, writes 1 + 1: 4 a value); the
//    QKV and FC1 inputs come out of the fused norm, and FC2's out of the activation, already in
//    FP8 (no extra bytes);
//  - backward: those FP8 inputs are transposed for the weight gradients (reads 1, writes 1: 2 a
//    value; QKV and FC1 on the hidden state, FC2 on the FFN's activation), and each GEMM's output
//    gradient is cast and transposed (4 a value: QKV, projection and FC2 outputs; FC1's is fused
//    with the activation's backward, already counted).
// Not counted: the weights' casts (once per iteration, cached across micro-batches: Megatron
// passes is_first_microbatch) and the scaling factors' amax reductions (a few values a tensor).
Fp8CastBytes llm_fp8_cast_bytes(const LlmSpec& spec, int layer) {
  if (spec.precision != LlmPrecision::fp8) return {};
  const LlmShape& m = spec.shape;
  const double t = spec.parallel.tp, h = static_cast<double>(m.hidden);
  const double tokens = static_cast<double>(m.seq_len) * spec.micro_batch; // GEMM rows
  const double qkv = (h + 2 * static_cast<double>(m.kv_dim())) / t;
  double ffn_tokens = tokens, f = static_cast<double>(m.ffn);
  if (m.is_moe_layer(layer)) {
    const MoeShape& moe = *m.moe;
    ffn_tokens = tokens * (moe.top_k * moe.capacity_factor + moe.shared_experts);
    f = static_cast<double>(moe.expert_ffn);
  }
  Fp8CastBytes out;
  out.attention_forward = 4 * tokens * h / t;
  out.attention_backward = 2 * tokens * h + 4 * tokens * (qkv + h);
  out.ffn_backward = 2 * ffn_tokens * (h + f / t) + 4 * ffn_tokens * h;
  return out;
}

namespace {

// Linear layers and attention at the measured kernel rates of the GPU's architecture.
class MeasuredKernels {
public:
  MeasuredKernels(const LlmSpec& spec, const KernelRates& rates) : spec_(spec), rates_(rates) {}

  // A linear layer over `tokens` tokens with n outputs and k inputs: the forward GEMM, and the
  // input- and weight-gradient GEMMs of the backward pass, each at its shape's rate. `fp8`: the
  // layer is a Transformer Engine module under FP8 training.
  LayerTimes linear(double tokens, double n, double k, bool fp8) const {
    const MatmulPrecision precision = fp8 ? MatmulPrecision::fp8 : MatmulPrecision::bf16;
    const double peak = fp8 ? spec_.gpu.fp8_flops : spec_.gpu.fp16_flops;
    const double flops = 2 * tokens * n * k;
    auto seconds = [&](GemmPass pass, double rows, double cols, double depth) {
      return flops / (peak * rates_.gemm_efficiency(precision, pass, rows, cols, depth));
    };
    return {seconds_to_ps(seconds(GemmPass::forward, tokens, n, k)),
            seconds_to_ps(seconds(GemmPass::input_grad, tokens, k, n) +
                          seconds(GemmPass::weight_grad, n, k, tokens))};
  }
  // Fused causal self-attention of `heads` query heads per GPU over the micro-batch: the kernel
  // skips the masked half, so the forward pass is 2 s^2 d FLOPs per head and sequence.
  LayerTimes attention(double heads) const {
    const double s = static_cast<double>(spec_.shape.seq_len);
    const double b = spec_.micro_batch;
    const double flops = 2 * s * s * static_cast<double>(spec_.shape.head_dim()) * heads * b;
    const double peak = spec_.gpu.fp16_flops; // attention stays in BF16 under FP8 training
    return {seconds_to_ps(flops / (peak * rates_.attention_efficiency(heads * b, s, false))),
            seconds_to_ps(2.5 * flops / (peak * rates_.attention_efficiency(heads * b, s, true)))};
  }
  // Kernels that stream `forward_bytes` through memory in the forward pass; their backward pass
  // reads the output's gradient and the saved input and writes the input's gradient: twice the
  // bytes. One kernel overhead per pass for the block's group of them.
  LayerTimes memory_bound(double forward_bytes) const {
    return streamed(forward_bytes, 2 * forward_bytes);
  }
  // Kernels that stream the given bytes in each pass (one kernel overhead for a pass that has any).
  LayerTimes streamed(double forward_bytes, double backward_bytes) const {
    const double rate = spec_.gpu.memory_bytes_per_second * spec_.gpu.memory_efficiency;
    auto pass = [&](double bytes) {
      return bytes > 0 ? seconds_to_ps(bytes / rate) + overhead() : Picoseconds{0};
    };
    return {pass(forward_bytes), pass(backward_bytes)};
  }
  bool fp8() const { return spec_.precision == LlmPrecision::fp8; }
  Picoseconds overhead() const { return spec_.gpu.kernel_overhead; }

private:
  const LlmSpec& spec_;
  const KernelRates& rates_;
};

BlockTimes measured_block_times(const LlmSpec& spec, int layer, const KernelRates& rates) {
  const LlmShape& m = spec.shape;
  const MeasuredKernels kernels(spec, rates);
  const double t = spec.parallel.tp, s = m.seq_len, h = static_cast<double>(m.hidden);
  const double tokens = s * spec.micro_batch;
  const bool fp8 = kernels.fp8();
  // The memory-bound kernels around the GEMMs (the measured rates cover the GEMMs alone).
  const ElementwiseBytes bytes = elementwise_bytes(spec, layer);
  const Fp8CastBytes casts = llm_fp8_cast_bytes(spec, layer);
  const LayerTimes attention_elementwise =
      kernels.memory_bound(bytes.attention) +
      kernels.streamed(casts.attention_forward, casts.attention_backward);
  const LayerTimes ffn_elementwise =
      kernels.memory_bound(bytes.ffn) + kernels.streamed(casts.ffn_forward, casts.ffn_backward);
  // Megatron's fused QKV projection and the attention output projection.
  const double qkv = (h + 2 * static_cast<double>(m.kv_dim())) / t;
  const LayerTimes projections =
      with_overhead(kernels.linear(tokens, qkv, h, fp8) + kernels.linear(tokens, h, h / t, fp8),
                    kernels.overhead());
  const LayerTimes scores = with_overhead(kernels.attention(m.heads / t), kernels.overhead());
  BlockTimes out;
  out.attention_forward = attention_elementwise.forward + projections.forward + scores.forward;
  out.attention_backward = attention_elementwise.backward + projections.backward + scores.backward;
  out.scores_forward = scores.forward;
  out.attention_forward_memory = attention_elementwise.forward;
  out.attention_backward_memory = attention_elementwise.backward;
  out.ffn_forward_memory = ffn_elementwise.forward;
  out.ffn_backward_memory = ffn_elementwise.backward;
  // The FFN: up (gate and up fused for a gated FFN) and down projections.
  const double up = m.gated_ffn ? 2 : 1;
  auto ffn = [&](double ffn_tokens, double f) {
    return kernels.linear(ffn_tokens, up * f / t, h, fp8) +
           kernels.linear(ffn_tokens, h, f / t, fp8);
  };
  if (m.is_moe_layer(layer)) {
    const MoeShape& moe = *m.moe;
    const double f = static_cast<double>(moe.expert_ffn);
    // Each GPU holds experts / ep routed experts; each takes an even share of the tokens its EP
    // group routes, padded to the capacity factor (the same work as the roofline path).
    const double local = static_cast<double>(moe.experts) / spec.parallel.ep;
    const double per_expert = tokens * moe.top_k * moe.capacity_factor / local;
    const LayerTimes experts = with_overhead(
        local * ffn(per_expert, f) + static_cast<double>(moe.shared_experts) * ffn(tokens, f),
        kernels.overhead());
    const LayerTimes router = layer_times(roofline_layer(LayerKind::linear, h * moe.experts,
                                                         2 * s * h * moe.experts, s * moe.experts),
                                          spec.gpu, Precision::fp16, spec.micro_batch, 1.0);
    out.ffn_forward = ffn_elementwise.forward + experts.forward;
    out.ffn_backward = ffn_elementwise.backward + experts.backward;
    out.router_forward = router.forward;
    out.router_backward = router.backward;
  } else {
    const LayerTimes dense =
        with_overhead(ffn(tokens, static_cast<double>(m.ffn)), kernels.overhead());
    out.ffn_forward = ffn_elementwise.forward + dense.forward;
    out.ffn_backward = ffn_elementwise.backward + dense.backward;
  }
  return out;
}

BlockTimes roofline_block_times(const LlmSpec& spec, int layer) {
  const LlmShape& m = spec.shape;
  const double t = spec.parallel.tp, s = m.seq_len, h = static_cast<double>(m.hidden);
  const int b = spec.micro_batch;
  const GpuSpec gemm = gemm_gpu(spec);
  const double tokens_activation = s * h / t; // one block's output per sequence, bytes at 2 B
  auto times = [&](const GpuSpec& gpu, const Layer& l) {
    return layer_times(l, gpu, Precision::fp16, b, 1.0);
  };
  BlockTimes out;
  const double projections = 2 * h * h + 2 * h * static_cast<double>(m.kv_dim());
  const LayerTimes norm = times(spec.gpu, roofline_layer(LayerKind::norm, h, 8 * s * h, s * h));
  const LayerTimes qkvo =
      times(gemm, roofline_layer(LayerKind::linear, projections / t, 2 * s * projections / t,
                                 2 * tokens_activation));
  const LayerTimes scores = times(
      spec.gpu, roofline_layer(LayerKind::attention, 0, 4 * s * s * h / t, tokens_activation));
  out.attention_forward = norm.forward + qkvo.forward + scores.forward;
  out.attention_backward = norm.backward + qkvo.backward + scores.backward;
  out.scores_forward = scores.forward;
  out.attention_forward_memory = out.ffn_forward_memory = norm.forward;
  out.attention_backward_memory = out.ffn_backward_memory = norm.backward;
  const double mats = m.gated_ffn ? 3 : 2;
  if (m.is_moe_layer(layer)) {
    const MoeShape& moe = *m.moe;
    // Each expert's GPU computes its share of the routed tokens padded to the capacity factor.
    const double f = static_cast<double>(moe.expert_ffn);
    const double routed = moe.top_k * moe.capacity_factor + moe.shared_experts;
    const double weights =
        mats * h * f * (static_cast<double>(moe.experts) / spec.parallel.ep + moe.shared_experts);
    const LayerTimes experts =
        times(gemm, roofline_layer(LayerKind::linear, weights / t,
                                   2 * s * mats * h * f * routed / t, routed * s * f / t));
    const LayerTimes router =
        times(spec.gpu, roofline_layer(LayerKind::linear, h * moe.experts, 2 * s * h * moe.experts,
                                       s * moe.experts));
    out.ffn_forward = norm.forward + experts.forward;
    out.ffn_backward = norm.backward + experts.backward;
    out.router_forward = router.forward;
    out.router_backward = router.backward;
  } else {
    const double f = static_cast<double>(m.ffn);
    const LayerTimes ffn = times(gemm, roofline_layer(LayerKind::linear, mats * h * f / t,
                                                      2 * s * mats * h * f / t, s * f / t));
    out.ffn_forward = norm.forward + ffn.forward;
    out.ffn_backward = norm.backward + ffn.backward;
  }
  return out;
}

} // namespace

BlockTimes llm_block_times(const LlmSpec& spec, int layer) {
  if (const KernelRates* rates = KernelRates::for_gpu(spec.gpu))
    return measured_block_times(spec, layer, *rates);
  return roofline_block_times(spec, layer);
}

LayerTimes llm_embedding_times(const LlmSpec& spec) {
  const double t = spec.parallel.tp, s = spec.shape.seq_len;
  const double h = static_cast<double>(spec.shape.hidden),
               v = static_cast<double>(spec.shape.vocab);
  return layer_times(roofline_layer(LayerKind::embedding, v * h / t, 0, s * h), spec.gpu,
                     Precision::fp16, spec.micro_batch, 1.0);
}

LayerTimes llm_logits_times(const LlmSpec& spec) {
  const double t = spec.parallel.tp, s = spec.shape.seq_len;
  const double h = static_cast<double>(spec.shape.hidden),
               v = static_cast<double>(spec.shape.vocab);
  if (const KernelRates* rates = KernelRates::for_gpu(spec.gpu)) {
    // Megatron's output layer is its own column-parallel linear, not a Transformer Engine
    // module: it stays in BF16 under FP8 training.
    const MeasuredKernels kernels(spec, *rates);
    return with_overhead(kernels.linear(s * spec.micro_batch, v / t, h, false),
                         kernels.overhead()) +
           llm_loss_times(spec);
  }
  return layer_times(roofline_layer(LayerKind::linear, v * h / t, 2 * s * h * v / t, 2 * s * v / t),
                     gemm_gpu(spec), Precision::fp16, spec.micro_batch, 1.0);
}

LayerTimes llm_loss_times(const LlmSpec& spec) {
  const KernelRates* rates = KernelRates::for_gpu(spec.gpu);
  if (!rates) return {};
  // Megatron-Core's vocab-parallel cross-entropy (tensor_parallel/cross_entropy.py, the default:
  // --cross-entropy-loss-fusion is off unless asked for) runs in FP32 as separate PyTorch
  // kernels over each logit of this TP rank's share of the vocabulary. Forward: cast the BF16
  // logits to FP32 (reads 2 bytes, writes 4), max (reads 4), subtract the max in place (4 + 4),
  // exp in place (4 + 4), sum (4), divide into the softmax kept for backward (4 + 4): 38 bytes
  // a logit. Backward: multiply by the loss gradient in place (4 + 4), cast back to BF16 for
  // the output layer (4 + 2): 14.
  const double logits = static_cast<double>(spec.shape.seq_len) * spec.micro_batch *
                        static_cast<double>(spec.shape.vocab) / spec.parallel.tp;
  return MeasuredKernels(spec, *rates).streamed(38 * logits, 14 * logits);
}

} // namespace ddlsim::models
