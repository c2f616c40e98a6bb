// The fabric half of parse_cluster_spec. Private to the topologies library.
#pragma once

#include "ddlsim/core/json_reader.hpp"
#include "ddlsim/topologies/cluster_spec.hpp"

namespace ddlsim::topo::detail {

// Parses /topology/fabric: ranges, types and which keys each fabric type accepts. Checks that
// need the nodes (ports, dims) are left to check_cluster_spec.
FabricSpec parse_fabric(const JsonValue& section);

} // namespace ddlsim::topo::detail
