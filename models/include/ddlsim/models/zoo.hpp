// The DNN model zoo: each model as its layers in forward (= parameter registration) order, with
// parameters, FLOPs per sample and activation bytes per sample. The bundled models
// (models/zoo/*.json, written by scripts/gen_zoo.py from the architectures) have totals equal to
// the published parameter counts; a user adds a model as a JSON file of the same format:
//
//   {"name": "mynet", "source": "where the figures come from", "total_parameters": 1234,
//    "layers": [{"name": "fc", "kind": "linear", "parameters": 1234, "forward_flops": 2468,
//                "backward_flops": 4936, "activation_bytes": 4}]}
//
// ("convention" and "sample" are optional free text; "model_parallel": true marks a layer that
// is sharded across GPUs, such as DLRM's embedding tables: its gradient is not all-reduced and
// its output is exchanged by all-to-all.)
#pragma once

#include "ddlsim/core/json_reader.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ddlsim::models {

enum class LayerKind : std::uint8_t { conv, linear, attention, norm, embedding, pool, elementwise };
inline constexpr std::size_t kLayerKinds = 7;
std::string_view to_string(LayerKind kind);

struct Layer {
  std::string name;
  LayerKind kind = LayerKind::linear;
  std::uint64_t parameters = 0;
  double forward_flops = 0;           // per sample
  double backward_flops = 0;          // per sample
  std::uint64_t activation_bytes = 0; // output per sample, fp32
  bool model_parallel = false;
};

struct Model {
  std::string name;
  std::string source;
  std::string convention;
  std::string sample; // what one sample is (an image, a sequence of 128 tokens)
  std::uint64_t total_parameters = 0;
  std::vector<Layer> layers;

  std::uint64_t parameters() const;       // sum over layers (equals total_parameters)
  std::uint64_t dense_parameters() const; // those all-reduced (not model parallel)
  double forward_flops() const;           // per sample
};

// Parses a model document strictly (unknown keys are errors); `origin` names it in messages.
// The layers' parameters must add up to total_parameters.
Model parse_model(const JsonValue& document);
// The same on a whole JSON document, errors prefixed with `origin` (a file name).
Model parse_model_from(const Json& json, const std::string& origin);

// A bundled model by name (see zoo_model_names()), or else a JSON file at `name_or_path`
// (relative to `base_dir`). Throws InputError naming `where` with the valid names.
Model load_model(const std::string& name_or_path, const std::filesystem::path& base_dir,
                 const std::string& where);

std::vector<std::string> zoo_model_names();

} // namespace ddlsim::models
