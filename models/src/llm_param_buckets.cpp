// A stage's weights per GPU and their parameter all-gather buckets (llm_param_buckets.hpp).
#include "llm_param_buckets.hpp"

#include <algorithm>
#include <iterator>

namespace ddlsim::models {

std::pair<double, double> llm_layer_parameters(const LlmSpec& spec, int layer) {
  const LlmShape& m = spec.shape;
  const double e = static_cast<double>(m.expert_parameters(layer));
  const double all = static_cast<double>(m.attention_parameters() + m.ffn_parameters(layer));
  return {(all - e) / spec.parallel.tp, e / (spec.parallel.tp * spec.parallel.ep)};
}

LlmParamBuckets llm_param_buckets(const LlmSpec& spec, const std::vector<int>& layers, int stage,
                                  bool experts) {
  const LlmShape& m = spec.shape;
  const double cap = static_cast<double>(spec.bucket_parameters());
  const double vh = static_cast<double>(m.vocab) * static_cast<double>(m.hidden) / spec.parallel.tp;
  LlmParamBuckets out;
  out.of_layer.assign(static_cast<std::size_t>(m.layers), -1);
  double open = 0;
  std::vector<int> members;
  auto close = [&] {
    for (int l : members) out.of_layer[std::size_t(l)] = static_cast<int>(out.size.size());
    out.size.push_back(open);
    open = 0;
    members.clear();
  };
  // Filled in backward order (the order the gradients are ready), numbered back to forward.
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
    const auto [dense, expert] = llm_layer_parameters(spec, *it);
    open += experts ? expert : dense;
    if (!experts && it == layers.rbegin() && stage == spec.parallel.pp - 1 &&
        (!m.tied_embeddings || spec.parallel.pp > 1))
      open += vh;                                                             // the output layer
    if (!experts && std::next(it) == layers.rend() && stage == 0) open += vh; // the embedding
    members.push_back(*it);
    if (open >= cap) close();
  }
  if (open > 0) close();
  std::reverse(out.size.begin(), out.size.end());
  const int n = static_cast<int>(out.size.size());
  for (int& b : out.of_layer)
    if (b >= 0) b = n - 1 - b;
  return out;
}

} // namespace ddlsim::models
