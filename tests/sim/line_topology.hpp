// A line of switches with links of given bandwidths and no latency: the flow network's tests
// share links between flows on it by choosing which stretch each flow crosses.
#pragma once

#include "ddlsim/topologies/topology.hpp"

#include <string>
#include <vector>

namespace ddlsim::sim::test {

// Vertices 0..n-1 on a line; link i joins i and i+1 (ids 2i forward, 2i+1 backward).
inline topo::Topology line(const std::vector<double>& bandwidths) {
  topo::Topology t;
  for (std::size_t i = 0; i <= bandwidths.size(); ++i)
    t.add_vertex(topo::Vertex{topo::VertexKind::network_switch, "v" + std::to_string(i)});
  for (std::size_t i = 0; i < bandwidths.size(); ++i)
    t.add_duplex_link(static_cast<topo::VertexId>(i), static_cast<topo::VertexId>(i + 1),
                      bandwidths[i], 0, topo::LinkClass::fabric);
  return t;
}

} // namespace ddlsim::sim::test
