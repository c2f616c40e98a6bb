// /topology/fabric: {"type": "...", common keys, keys of that type}. A key that belongs to
// another fabric type is an error naming the types that use it.
#include "spec_parser_detail.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/suggest.hpp"
#include "ddlsim/topologies/spec_parser.hpp"

#include <algorithm>
#include <array>

namespace ddlsim::topo::detail {
namespace {

constexpr int kMaxLinksPerPair = 64;
constexpr long kMaxNicsPerLeaf = 1L << 20;
constexpr std::size_t kMaxCustomVertices = 1 << 20;
constexpr std::size_t kMaxCustomLinks = 1 << 22;
constexpr int kMaxTier = 16;

struct TypeName {
  const char* name;
  FabricType type;
};
constexpr std::array kTypeNames{
    TypeName{"single_switch", FabricType::single_switch},
    TypeName{"leaf_spine", FabricType::leaf_spine},
    TypeName{"fat_tree", FabricType::fat_tree},
    TypeName{"torus2d", FabricType::torus2d},
    TypeName{"torus3d", FabricType::torus3d},
    TypeName{"ring", FabricType::ring},
    TypeName{"rail_optimized", FabricType::rail_optimized},
    TypeName{"custom", FabricType::custom},
};

const char* name_of(FabricType type) {
  for (const TypeName& t : kTypeNames)
    if (t.type == type) return t.name;
  return "?";
}

// Keys that only some fabric types accept ("type", "bandwidth_gbps", "latency_ns" and
// "buffer_bytes" are for all).
struct KeyOwners {
  const char* key;
  std::vector<FabricType> types;
};
const std::vector<KeyOwners>& owned_keys() {
  using F = FabricType;
  static const std::vector<KeyOwners> keys{
      {"leaves", {F::leaf_spine}},
      {"spines", {F::leaf_spine}},
      {"nics_per_leaf", {F::leaf_spine}},
      {"links_per_pair", {F::leaf_spine, F::rail_optimized}},
      {"oversubscription", {F::leaf_spine, F::rail_optimized}},
      {"k", {F::fat_tree}},
      {"dims", {F::torus2d, F::torus3d, F::ring}},
      {"rail_spines", {F::rail_optimized}},
      {"vertices", {F::custom}},
      {"links", {F::custom}},
  };
  return keys;
}

void reject_foreign_keys(const JsonObject& object, const Json& raw, FabricType type) {
  for (const KeyOwners& owners : owned_keys()) {
    if (!raw.contains(owners.key)) continue;
    if (std::find(owners.types.begin(), owners.types.end(), type) != owners.types.end()) continue;
    std::vector<std::string> users;
    for (FabricType t : owners.types) users.emplace_back(name_of(t));
    const std::string why = "\"" + std::string(owners.key) + "\" is used by fabric type" +
                            (users.size() > 1 ? "s " : " ") + join_choices(users) + ", not by " +
                            name_of(type);
    throw InputError(object.child_path(owners.key), why);
  }
}

double bandwidth(const JsonValue& v) {
  return gbps_to_bytes_per_second(v.positive_number(kMaxBandwidthGbps));
}
Picoseconds latency(const JsonValue& v) {
  return ns_to_ps(v.number(0, kMaxLatencyNs));
}
std::uint64_t buffer(const JsonValue& v) {
  return v.bytes(1, kMaxBufferBytes);
}

void parse_custom(JsonObject& object, FabricSpec& spec) {
  if (auto vertices = object.optional("vertices"))
    for (const JsonValue& value : vertices->array(0, kMaxCustomVertices)) {
      JsonObject vertex = value.object();
      CustomVertex parsed;
      parsed.name = vertex.required("name").non_empty_string();
      if (auto tier = vertex.optional("tier"))
        parsed.tier = static_cast<int>(tier->integer(0, kMaxTier));
      vertex.finish();
      spec.custom_vertices.push_back(std::move(parsed));
    }
  for (const JsonValue& value : object.required("links").array(1, kMaxCustomLinks)) {
    JsonObject link = value.object();
    CustomLink parsed;
    parsed.from = link.required("from").non_empty_string();
    parsed.to = link.required("to").non_empty_string();
    if (auto v = link.optional("bandwidth_gbps")) parsed.bytes_per_second = bandwidth(*v);
    if (auto v = link.optional("latency_ns")) parsed.latency = latency(*v);
    if (auto v = link.optional("buffer_bytes")) parsed.buffer_bytes = buffer(*v);
    link.finish();
    spec.custom_links.push_back(std::move(parsed));
  }
}

void parse_dims(JsonObject& object, FabricSpec& spec) {
  const std::size_t rank = spec.type == FabricType::ring      ? 1
                           : spec.type == FabricType::torus2d ? 2
                                                              : 3;
  auto value = object.optional("dims");
  if (!value) {
    if (spec.type == FabricType::ring) return; // one position per node
    throw InputError(object.path(), std::string("missing required key \"dims\" (") +
                                        name_of(spec.type) + " needs " + std::to_string(rank) +
                                        " dimensions)");
  }
  const std::vector<JsonValue> dims = value->array(1, 3);
  if (dims.size() != rank)
    value->fail(std::string(name_of(spec.type)) + " needs " + std::to_string(rank) + " dimension" +
                (rank > 1 ? "s" : "") + ", found " + std::to_string(dims.size()));
  for (const JsonValue& d : dims)
    spec.dims.push_back(static_cast<int>(d.integer(1, kMaxTotalGpus)));
}

} // namespace

FabricSpec parse_fabric(const JsonValue& section) {
  JsonObject object = section.object();
  FabricSpec spec;
  std::vector<std::string> names;
  for (const TypeName& t : kTypeNames) names.emplace_back(t.name);
  const std::string type = object.required("type").choice(names);
  for (const TypeName& t : kTypeNames)
    if (type == t.name) spec.type = t.type;
  reject_foreign_keys(object, section.raw(), spec.type);

  if (auto v = object.optional("latency_ns")) spec.link_latency = latency(*v);
  if (auto v = object.optional("buffer_bytes")) spec.buffer_bytes = buffer(*v);
  if (auto v = object.optional("bandwidth_gbps")) spec.link_bytes_per_second = bandwidth(*v);
  auto uplinks = [&] {
    if (auto v = object.optional("links_per_pair"))
      spec.links_per_pair = static_cast<int>(v->integer(1, kMaxLinksPerPair));
    if (auto v = object.optional("oversubscription"))
      spec.oversubscription = v->positive_number(1024);
  };

  switch (spec.type) {
  case FabricType::single_switch:
    break;
  case FabricType::leaf_spine:
    spec.spines = static_cast<int>(object.required("spines").integer(1, kMaxSwitchesPerTier));
    if (auto v = object.optional("leaves"))
      spec.leaves = static_cast<int>(v->integer(1, kMaxSwitchesPerTier));
    if (auto v = object.optional("nics_per_leaf"))
      spec.nics_per_leaf = static_cast<int>(v->integer(1, kMaxNicsPerLeaf));
    uplinks();
    break;
  case FabricType::fat_tree:
    spec.k = static_cast<int>(object.required("k").integer(2, kMaxFatTreeK));
    if (spec.k % 2 != 0)
      throw InputError(object.child_path("k"),
                       "a k-ary fat tree needs an even k, found " + std::to_string(spec.k));
    break;
  case FabricType::torus2d:
  case FabricType::torus3d:
  case FabricType::ring:
    parse_dims(object, spec);
    break;
  case FabricType::rail_optimized:
    if (auto v = object.optional("rail_spines"))
      spec.rail_spines = static_cast<int>(v->integer(0, kMaxSwitchesPerTier));
    uplinks();
    break;
  case FabricType::custom:
    parse_custom(object, spec);
    break;
  }
  object.finish();
  return spec;
}

} // namespace ddlsim::topo::detail
