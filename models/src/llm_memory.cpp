// Validation of an LLM layout and its memory per GPU.
//
// Model states (Rajbhandari et al. 2020, "ZeRO", section 3.1 and Figure 1): mixed-precision Adam
// keeps 2 bytes of fp16/bf16 weights, 2 bytes of gradients and K = 12 bytes of optimizer states
// (fp32 master weights, momentum, variance) per parameter. ZeRO-1 shards the optimizer states
// over the N_d data-parallel ranks, ZeRO-2 also the gradients, ZeRO-3 also the weights (which a
// layer gathers whole before it runs: the gathered layer and the next one being fetched stay).
// Experts are sharded over their own data-parallel group (dp / ep ranks).
//
// Activations of one layer and micro-batch (Korthikanti et al. 2022, "Reducing Activation
// Recomputation in Large Transformer Models", section 4, 2-byte activations, GPT's layer):
//   no recompute, TP without SP:  s b h (10 + 24 / t + 5 a s / (h t))
//   with sequence parallelism:    s b h (34 / t + 5 a s / (h t))
//   selective recompute (+ SP):   s b h 34 / t      (the attention scores are recomputed)
//   full recompute:               2 s b h (/ t with SP): the layer's input only
// generalised to grouped-query attention and other FFN sizes by the terms the 34 is made of:
// attention 7 + 4 g / a (Q, K, V, the input, the context, a dropout mask: 11 when g = a), FFN
// 3 + 4 f / h (its input, the mask, the activation's input and output; x 1.5 for a gated FFN's
// two branches; an MoE layer's f is top_k x capacity factor x the expert FFN, plus shared
// experts), the two norms' inputs 4. The 10 that TP does not split without SP are the norms'
// inputs, both blocks' inputs and the two dropout masks. A stage holds the activations of the
// forward passes it runs before its first backward pass: with 1F1B those of min(m, p - i)
// micro-batches through its layers at stage i of p, with interleaving that many chunk passes of
// its warm-up + 1, each through 1 / vpp of its layers (stage 0: p (1 + (p - 1) / (p v))
// micro-batches' worth, Korthikanti et al. 2022, section 4.2.3); the last stage also holds the
// fp32 logits for the loss (4 s b V / t).
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/models/llm.hpp"

#include <algorithm>
#include <cmath>

