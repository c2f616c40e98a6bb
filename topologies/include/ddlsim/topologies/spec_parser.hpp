// Parses the "topology" section of a scenario into a ClusterSpec, with the strict, path-aware
// errors of core/json_reader.hpp.
#pragma once

#include "ddlsim/core/json_reader.hpp"
#include "ddlsim/topologies/cluster_spec.hpp"

namespace ddlsim::topo {

// `section` is the "topology" object; its pointer (e.g. "/topology") prefixes every error.
ClusterSpec parse_cluster_spec(const JsonValue& section);

// Upper bounds that keep a typo from asking for an absurd machine.
inline constexpr int kMaxGpusPerNode = 64;
inline constexpr int kMaxNicsPerNode = 64;
inline constexpr long kMaxTotalGpus = 1 << 20;
inline constexpr double kMaxBandwidthGbps = 1.0e6;  // 1 Pb/s per link
inline constexpr double kMaxLatencyNs = 1.0e9;      // 1 s per hop

} // namespace ddlsim::topo
