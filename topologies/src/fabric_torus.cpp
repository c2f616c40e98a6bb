// Direct fabrics: torus2d, torus3d and ring (a one-dimensional torus).
//
// One switch per position, named "torus<x>.<y>[.<z>]" ("ring<i>" for a ring); node p sits at
// position p with x varying fastest (p = x + dims[0] * (y + dims[1] * z)) and all its NICs on
// that switch. Along every dimension each switch links to its successor with wraparound; a
// dimension of 2 gets one link between its two positions (not two parallel ones), a dimension
// of 1 none.
#include "fabric_common.hpp"

namespace ddlsim::topo::detail {
namespace {

std::vector<int> coordinates(int position, const std::vector<int>& dims) {
  std::vector<int> coords;
  for (int d : dims) {
    coords.push_back(position % d);
    position /= d;
  }
  return coords;
}

int position_of(const std::vector<int>& coords, const std::vector<int>& dims) {
  int position = 0;
  for (std::size_t i = dims.size(); i-- > 0;) position = position * dims[i] + coords[i];
  return position;
}

std::string switch_name(FabricType type, int position, const std::vector<int>& coords) {
  if (type == FabricType::ring) return "ring" + std::to_string(position);
  std::string name = "torus";
  for (std::size_t i = 0; i < coords.size(); ++i)
    name += (i ? "." : "") + std::to_string(coords[i]);
  return name;
}

} // namespace

void build_torus(FabricBuilder& b) {
  const std::vector<int> dims = torus_dims(b.spec, b.shape.nics_per_node.size(), b.where);
  int positions = 1;
  for (int d : dims) positions *= d;
  std::vector<VertexId> switches;
  for (int p = 0; p < positions; ++p)
    switches.push_back(b.add_switch(switch_name(b.spec.type, p, coordinates(p, dims)), 0, p));
  for (const NicPort& nic : b.nics)
    b.connect_nic(nic, switches[static_cast<std::size_t>(nic.node)]);
  for (int p = 0; p < positions; ++p) {
    const std::vector<int> coords = coordinates(p, dims);
    for (std::size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] == 1 || (dims[d] == 2 && coords[d] == 1)) continue;
      std::vector<int> next = coords;
      next[d] = (coords[d] + 1) % dims[d];
      b.connect_switches(switches[static_cast<std::size_t>(p)],
                         switches[static_cast<std::size_t>(position_of(next, dims))], b.link_rate);
    }
  }
}

} // namespace ddlsim::topo::detail
