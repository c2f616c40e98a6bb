// Parses the "topology" section of a scenario into a ClusterSpec, with the strict, path-aware
// errors of core/json_reader.hpp.
#pragma once

#include "ddlsim/core/json_reader.hpp"
#include "ddlsim/topologies/cluster_spec.hpp"

namespace ddlsim::topo {

// `section` is the "topology" object; its pointer (e.g. "/topology") prefixes every error.
ClusterSpec parse_cluster_spec(const JsonValue& section);

// Upper bounds that keep a typo from asking for an absurd machine.
// A node is one host's PCIe tree; NVLink domains larger than a node are "nvlink_domain_gpus".
// 576 = the largest NVLink domain NVIDIA ships (NVLink Switch System, GB200 NVL576), so a
// domain described as one node still fits.
inline constexpr int kMaxGpusPerNode = 576;
inline constexpr int kMaxNicsPerNode = 576;
inline constexpr int kMaxNvlinkDomainGpus = 576;
inline constexpr int kMaxPcieSwitchesPerNode = 64;
inline constexpr int kMaxNvlinksPerPair = 4;
inline constexpr long kMaxTotalGpus = 1 << 20;
inline constexpr double kMaxBandwidthGbps = 1.0e6;                       // 1 Pb/s per link
inline constexpr double kMaxLatencyNs = 1.0e9;                           // 1 s per hop
inline constexpr std::uint64_t kMaxBufferBytes = std::uint64_t{1} << 40; // 1 TiB per port
inline constexpr int kMaxSwitchesPerTier = 1 << 16; // leaves, spines, rail spines
inline constexpr int kMaxFatTreeK = 64;             // 65,536 host ports, 5,120 switches
inline constexpr long kMaxFabricLinks = 1L << 20;   // duplex switch-to-switch links in all

} // namespace ddlsim::topo
