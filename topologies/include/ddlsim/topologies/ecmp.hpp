// The per-flow ECMP choice every engine uses, so that the analytic, flow and packet engines put a
// flow (source rank, destination rank, channel) on the same one of its equal-cost paths for the
// same seed: a seeded hash, like a switch's 5-tuple hash.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ddlsim::topo {

// The splitmix64 finaliser: a cheap, well-mixed 64-bit hash.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Index into the `paths` equal-cost paths (Router::paths order) of a flow.
inline std::size_t ecmp_path_index(std::uint64_t seed, std::int32_t src_rank, std::int32_t dst_rank,
                                   std::uint16_t channel, std::size_t paths) {
  const std::uint64_t key =
      (static_cast<std::uint64_t>(static_cast<std::uint32_t>(src_rank)) << 32) ^
      (static_cast<std::uint64_t>(static_cast<std::uint32_t>(dst_rank)) << 8) ^ channel;
  return static_cast<std::size_t>(mix64(seed ^ mix64(key)) % paths);
}

} // namespace ddlsim::topo
