// Parts of parse_cluster_spec that the node presets share. Private to the topologies library.
#pragma once

#include "ddlsim/core/json_reader.hpp"
#include "ddlsim/topologies/cluster_spec.hpp"

namespace ddlsim::topo::detail {

// Parses /topology/fabric: ranges, types and which keys each fabric type accepts. Checks that
// need the nodes (ports, dims) are left to check_cluster_spec.
FabricSpec parse_fabric(const JsonValue& section);

// Reads a node's own keys (gpus, gpu_model, intra, NVLink, PCIe and NIC figures) from `object`
// into `spec`. Over a preset (`from_preset`) every key is optional; without one the keys a node
// cannot do without are required. Keys that do not apply to the node's intra are errors. The
// caller reads its other keys (preset, count) and finishes the object.
void read_node_fields(JsonObject& object, NodeSpec& spec, bool from_preset);

} // namespace ddlsim::topo::detail
