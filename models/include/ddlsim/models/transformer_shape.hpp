// Transformer models of the data-parallel zoo as shapes: a BERT-style encoder (Hugging Face
// BertModel with its pooler, no pre-training heads) or a GPT-2-style decoder (GPT2Model; the
// language-model head tied to the token embedding, its time counted, its weights once). The bundled
// bert_base, bert_large and gpt2_medium are named shapes; models/zoo/*.json holds each at its
// default sequence length (written by scripts/gen_zoo.py with the same formulas; a test holds the
// two equal layer by layer), so a job can take another sequence length or its own shape.
#pragma once

#include "ddlsim/models/zoo.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ddlsim::models {

enum class TransformerKind : std::uint8_t { bert, gpt2 };

struct TransformerShape {
  TransformerKind kind = TransformerKind::bert;
  int layers = 0, hidden = 0, heads = 0, ffn = 0;
  int seq_len = 0;   // tokens per sample
  int vocab = 0;     // token embedding rows
  int positions = 0; // learned position embeddings: the longest sequence the model takes
};

// The shape of a bundled transformer (bert_base, bert_large, gpt2_medium), or nothing.
std::optional<TransformerShape> zoo_transformer_shape(std::string_view name);

// The model's layers in the zoo's format (per sample: parameters, FLOPs, fp32 activation bytes).
// The shape must be valid (transformer_shape_error gives the reason it is not).
Model transformer_model(const TransformerShape& shape, const std::string& name);

// Why the shape cannot be built (a non-positive size, heads not dividing hidden, a sequence longer
// than the position embeddings), or an empty string.
std::string transformer_shape_error(const TransformerShape& shape);

} // namespace ddlsim::models
