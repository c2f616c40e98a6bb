// Priority by gradient magnitude (transport.priority "by_magnitude"): which packets of a message
// carry its largest gradients, from the magnitude profile over the receiver's buffer
// (TransportSpec::magnitude_profile).
#pragma once

#include "ddlsim/topologies/ecmp.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ddlsim::sim::packet {

// The indices of a message's top share: ceil(fraction x packets) of its `packets` packets, those
// where `profile` is highest. The message spans the buffer from share `from` to share `to` (as
// by_layer reads it; from > to when it runs towards the buffer's front), packet s covering the
// s-th of `packets` equal slices, read at its middle; the profile splits the buffer into equal
// shares. Equal scales (all of them with an empty profile) are ordered by a hash of `key` and
// the packet index: within one scale the choice is random, seeded per message.
inline std::vector<std::uint32_t> top_packets(const std::vector<double>& profile, double fraction,
                                              std::uint32_t packets, double from, double to,
                                              std::uint64_t key) {
  struct Ranked {
    double scale;
    std::uint64_t tie;
    std::uint32_t seq;
  };
  std::vector<Ranked> order;
  order.reserve(packets);
  for (std::uint32_t s = 0; s < packets; ++s) {
    double scale = 1;
    if (!profile.empty()) {
      const double at = from + (to - from) * (s + 0.5) / packets;
      const auto share =
          static_cast<std::size_t>(std::clamp(at, 0.0, 1.0) * static_cast<double>(profile.size()));
      scale = profile[std::min(share, profile.size() - 1)];
    }
    order.push_back({scale, topo::mix64(key ^ s), s});
  }
  const auto top = std::min<std::size_t>(
      packets, static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(packets))));
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(top), order.end(),
                    [](const Ranked& a, const Ranked& b) {
                      return a.scale != b.scale ? a.scale > b.scale : a.tie < b.tie;
                    });
  std::vector<std::uint32_t> result;
  result.reserve(top);
  for (std::size_t i = 0; i < top; ++i) result.push_back(order[i].seq);
  return result;
}

} // namespace ddlsim::sim::packet
