// Node presets are data: topologies/presets/NAME.json, compiled in. Each file holds the node in
// the scenario's own node format ("node"), a "description", and "sources": the origin of every
// number (datasheet, whitepaper, cloud documentation, NCCL's tuning model), one entry per key of
// "node", so that a preset without a source for one of its figures does not load.
#include "ddlsim/topologies/presets.hpp"

#include "bundled_node_presets.hpp"
#include "node_builder.hpp"
#include "spec_parser_detail.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/json_reader.hpp"
#include "ddlsim/core/suggest.hpp"

namespace ddlsim::topo {
namespace {

// Every key of `node` must have a non-empty source, and every source must name a key of `node`.
void check_sources(const JsonValue& node, const JsonValue& sources) {
  JsonObject listed = sources.object();
  for (const auto& entry : node.raw().items()) {
    auto source = listed.optional(entry.key());
    if (!source)
      throw InputError(sources.path(), "no source for \"" + entry.key() +
                                           "\": every figure of a node preset names its origin");
    source->non_empty_string();
  }
  listed.finish(); // a source for a key the node does not give is a stale entry
}

} // namespace

NodeSpec parse_node_preset(std::string_view name, std::string_view text) {
  const std::string origin = "topologies/presets/" + std::string(name) + ".json";
  const Json json = parse_json_text(text, origin);
  const JsonValue root(json, origin + "#");
  JsonObject object = root.object();
  if (object.required("name").non_empty_string() != name)
    throw InputError(object.child_path("name"),
                     "must be the file's name, \"" + std::string(name) + "\"");
  object.required("description").non_empty_string();
  const JsonValue node_value = object.required("node");
  check_sources(node_value, object.required("sources"));
  object.finish();

  NodeSpec spec;
  spec.preset = std::string(name);
  JsonObject node = node_value.object();
  detail::read_node_fields(node, spec, /*from_preset=*/false);
  node.finish();
  detail::check_node_spec(spec, node_value.path());
  // The transport decides the NIC's data path and ceiling, so a preset never leaves it to the
  // default.
  if (spec.nics > 0 && !node_value.raw().contains("transport"))
    throw InputError(node_value.path(), "a preset with NICs names its \"transport\" (one of " +
                                            join_choices(transport_names()) + ") and its source");
  return spec;
}

std::optional<NodeSpec> find_node_preset(std::string_view name) {
  const std::optional<std::string_view> text = detail::bundled_node_preset_text(name);
  if (!text) return std::nullopt;
  return parse_node_preset(name, *text);
}

std::vector<std::string> node_preset_names() {
  return detail::bundled_node_preset_names();
}

} // namespace ddlsim::topo
