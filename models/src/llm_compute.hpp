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
};

BlockTimes llm_block_times(const LlmSpec& spec, int layer);
// The first stage's embedding lookup (memory-bound) and the last stage's logits with the loss.
LayerTimes llm_embedding_times(const LlmSpec& spec);
LayerTimes llm_logits_times(const LlmSpec& spec);

} // namespace ddlsim::models
