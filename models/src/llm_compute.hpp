// Compute times of a transformer's pieces per micro-batch on one GPU of an LLM training job:
// each layer's attention and FFN blocks (forward and backward), the embedding and the logits.
// On a GPU whose architecture has measured kernel rates (kernel_rates.hpp: Hopper) each linear
// layer is its three GEMMs at the measured rate for their shapes and fused attention is timed
// causal at the measured rate; elsewhere the GPU roofline (gpu.hpp) on the layer's FLOPs.
#pragma once

#include "ddlsim/models/llm.hpp"

namespace ddlsim::models {

struct BlockTimes {
  Picoseconds attention_forward = 0, attention_backward = 0;
  Picoseconds ffn_forward = 0, ffn_backward = 0; // dense FFN, or the experts of an MoE layer
  Picoseconds router_forward = 0, router_backward = 0;
  Picoseconds scores_forward = 0; // attention's QK^T and softmax x V (selective recompute)
  // Of the times above, the memory-bound kernels' (norms, activations, residual adds, FP8 casts,
  // with their launch overheads): compute slowed by communication kernels slows them by the
  // memory-bound curve, the rest (GEMMs, fused attention, the router) by the GEMM curve
  // (sim/compute_slowdown.hpp).
  Picoseconds attention_forward_memory = 0, attention_backward_memory = 0;
  Picoseconds ffn_forward_memory = 0, ffn_backward_memory = 0;
};

BlockTimes llm_block_times(const LlmSpec& spec, int layer);

// Bytes Transformer Engine's FP8 training (per-tensor scaling, as TE 1.x runs Megatron-Core's
// layers) moves per micro-batch on one TP rank to cast and transpose the GEMMs' operands, beyond
// what the BF16 path's norms, activation and residual adds move (zero under BF16). Part of
// llm_block_times on GPUs with measured kernel rates; the formulas are in llm_compute.cpp.
struct Fp8CastBytes {
  double attention_forward = 0, attention_backward = 0, ffn_forward = 0, ffn_backward = 0;
};
Fp8CastBytes llm_fp8_cast_bytes(const LlmSpec& spec, int layer);
// The first stage's embedding lookup (memory-bound) and the last stage's logits with the loss.
LayerTimes llm_embedding_times(const LlmSpec& spec);
LayerTimes llm_logits_times(const LlmSpec& spec);
// The loss's kernels (part of llm_logits_times): counted on GPUs with measured kernel rates, as
// the layers' memory-bound kernels are; zero elsewhere, where the roofline's efficiencies,
// chosen against end-to-end throughput, already hold them.
LayerTimes llm_loss_times(const LlmSpec& spec);

} // namespace ddlsim::models
