// Builds a Topology from a ClusterSpec: the nodes from their NodeSpecs, then the fabric that
// joins their NICs. Throws InputError (naming a path under spec.json_path, e.g.
// "/topology/fabric/k") when the spec cannot be built, e.g. more NICs than a fat tree has host
// ports, torus dims that do not multiply to the node count, an unknown custom vertex, or nodes
// whose GPUs cannot reach each other.
#pragma once

#include "ddlsim/topologies/cluster_spec.hpp"
#include "ddlsim/topologies/topology.hpp"

namespace ddlsim::topo {

Topology build_topology(const ClusterSpec& spec);

// The checks build_topology makes before building anything (ranges, ports, dims, custom
// names), without building; parse_cluster_spec runs them too. Only whether the nodes of a
// custom fabric can reach each other is left to build_topology.
void check_cluster_spec(const ClusterSpec& spec);

} // namespace ddlsim::topo
