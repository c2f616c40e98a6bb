// Bisection bandwidth by max-flow. Private to the topologies library.
#pragma once

#include "ddlsim/topologies/topology.hpp"

namespace ddlsim::topo::detail {

// Max-flow (bytes/s) from the GPUs of nodes [0, nodes/2) to those of nodes [nodes/2, nodes),
// over capacities = link bandwidths, with the routing's transit rules: flow never enters a
// source-side server nor leaves a sink-side server, and never passes through a GPU. 0 when
// there are fewer than 2 nodes.
double bisection_bytes_per_second(const Topology& topology);

} // namespace ddlsim::topo::detail