namespace ddlsim::models {
namespace {

double gib(double bytes) {
  return bytes / (1024.0 * 1024.0 * 1024.0);
}

std::string fixed(double value, int digits) {
  return format_fixed(value, digits);
}

// Activation bytes of layer `layer` for one micro-batch on one GPU.
double layer_activations(const LlmSpec& spec, int layer) {
  const LlmShape& m = spec.shape;
  const double s = m.seq_len, b = spec.micro_batch, h = static_cast<double>(m.hidden), a = m.heads,
               t = spec.parallel.tp;
  const double sbh = s * b * h;
  const bool sp = spec.parallel.sequence_parallel && t > 1;
  if (spec.recompute == Recompute::full) return 2 * sbh / (sp ? t : 1);
  double f = static_cast<double>(m.ffn);
  if (m.is_moe_layer(layer))
    f = static_cast<double>(m.moe->expert_ffn) *
        (m.moe->top_k * m.moe->capacity_factor + m.moe->shared_experts);
  const double attention = 7 + 4.0 * m.kv_heads / m.heads;
  const double ffn = 3 + 4 * f / h * (m.gated_ffn ? 1.5 : 1.0);
  const double total = attention + ffn + 4; // 34 for GPT-3's shape
  const double scores = spec.recompute == Recompute::selective ? 0 : 5 * a * s / (h * t);
  if (sp || t == 1) return sbh * (total / t + scores);
  return sbh * (10 + (total - 10) / t + scores);
}

// Throws at `par`/`key` when the degree `key` = `degree` does not divide `count` `what`.
void require_divides(const std::string& par, const std::string& key, int degree, std::int64_t count,
                     const std::string& what) {
  if (count % degree == 0) return;
  throw InputError(par + "/" + key, key + " " + std::to_string(degree) + " does not divide the " +
                                        std::to_string(count) + " " + what);
}

} // namespace

void validate_llm(const LlmSpec& spec, int cluster_gpus, const std::string& where) {
  const LlmParallel& p = spec.parallel;
  const LlmShape& m = spec.shape;
  const std::string par = where + "/parallel";
  const std::int64_t product = std::int64_t{p.tp} * p.pp * p.dp; // no int overflow
  if (product != cluster_gpus)
    throw InputError(par, "tp x pp x dp = " + std::to_string(p.tp) + " x " + std::to_string(p.pp) +
                              " x " + std::to_string(p.dp) + " = " + std::to_string(product) +
                              " GPUs, but the cluster has " + std::to_string(cluster_gpus) +
                              "; make the product equal the cluster's GPUs (or leave \"dp\" out "
                              "to derive it)");
  require_divides(par, "tp", p.tp, m.heads, "attention heads; use a divisor of the heads");
  require_divides(par, "tp", p.tp, m.kv_heads,
                  "KV heads (Megatron splits query groups over TP); use a divisor of kv_heads");
  if (m.ffn % p.tp != 0 || (m.moe && m.moe->expert_ffn % p.tp != 0))
    throw InputError(par + "/tp", "tp " + std::to_string(p.tp) +
                                      " does not divide the FFN size; use a divisor of it");
  if (m.layers % (p.pp * p.vpp) != 0)
    throw InputError(par + "/pp", "pp x vpp = " + std::to_string(p.pp * p.vpp) +
                                      " does not divide the " + std::to_string(m.layers) +
                                      " layers; every stage needs the same number of layers");
  if (p.sequence_parallel && m.seq_len % p.tp != 0)
    throw InputError(par + "/sequence_parallel",
                     "sequence parallelism splits the " + std::to_string(m.seq_len) +
                         " tokens of a sequence over tp " + std::to_string(p.tp) +
                         ", which does not divide them; change seq_len or tp");
  if (p.zero < 0 || p.zero > 3)
    throw InputError(par + "/zero", "ZeRO stages are 0 to 3, found " + std::to_string(p.zero));
  if (p.ep > 1) {
    if (!m.moe)
      throw InputError(par + "/ep", "expert parallelism needs an MoE model (\"moe\" in the "
                                    "model); use ep 1");
    if (p.dp % p.ep != 0)
      throw InputError(par + "/ep", "ep " + std::to_string(p.ep) + " must divide dp " +
                                        std::to_string(p.dp) +
                                        " (experts are spread over data-parallel ranks, as in "
                                        "Megatron-LM)");
    require_divides(par, "ep", p.ep, m.moe->experts, "experts");
  }
  // The plan holds each stage's work in order: about 12 entries per layer and micro-batch.
  const double entries = 12.0 *
                         (static_cast<double>(spec.global_batch) / (spec.micro_batch * p.dp)) *
                         (static_cast<double>(m.layers) / p.pp);
  if (entries > kMaxLlmStageEntries)
    throw InputError(where + "/global_batch",
                     "the layout runs " + format_fixed(entries / 1e6, 1) +
                         " million steps of work per pipeline stage (layers per stage x "
                         "micro-batches), more than the " +
                         std::to_string(kMaxLlmStageEntries / 1'000'000) +
                         " million simulated; lower global_batch or raise micro_batch, dp or pp");
  if (spec.global_batch % (std::int64_t{spec.micro_batch} * p.dp) != 0)
    throw InputError(where + "/global_batch",
                     "the global batch of " + std::to_string(spec.global_batch) +
                         " sequences is not a multiple of micro_batch x dp = " +
                         std::to_string(spec.micro_batch) + " x " + std::to_string(p.dp) +
                         "; change global_batch or micro_batch");
  // Megatron-LM's rules for the interleaved schedule: more than 2 pipeline stages
  // (megatron/core/parallel_state.py) and micro-batches in whole groups of pp
  // (megatron/core/pipeline_parallel/schedules.py, forward_backward_pipelining_with_interleaving).
  if (p.vpp > 1 && p.pp <= 2)
    throw InputError(par + "/vpp", "interleaved 1F1B (vpp " + std::to_string(p.vpp) +
                                       ") needs pp > 2 (Megatron-LM's rule), found pp " +
                                       std::to_string(p.pp) + "; use vpp 1 or raise pp");
  if (p.vpp > 1 && spec.micro_batches() % p.pp != 0)
    throw InputError(
        where + "/global_batch",
        "interleaved 1F1B runs micro-batches in groups of pp = " + std::to_string(p.pp) +
            ", but global_batch / (micro_batch x dp) = " + std::to_string(spec.micro_batches()) +
            " is not a multiple of it; change global_batch or micro_batch, or use "
            "vpp 1");
}

LlmMemory llm_memory(const LlmSpec& spec) {
  const LlmParallel& p = spec.parallel;
  const LlmShape& m = spec.shape;
  const int per_chunk = m.layers / (p.pp * p.vpp);
  const int m_batches = spec.micro_batches();
  LlmMemory best;
  for (int stage = 0; stage < p.pp; ++stage) {
    // The stage's layers: model chunk c is virtual stage c x pp + stage.
    std::vector<int> layers;
    for (int c = 0; c < p.vpp; ++c)
      for (int l = 0; l < per_chunk; ++l) layers.push_back((c * p.pp + stage) * per_chunk + l);
    double dense = 0, experts = 0, largest_layer = 0;
    for (int l : layers) {
      const double e = static_cast<double>(m.expert_parameters(l));
      const double layer = static_cast<double>(m.attention_parameters() + m.ffn_parameters(l));
      dense += (layer - e) / p.tp;
      experts += e / (static_cast<double>(p.tp) * p.ep);
      largest_layer = std::max(largest_layer, (layer - e) / p.tp + e / (p.tp * p.ep));
    }
    const double vh = static_cast<double>(m.vocab) * static_cast<double>(m.hidden) / p.tp;
    if (stage == 0) dense += vh;
    if (stage == p.pp - 1 && (!m.tied_embeddings || p.pp > 1)) dense += vh;
    const double nd = p.dp, nd_expert = static_cast<double>(p.dp) / p.ep;
    auto shard = [&](double bytes_per_param, bool sharded) {
      return sharded ? bytes_per_param * (dense / nd + experts / nd_expert)
                     : bytes_per_param * (dense + experts);
    };
    LlmMemory mem;
    mem.stage = stage;
    mem.parameters = shard(2, p.zero >= 3) + (p.zero >= 3 ? 2 * 2 * largest_layer : 0);
    mem.gradients = shard(2, p.zero >= 2);
    mem.optimizer = shard(12, p.zero >= 1);
    double per_micro_batch = 0;
    for (int l : layers) per_micro_batch += layer_activations(spec, l);
    // The chunk passes whose activations are held at once: the forward passes before the first
    // backward one (min(m, pp - stage) micro-batches with 1F1B), each through one chunk.
    int held = 0;
    for (const LlmPass& pass : llm_pipeline_order(p, m_batches, stage)) {
      if (!pass.forward) break;
      ++held;
    }
    mem.activations = per_micro_batch / p.vpp * held;
    if (stage == p.pp - 1)
      mem.activations += 4.0 * m.seq_len * spec.micro_batch * static_cast<double>(m.vocab) / p.tp;
    if (stage == 0 || mem.total() > best.total()) best = mem;
  }
  return best;
}

void check_llm_memory(const LlmSpec& spec, const std::string& where) {
  const LlmMemory mem = llm_memory(spec);
  const double capacity = spec.gpu.memory_capacity_bytes;
  if (capacity <= 0 || mem.total() <= capacity) return;
  const LlmParallel& p = spec.parallel;
  std::string fixes;
  if (p.zero < 3) fixes += "raise \"zero\" (now " + std::to_string(p.zero) + "), ";
  if (spec.recompute != Recompute::full)
    fixes += std::string("use \"recompute\": \"") +
             (spec.recompute == Recompute::none ? "selective\" or \"full\"" : "full\"") + ", ";
  if (!p.sequence_parallel && p.tp > 1) fixes += "turn on sequence_parallel, ";
  fixes += "raise tp or pp";
  if (spec.micro_batch > 1) fixes += ", or lower micro_batch";
  throw InputError(
      where + "/parallel",
      "the layout needs " + fixed(gib(mem.total()), 1) + " GiB per GPU on pipeline stage " +
          std::to_string(mem.stage) + " (weights " + fixed(gib(mem.parameters), 1) +
          ", gradients " + fixed(gib(mem.gradients), 1) + ", optimizer " +
          fixed(gib(mem.optimizer), 1) + ", activations " + fixed(gib(mem.activations), 1) +
          " GiB) but a " + spec.gpu.name + " has " + fixed(gib(capacity), 1) + " GiB: over by " +
          fixed(gib(mem.total() - capacity), 1) + " GiB; " + fixes);
}

} // namespace ddlsim::models
