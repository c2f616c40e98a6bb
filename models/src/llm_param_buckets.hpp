// Where an LLM stage's weights are, per GPU, for the data-parallel collectives that move them:
// a layer's parameters on one GPU, and the buckets Megatron's overlapped parameter all-gathers
// fill (LlmParallel::overlap_param_gather; llm_plan.cpp launches them).
#pragma once

#include "ddlsim/models/llm.hpp"

#include <utility>
#include <vector>

namespace ddlsim::models {

// The weights of `layer` on one GPU of `spec`'s layout: dense ones (split over TP) and experts
// (split over TP and EP) apart.
std::pair<double, double> llm_layer_parameters(const LlmSpec& spec, int layer);

// A stage's layers in buckets as the gradients fill them (backward order, each closed once it
// reaches the bucket size; the first stage's embedding in the bucket of its first layer, the last
// stage's output layer in that of its last), dense weights and experts apart.
struct LlmParamBuckets {
  std::vector<double> size; // parameters per bucket, in forward order
  // Per layer of the model, the bucket its weights are in (forward order, the order the forward
  // pass needs them), or -1 for a layer of another stage.
  std::vector<int> of_layer;
};

// The buckets of `layers` (stage `stage`'s, in forward order): of the experts' weights when
// `experts`, else of the dense ones.
LlmParamBuckets llm_param_buckets(const LlmSpec& spec, const std::vector<int>& layers, int stage,
                                  bool experts);

} // namespace ddlsim::models
