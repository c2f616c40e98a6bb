// Builds a Topology from a ClusterSpec: the nodes from their NodeSpecs, then the fabric that
// joins their NICs. Throws InputError (naming the /topology path) when the spec cannot be built,
// e.g. more NICs than a fat tree has host ports.
#pragma once

#include "ddlsim/topologies/cluster_spec.hpp"
#include "ddlsim/topologies/topology.hpp"

namespace ddlsim::topo {

Topology build_topology(const ClusterSpec& spec);

} // namespace ddlsim::topo
