// Per-layer figures of BERT- and GPT-2-style transformers from their shape. The formulas are
// scripts/gen_zoo.py's (its module docstring defines the fields): a linear layer of fin x fout
// over t tokens has fin*fout + fout parameters and 2*fin*fout*t forward FLOPs; backward is twice
// the forward for layers with weights and once for the rest; activation bytes are the output
// elements x 4 (fp32).
#include "ddlsim/models/transformer_shape.hpp"

namespace ddlsim::models {
namespace {

class LayerList {
public:
  explicit LayerList(Model& model) : model_(model) {}

  void add(const std::string& name, LayerKind kind, std::uint64_t parameters, double forward,
           std::uint64_t output_elements, std::optional<double> backward = std::nullopt) {
    Layer layer;
    layer.name = name;
    layer.kind = kind;
    layer.parameters = parameters;
    layer.forward_flops = forward;
    layer.backward_flops = backward ? *backward : parameters > 0 ? 2 * forward : forward;
    layer.activation_bytes = output_elements * 4;
    model_.layers.push_back(layer);
  }
  void linear(const std::string& name, std::uint64_t in, std::uint64_t out, std::uint64_t tokens) {
    add(name, LayerKind::linear, in * out + out, 2.0 * double(in * out * tokens), out * tokens);
  }
  // Layer norm: gamma and beta; about 8 operations per element.
  void layer_norm(const std::string& name, std::uint64_t d, std::uint64_t tokens) {
    add(name, LayerKind::norm, 2 * d, 8.0 * double(d * tokens), d * tokens);
  }
  // QK^T and softmax(.)V: two s x s x d multiply-add matmuls, and the softmax over the scores
  // (about 5 operations per score); output: the scores and the context.
  void attention(const std::string& name, std::uint64_t d, std::uint64_t s, std::uint64_t heads) {
    add(name, LayerKind::attention, 0, 4.0 * double(s * s * d) + 5.0 * double(heads * s * s),
        heads * s * s + s * d);
  }
  void gelu(const std::string& name, std::uint64_t width, std::uint64_t tokens) {
    add(name, LayerKind::elementwise, 0, 8.0 * double(width * tokens), width * tokens);
  }

private:
  Model& model_;
};

void bert_layers(const TransformerShape& t, LayerList& net) {
  const std::uint64_t d = t.hidden, s = t.seq_len, ff = t.ffn, heads = t.heads;
  net.add("embeddings.word_embeddings", LayerKind::embedding, std::uint64_t(t.vocab) * d, 0, d * s);
  net.add("embeddings.position_embeddings", LayerKind::embedding, std::uint64_t(t.positions) * d, 0,
          d * s);
  net.add("embeddings.token_type_embeddings", LayerKind::embedding, 2 * d, 2.0 * double(d * s),
          d * s);
  net.layer_norm("embeddings.LayerNorm", d, s);
  for (int i = 0; i < t.layers; ++i) {
    const std::string p = "encoder.layer." + std::to_string(i) + ".";
    for (const char* name : {"attention.self.query", "attention.self.key", "attention.self.value"})
      net.linear(p + name, d, d, s);
    net.attention(p + "attention.scores", d, s, heads);
    net.linear(p + "attention.output.dense", d, d, s);
    net.layer_norm(p + "attention.output.LayerNorm", d, s);
    net.linear(p + "intermediate.dense", d, ff, s);
    net.gelu(p + "intermediate.dense.gelu", ff, s);
    net.linear(p + "output.dense", ff, d, s);
    net.layer_norm(p + "output.LayerNorm", d, s);
  }
  net.linear("pooler.dense", d, d, 1); // the [CLS] token only
}

void gpt2_layers(const TransformerShape& t, LayerList& net) {
  const std::uint64_t d = t.hidden, s = t.seq_len, ff = t.ffn, heads = t.heads, v = t.vocab;
  net.add("wte", LayerKind::embedding, v * d, 0, d * s);
  net.add("wpe", LayerKind::embedding, std::uint64_t(t.positions) * d, double(d * s), d * s);
  for (int i = 0; i < t.layers; ++i) {
    const std::string p = "h." + std::to_string(i) + ".";
    net.layer_norm(p + "ln_1", d, s);
    net.linear(p + "attn.c_attn", d, 3 * d, s);
    net.attention(p + "attn.scores", d, s, heads);
    net.linear(p + "attn.c_proj", d, d, s);
    net.layer_norm(p + "ln_2", d, s);
    net.linear(p + "mlp.c_fc", d, ff, s);
    net.gelu(p + "mlp.gelu", ff, s);
    net.linear(p + "mlp.c_proj", ff, d, s);
  }
  net.layer_norm("ln_f", d, s);
  // The head reuses wte's weights: its time counts (input and weight gradients), its parameters
  // do not.
  net.add("lm_head (tied to wte)", LayerKind::linear, 0, 2.0 * double(d * v * s), v * s,
          4.0 * double(d * v * s));
}

} // namespace

std::optional<TransformerShape> zoo_transformer_shape(std::string_view name) {
  // Devlin et al. 2019 (bert-*-uncased: vocabulary 30,522, 512 positions, FFN 4h); Radford et
  // al. 2019 (gpt2-medium: vocabulary 50,257, 1,024 positions). The zoo's sequence lengths: 128
  // (BERT pre-training phase 1) and 1,024.
  if (name == "bert_base")
    return TransformerShape{TransformerKind::bert, 12, 768, 12, 3072, 128, 30522, 512};
  if (name == "bert_large")
    return TransformerShape{TransformerKind::bert, 24, 1024, 16, 4096, 128, 30522, 512};
  if (name == "gpt2_medium")
    return TransformerShape{TransformerKind::gpt2, 24, 1024, 16, 4096, 1024, 50257, 1024};
  return std::nullopt;
}

std::string transformer_shape_error(const TransformerShape& t) {
  if (t.layers < 1 || t.hidden < 1 || t.heads < 1 || t.ffn < 1 || t.seq_len < 1 || t.vocab < 1 ||
      t.positions < 1)
    return "every size of the shape must be at least 1";
  if (t.hidden % t.heads != 0)
    return "heads (" + std::to_string(t.heads) + ") must divide hidden (" +
           std::to_string(t.hidden) + ")";
  if (t.seq_len > t.positions)
    return "a sequence of " + std::to_string(t.seq_len) + " tokens is longer than the model's " +
           std::to_string(t.positions) + " position embeddings";
  return {};
}

Model transformer_model(const TransformerShape& shape, const std::string& name) {
  Model model;
  model.name = name;
  LayerList net(model);
  if (shape.kind == TransformerKind::bert) {
    model.source = "BERT-style encoder from its shape (Hugging Face BertModel with pooler)";
    model.convention =
        "BertModel parameters including the pooler, excluding the pre-training heads";
    bert_layers(shape, net);
  } else {
    model.source = "GPT-2-style decoder from its shape (Hugging Face GPT2Model, tied LM head)";
    model.convention =
        "GPT2Model parameters; the language-model head is tied to wte and counted once";
    gpt2_layers(shape, net);
  }
  model.sample = "one sequence of " + std::to_string(shape.seq_len) + " tokens";
  model.total_parameters = model.parameters();
  return model;
}

} // namespace ddlsim::models
