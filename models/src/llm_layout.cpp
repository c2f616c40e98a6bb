// An LLM job's layout outside the plan: the order of a pipeline stage's passes (1F1B and
// interleaved 1F1B, Narayanan et al. 2021), its pipeline peers, and the members of each
// parallel group in Megatron's rank order (llm.hpp).
#include "ddlsim/models/llm.hpp"

#include <algorithm>

namespace ddlsim::models {

std::vector<LlmPass> llm_pipeline_order(const LlmParallel& layout, int micro_batches, int stage) {
  const int pp = layout.pp, vpp = layout.vpp;
  const int total = micro_batches * vpp;
  int warmup = std::min(pp - stage - 1, micro_batches);
  if (vpp > 1)
    warmup = micro_batches == pp ? total : std::min((pp - stage - 1) * 2 + (vpp - 1) * pp, total);
  auto pass = [&](int k, bool forward) {
    LlmPass out;
    out.forward = forward;
    if (vpp == 1) {
      out.micro_batch = k;
      return out;
    }
    const int in_group = k % (pp * vpp);
    out.micro_batch = k / (pp * vpp) * pp + in_group % pp;
    out.chunk = forward ? in_group / pp : vpp - 1 - in_group / pp;
    return out;
  };
  std::vector<LlmPass> order;
  order.reserve(static_cast<std::size_t>(2 * total));
  for (int k = 0; k < warmup; ++k) order.push_back(pass(k, true));
  for (int k = 0; k < total - warmup; ++k) {
    order.push_back(pass(warmup + k, true));
    order.push_back(pass(k, false));
  }
  for (int k = total - warmup; k < total; ++k) order.push_back(pass(k, false));
  return order;
}

int llm_pipeline_peer(const LlmParallel& layout, int stage, bool forward_dir, bool send) {
  const int step = send == forward_dir ? 1 : -1;
  return (stage + step + layout.pp) % layout.pp;
}

std::vector<int> LlmPlan::group_members(LlmGroup group, int job_rank) const {
  const LlmParallel& p = spec.parallel;
  const LlmCoords c = llm_coords(p, job_rank);
  std::vector<int> out;
  switch (group) {
  case LlmGroup::tp:
    for (int t = 0; t < p.tp; ++t) out.push_back(llm_rank(p, {t, c.dp, c.pp}));
    break;
  case LlmGroup::dp:
    for (int d = 0; d < p.dp; ++d) out.push_back(llm_rank(p, {c.tp, d, c.pp}));
    break;
  case LlmGroup::ep: // consecutive DP ranks
    for (int d = c.dp / p.ep * p.ep; d < (c.dp / p.ep + 1) * p.ep; ++d)
      out.push_back(llm_rank(p, {c.tp, d, c.pp}));
    break;
  case LlmGroup::expert_dp: // the DP ranks holding the same experts
    for (int d = c.dp % p.ep; d < p.dp; d += p.ep) out.push_back(llm_rank(p, {c.tp, d, c.pp}));
    break;
  }
  return out;
}

} // namespace ddlsim::models
