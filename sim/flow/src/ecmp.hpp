// The per-flow ECMP choice, the same function as the analytic engine's (sim/src/
// analytic_engine.cpp, choose_path), so that both engines put every flow on the same path.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ddlsim::sim::flow {

inline std::uint64_t ecmp_mix(std::uint64_t x) { // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Index into the equal-cost path list of (sender, receiver) for a flow on `channel`.
inline std::size_t ecmp_path_index(std::uint64_t seed, std::int32_t sender, std::int32_t receiver,
                                   std::uint16_t channel, std::size_t paths) {
  const std::uint64_t hash =
      ecmp_mix(seed ^ ecmp_mix((static_cast<std::uint64_t>(sender) << 32) ^
                               (static_cast<std::uint64_t>(receiver) << 8) ^ channel));
  return static_cast<std::size_t>(hash % paths);
}

} // namespace ddlsim::sim::flow
