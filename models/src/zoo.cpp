#include "ddlsim/models/zoo.hpp"

#include "bundled_zoo.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/suggest.hpp"

#include <array>

namespace ddlsim::models {
namespace {

constexpr std::array kKinds{LayerKind::conv,       LayerKind::linear,    LayerKind::attention,
                            LayerKind::norm,       LayerKind::embedding, LayerKind::pool,
                            LayerKind::elementwise};

constexpr double kMaxFlops = 1e18;
constexpr std::uint64_t kMaxCount = 1ull << 50;

Layer parse_layer(const JsonValue& value) {
  JsonObject object = value.object();
  Layer layer;
  layer.name = object.required("name").non_empty_string();
  std::vector<std::string> kinds;
  for (LayerKind kind : kKinds) kinds.emplace_back(to_string(kind));
  const std::string kind = object.required("kind").choice(kinds);
  for (LayerKind k : kKinds)
    if (to_string(k) == kind) layer.kind = k;
  layer.parameters =
      static_cast<std::uint64_t>(object.required("parameters").integer(0, kMaxCount));
  layer.forward_flops = object.required("forward_flops").number(0, kMaxFlops);
  layer.backward_flops = object.required("backward_flops").number(0, kMaxFlops);
  layer.activation_bytes =
      static_cast<std::uint64_t>(object.required("activation_bytes").integer(0, kMaxCount));
  if (auto v = object.optional("model_parallel")) layer.model_parallel = v->boolean();
  object.finish();
  return layer;
}

} // namespace

Model parse_model_from(const Json& json, const std::string& origin) {
  try {
    return parse_model(JsonValue(json, ""));
  } catch (const InputError& e) {
    throw InputError(origin + ": " + (e.where().empty() ? "/" : e.where()), e.reason());
  }
}

std::string_view to_string(LayerKind kind) {
  switch (kind) {
  case LayerKind::conv:
    return "conv";
  case LayerKind::linear:
    return "linear";
  case LayerKind::attention:
    return "attention";
  case LayerKind::norm:
    return "norm";
  case LayerKind::embedding:
    return "embedding";
  case LayerKind::pool:
    return "pool";
  case LayerKind::elementwise:
    return "elementwise";
  }
  return "?";
}

std::uint64_t Model::parameters() const {
  std::uint64_t total = 0;
  for (const Layer& layer : layers) total += layer.parameters;
  return total;
}

std::uint64_t Model::dense_parameters() const {
  std::uint64_t total = 0;
  for (const Layer& layer : layers)
    if (!layer.model_parallel) total += layer.parameters;
  return total;
}

double Model::forward_flops() const {
  double total = 0;
  for (const Layer& layer : layers) total += layer.forward_flops;
  return total;
}

Model parse_model(const JsonValue& document) {
  JsonObject object = document.object();
  Model model;
  model.name = object.required("name").non_empty_string();
  model.source = object.required("source").non_empty_string();
  if (auto v = object.optional("convention")) model.convention = v->string();
  if (auto v = object.optional("sample")) model.sample = v->string();
  const JsonValue total = object.required("total_parameters");
  model.total_parameters = static_cast<std::uint64_t>(total.integer(0, kMaxCount));
  for (const JsonValue& layer : object.required("layers").array(1, 1 << 20))
    model.layers.push_back(parse_layer(layer));
  object.finish();
  if (model.parameters() != model.total_parameters)
    total.fail("the layers have " + std::to_string(model.parameters()) +
               " parameters in all, not " + std::to_string(model.total_parameters) +
               "; fix a layer or the total");
  return model;
}

Model load_model(const std::string& name_or_path, const std::filesystem::path& base_dir,
                 const std::string& where) {
  if (auto text = detail::bundled_model_text(name_or_path))
    return parse_model_from(parse_json_text(*text, "zoo model " + name_or_path),
                            "zoo model " + name_or_path);
  const std::filesystem::path path = base_dir / name_or_path;
  const bool looks_like_file =
      name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".json");
  if (!looks_like_file || !std::filesystem::exists(path)) {
    const std::vector<std::string> names = detail::bundled_model_names();
    throw InputError(where, "unknown model \"" + name_or_path + "\"" +
                                did_you_mean(name_or_path, names) + "; expected a zoo model (" +
                                join_choices(names) + ") or the path of a model JSON file");
  }
  return parse_model_from(parse_json_file(path, "a model file"), path.string());
}

std::vector<std::string> zoo_model_names() {
  return detail::bundled_model_names();
}

} // namespace ddlsim::models
