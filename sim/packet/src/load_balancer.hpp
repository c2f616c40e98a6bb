// Load balancing: which of a flow's equal-cost paths a packet takes.
//
// The router lists a pair's paths sorted lexicographically by link ids, so the paths that share
// a prefix of hops are contiguous: a packet carries the range [lo, hi) of paths still open to it.
// ecmp fixes one path per flow by a seeded hash of (source rank, destination rank, channel), like
// a 5-tuple hash; spraying picks a path per packet (seeded random, or round robin per flow);
// adaptive keeps the whole range and, at every hop, takes the next link whose port has the least
// data queued (ties at random), narrowing the range to the paths through it; a switch chooses
// when the packet arrives (switch_port.hpp, choose_on_arrival).
#pragma once

#include "ddlsim/sim/packet/packet_spec.hpp"
#include "ddlsim/topologies/ecmp.hpp"
#include "ddlsim/topologies/router.hpp"
#include "packet_pool.hpp"
#include "port.hpp"

#include <cstdint>
#include <vector>

namespace ddlsim::sim::packet {

using topo::mix64;

// The per-flow hash choice among `count` paths: the same as every engine's (topologies/ecmp.hpp).
inline std::uint32_t ecmp_choice(std::uint64_t seed, std::int32_t src, std::int32_t dst,
                                 std::uint16_t channel, std::size_t count) {
  return static_cast<std::uint32_t>(topo::ecmp_path_index(seed, src, dst, channel, count));
}

// The range of paths in `paths` that share hop `hop` (and all before it) with paths[index],
// searched within [lo, hi).
inline void narrow(const std::vector<topo::Path>& paths, std::uint32_t index, std::uint16_t hop,
                   std::uint16_t& lo, std::uint16_t& hi) {
  const topo::LinkId link = paths[index][hop];
  std::uint32_t a = index, b = index + 1;
  while (a > lo && paths[a - 1][hop] == link) --a;
  while (b < hi && paths[b][hop] == link) ++b;
  lo = static_cast<std::uint16_t>(a);
  hi = static_cast<std::uint16_t>(b);
}

// Adaptive: among the next links of the paths in [lo, hi) at `hop`, the one whose port holds
// the fewest queued bytes (a port serializing a packet counts one byte more than an idle one);
// narrows [lo, hi) to it and returns the link. Ties go to one of the tied links at random (the
// run's seeded generator): with packets of one size, equal queues are common, and giving them
// all to the lowest link id loads the first links more (DRILL breaks ties randomly too).
inline topo::LinkId least_queued(const std::vector<topo::Path>& paths, std::uint16_t hop,
                                 std::uint16_t& lo, std::uint16_t& hi, const Ports& ports,
                                 Picoseconds now, std::uint64_t& rng) {
  std::uint32_t best = lo;
  std::uint64_t best_bytes = UINT64_MAX;
  std::uint32_t tied = 0;
  for (std::uint32_t i = lo; i < hi;) {
    const topo::LinkId link = paths[i][hop];
    const Port& port = ports[link];
    const std::uint64_t bytes = port.queued + (port.free_at > now ? 1 : 0);
    if (bytes < best_bytes) {
      best_bytes = bytes;
      best = i;
      tied = 1;
    } else if (bytes == best_bytes) {
      rng = mix64(rng); // keep each tied link with equal chance (reservoir sampling)
      if (rng % ++tied == 0) best = i;
    }
    while (i < hi && paths[i][hop] == link) ++i;
  }
  narrow(paths, best, hop, lo, hi);
  return paths[best][hop];
}

} // namespace ddlsim::sim::packet
