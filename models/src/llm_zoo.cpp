// The transformer shapes of the bundled LLMs, and the parameter and FLOP counts of any shape.
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/suggest.hpp"
#include "ddlsim/models/llm.hpp"

#include <algorithm>
#include <cctype>

namespace ddlsim::models {
namespace {

LlmShape dense(std::string name, std::string source, int layers, std::int64_t hidden, int heads,
               int kv_heads, std::int64_t ffn, int seq_len, std::int64_t vocab, bool gated,
               bool tied) {
  LlmShape s;
  s.name = std::move(name);
  s.source = std::move(source);
  s.layers = layers;
  s.hidden = hidden;
  s.heads = heads;
  s.kv_heads = kv_heads;
  s.ffn = ffn;
  s.seq_len = seq_len;
  s.vocab = vocab;
  s.gated_ffn = gated;
  s.tied_embeddings = tied;
  return s;
}

std::vector<LlmShape> zoo() {
  std::vector<LlmShape> out;
  // Brown et al. 2020, "Language Models are Few-Shot Learners", Table 2.1 (96 layers, d_model
  // 12,288, 96 heads, context 2,048); FFN 4 x d_model and the GPT-2 vocabulary of 50,257 tokens
  // (section 2.1); GELU FFN, tied embeddings. 174.6 B parameters counted here (175 B published).
  out.push_back(dense("gpt3-175b", "Brown et al. 2020, Table 2.1", 96, 12288, 96, 96, 4 * 12288,
                      2048, 50257, false, true));
  // Touvron et al. 2023, "Llama 2", Table 1 (context 4,096; GQA for 70B) with the dimensions of
  // the released params.json (7B: 32 layers, 4,096, 32 heads, FFN 11,008; 70B: 80 layers, 8,192,
  // 64 heads, 8 KV heads, FFN 28,672; vocabulary 32,000).
  out.push_back(dense("llama2-7b", "Touvron et al. 2023 (Llama 2), Table 1 and params.json", 32,
                      4096, 32, 32, 11008, 4096, 32000, true, false));
  out.push_back(dense("llama2-70b", "Touvron et al. 2023 (Llama 2), Table 1 and params.json", 80,
                      8192, 64, 8, 28672, 4096, 32000, true, false));
  // Meta 2024, "The Llama 3 Herd of Models", Table 3 (layers, model dimension, FFN dimension,
  // heads, 8 KV heads; sequence 8,192 in pre-training); the released tokenizer has 128,256
  // tokens (the table rounds to 128K).
  const std::string llama3 = "Meta 2024, The Llama 3 Herd of Models, Table 3";
  out.push_back(dense("llama3-8b", llama3, 32, 4096, 32, 8, 14336, 8192, 128256, true, false));
  out.push_back(dense("llama3-70b", llama3, 80, 8192, 64, 8, 28672, 8192, 128256, true, false));
  out.push_back(dense("llama3-405b", llama3, 126, 16384, 128, 8, 53248, 8192, 128256, true, false));
  // Jiang et al. 2024, "Mixtral of Experts", Table 1: dim 4,096, 32 layers, 32 heads, 8 KV heads,
  // hidden_dim 14,336, 8 experts, top 2, context 32,768, vocabulary 32,000.
  LlmShape mixtral = dense("mixtral-8x7b", "Jiang et al. 2024 (Mixtral), Table 1", 32, 4096, 32, 8,
                           14336, 32768, 32000, true, false);
  mixtral.moe = MoeShape{8, 2, 1.0, 14336, 0, 0};
  out.push_back(mixtral);
  // DeepSeek-AI 2024, "DeepSeek-V3 Technical Report", section 4.2: 61 layers, hidden 7,168, 128
  // heads, the first 3 layers dense (FFN 18,432), then 1 shared + 256 routed experts of 2,048,
  // 8 per token, vocabulary 129,280 (config.json), sequence 4,096. "-like": its Multi-head Latent
  // Attention is modelled as plain multi-head attention (parameters within a few percent), and
  // multi-token prediction is left out; no token dropping (capacity factor 1).
  LlmShape deepseek = dense("deepseek-v3", "DeepSeek-V3 Technical Report, section 4.2", 61, 7168,
                            128, 128, 18432, 4096, 129280, true, false);
  deepseek.moe = MoeShape{256, 8, 1.0, 2048, 1, 3};
  out.push_back(deepseek);
  return out;
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

std::int64_t ffn_matrices(const LlmShape& s) {
  return s.gated_ffn ? 3 : 2;
}

} // namespace

std::int64_t LlmShape::attention_parameters() const {
  return 2 * hidden * hidden + 2 * hidden * kv_dim() + hidden; // Q, O; K, V; the norm
}

std::int64_t LlmShape::expert_parameters(int layer) const {
  if (!is_moe_layer(layer)) return 0;
  return static_cast<std::int64_t>(moe->experts) * ffn_matrices(*this) * hidden * moe->expert_ffn;
}

std::int64_t LlmShape::ffn_parameters(int layer) const {
  if (!is_moe_layer(layer)) return ffn_matrices(*this) * hidden * ffn + hidden;
  return expert_parameters(layer) +
         static_cast<std::int64_t>(moe->shared_experts) * ffn_matrices(*this) * hidden *
             moe->expert_ffn +
         hidden * moe->experts + hidden; // the router, the norm
}

std::int64_t LlmShape::embedding_parameters() const {
  return vocab * hidden * (tied_embeddings ? 1 : 2);
}

std::int64_t LlmShape::parameters() const {
  std::int64_t total = embedding_parameters() + hidden; // + the final norm
  for (int l = 0; l < layers; ++l) total += attention_parameters() + ffn_parameters(l);
  return total;
}

double LlmShape::layer_forward_flops_per_token(int layer) const {
  const double h = static_cast<double>(hidden);
  const double attention = 2.0 * (2 * h * h + 2 * h * static_cast<double>(kv_dim())) +
                           4.0 * static_cast<double>(seq_len) * h;
  const double mats = static_cast<double>(ffn_matrices(*this));
  double ffn_flops = 2.0 * mats * h * static_cast<double>(ffn);
  if (is_moe_layer(layer))
    ffn_flops =
        2.0 * mats * h * static_cast<double>(moe->expert_ffn) * (moe->top_k + moe->shared_experts) +
        2.0 * h * moe->experts; // the router
  return attention + ffn_flops;
}

double LlmShape::model_flops_per_token() const {
  double forward = 2.0 * static_cast<double>(hidden) * static_cast<double>(vocab); // logits
  for (int l = 0; l < layers; ++l) forward += layer_forward_flops_per_token(l);
  return 3.0 * forward;
}

LlmShape find_llm_shape(const std::string& name, const std::string& where) {
  for (const LlmShape& shape : zoo())
    if (shape.name == lower(name)) return shape;
  throw InputError(where, "no bundled model \"" + name + "\"" +
                              did_you_mean(name, llm_shape_names()) + "; use one of " +
                              join_choices(llm_shape_names()) +
                              " or give the shape inline ({\"layers\", \"hidden\", ...})");
}

std::vector<std::string> llm_shape_names() {
  std::vector<std::string> names;
  for (const LlmShape& shape : zoo()) names.push_back(shape.name);
  return names;
}

std::string_view to_string(Recompute recompute) {
  switch (recompute) {
  case Recompute::none:
    return "none";
  case Recompute::selective:
    return "selective";
  case Recompute::full:
    return "full";
  }
  return "none";
}

std::string_view to_string(LlmPrecision precision) {
  switch (precision) {
  case LlmPrecision::fp8:
    return "fp8";
  case LlmPrecision::fp16:
    return "fp16";
  default:
    return "bf16";
  }
}

int llm_rank(const LlmParallel& layout, LlmCoords c) {
  return c.tp + layout.tp * (c.dp + layout.dp * c.pp);
}

LlmCoords llm_coords(const LlmParallel& layout, int rank) {
  LlmCoords c;
  c.tp = rank % layout.tp;
  c.dp = (rank / layout.tp) % layout.dp;
  c.pp = rank / (layout.tp * layout.dp);
  return c;
}

// Megatron-LM reduces BF16 training's gradients in FP32 (arguments.py sets
// accumulate_allreduce_grads_in_fp32 for --bf16, and since 2025 not with --grad-reduce-in-bf16),
// but not --fp16's; NeMo's distributed Adam syncs them in its optimizer dtype, FP32, unless
// optim.grad_sync_dtype says otherwise; DeepSpeed's ZeRO-2 and 3 reduce them in the model's 16-bit
// dtype (communication_data_type unset).
coll::DataType LlmSpec::grad_reduce_dtype() const {
  if (grad_reduce) return *grad_reduce;
  return parallel.zero <= 1 && precision != LlmPrecision::fp16 ? coll::DataType::fp32
                                                               : coll::DataType::fp16;
}

std::int64_t LlmSpec::bucket_parameters() const {
  return std::max<std::int64_t>(40'000'000, 1'000'000LL * parallel.dp);
}

} // namespace ddlsim::models
