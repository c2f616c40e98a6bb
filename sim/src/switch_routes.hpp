// The links a switch step (rule 4 of collectives/step.hpp) loads, for the engines that time it.
//
// A group's switch is the first NVSwitch with in-switch reduction (Vertex::nvls) on the route
// from a member to the owner; every member's route must meet the same one. A switch_reduce
// loads each member's links up to that switch (its uplink: the switch reads the member's bytes
// once) and the switch's links down to the owner once (the sum); a switch_multicast loads the
// owner's uplink once and the links from the switch down to every member, the owner included
// (multimem.st writes every GPU of the multicast group). Each link carries the step's bytes
// once, so a max-min fair network times the step as one flow over the union of these links,
// and its latency is the slowest uplink plus the slowest downlink.
//
// What it does not model: a reduction rate of the switch below its link rate, the NVSwitch's
// internal crossbar, and the GPU-side copies into and out of NCCL's NVLS buffers. The step's
// payload efficiency (NCCL's nvlsEfficiency for multimem traffic) is the call protocol's: the
// analytic engine puts its wire bytes on these links.
#pragma once

#include "ddlsim/collectives/step.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/topologies/router.hpp"
#include "ddlsim/topologies/topology.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace ddlsim::sim::detail {

struct SwitchRoute {
  topo::Path links;        // the union, each link once (sorted by id)
  Picoseconds latency = 0; // slowest member-to-switch plus slowest switch-to-member leg
};

class SwitchRoutes {
public:
  SwitchRoutes(const topo::Topology& topology, topo::Router& router, std::uint64_t seed)
      : topology_(topology), router_(router), seed_(seed) {}

  // The route of a group of `members` (ranks, sorted) owned by `owner` on `channel`. Stable
  // reference (cached). Throws InputError at "topology" when a member's route to the owner has
  // no reducing switch, or the members' routes meet different ones.
  const SwitchRoute& route(coll::StepKind kind, std::int32_t owner, std::uint16_t channel,
                           const std::vector<std::int32_t>& members) {
    Key key{static_cast<std::uint8_t>(kind), owner, channel, members};
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    return cache_.emplace(std::move(key), build(kind, owner, channel, members)).first->second;
  }

private:
  using Key = std::tuple<std::uint8_t, std::int32_t, std::uint16_t, std::vector<std::int32_t>>;

  // A path cut at its reducing switch: the links up to it and after it.
  struct Legs {
    topo::VertexId hub = topo::kNoVertex;
    topo::Path up, down;
    Picoseconds up_latency = 0, down_latency = 0;
  };

  Legs split(std::int32_t from, std::int32_t to, std::uint16_t channel, coll::StepKind kind) {
    const topo::Path& path = router_.ecmp_path(seed_, from, to, channel);
    Legs legs;
    for (std::size_t i = 0; i < path.size(); ++i) {
      const topo::Link& link = topology_.link(path[i]);
      const topo::Vertex& at = topology_.vertex(link.dst);
      if (legs.hub == topo::kNoVertex) {
        legs.up.push_back(path[i]);
        legs.up_latency += link.latency;
        if (at.kind == topo::VertexKind::nvswitch && at.nvls) legs.hub = link.dst;
      } else {
        legs.down.push_back(path[i]);
        legs.down_latency += link.latency;
      }
    }
    if (legs.hub == topo::kNoVertex) no_switch(path, from, to, kind);
    return legs;
  }

  [[noreturn]] void no_switch(const topo::Path& path, std::int32_t from, std::int32_t to,
                              coll::StepKind kind) const {
    std::string route = gpu_name(from);
    bool plain_nvswitch = false;
    for (topo::LinkId id : path) {
      const topo::Vertex& at = topology_.vertex(topology_.link(id).dst);
      route += " -> " + at.name;
      plain_nvswitch = plain_nvswitch || at.kind == topo::VertexKind::nvswitch;
    }
    throw InputError(
        "topology",
        std::string(coll::to_string(kind)) + " between ranks " + std::to_string(from) + " and " +
            std::to_string(to) + " needs an NVSwitch that reduces in the switch (NVLS) on their " +
            "route, and " + route + " has none" +
            (plain_nvswitch ? " (its NVSwitch has no \"nvls\")" : "") +
            ": put the ranks on one node whose NVSwitch supports NVLink SHARP (\"nvls\": true; "
            "the H100, H200 and B200 presets set it), or choose an algorithm without in-switch "
            "reduction (e.g. ring, nccl_ring)");
  }

  std::string gpu_name(std::int32_t rank) const {
    return topology_.vertex(topology_.gpus()[static_cast<std::size_t>(rank)]).name;
  }

  SwitchRoute build(coll::StepKind kind, std::int32_t owner, std::uint16_t channel,
                    const std::vector<std::int32_t>& members) {
    std::int32_t other = -1; // a member other than the owner
    for (std::int32_t m : members)
      if (m != owner) other = m;
    SwitchRoute route;
    if (other < 0) return route; // a group of the owner alone moves nothing
    const bool reduce = kind == coll::StepKind::switch_reduce;
    const Legs owner_out = split(owner, other, channel, kind); // owner's uplink
    const Legs owner_in = split(other, owner, channel, kind);  // owner's downlink
    Picoseconds up = owner_out.up_latency, down = owner_in.down_latency;
    auto add = [&route](const topo::Path& links) {
      route.links.insert(route.links.end(), links.begin(), links.end());
    };
    add(owner_out.up);
    add(owner_in.down);
    for (std::int32_t m : members) {
      if (m == owner) continue;
      const Legs legs = reduce ? split(m, owner, channel, kind) : split(owner, m, channel, kind);
      if (legs.hub != owner_out.hub || legs.hub != owner_in.hub)
        throw InputError("topology", std::string(coll::to_string(kind)) + " of owner rank " +
                                         std::to_string(owner) +
                                         " has members behind different "
                                         "reducing switches (" +
                                         topology_.vertex(owner_out.hub).name + " and " +
                                         topology_.vertex(legs.hub).name +
                                         "): a group must share one NVSwitch");
      if (reduce) {
        add(legs.up);
        up = std::max(up, legs.up_latency);
      } else {
        add(legs.down);
        down = std::max(down, legs.down_latency);
      }
    }
    std::sort(route.links.begin(), route.links.end());
    route.links.erase(std::unique(route.links.begin(), route.links.end()), route.links.end());
    route.latency = up + down;
    return route;
  }

  const topo::Topology& topology_;
  topo::Router& router_;
  std::uint64_t seed_;
  std::map<Key, SwitchRoute> cache_;
};

} // namespace ddlsim::sim::detail
