// Summary figures of a topology for `ddlsim topo describe`, and Graphviz output.
#pragma once

#include "ddlsim/topologies/topology.hpp"

#include <map>
#include <ostream>
#include <string>

namespace ddlsim::topo {

struct TopologySummary {
  std::map<std::string, std::size_t> vertices_per_kind; // "gpu" -> 64
  std::map<std::string, std::size_t> links_per_class;   // directed links per class
  std::size_t nodes = 0;
  // Per node preset: per-GPU injection bandwidth inside the node (sum of a GPU's out-links to
  // NVLink/NVSwitch peers, falling back to PCIe) and across nodes (the node's NIC bandwidth
  // divided by its GPUs), bytes/s, per direction.
  std::map<std::string, double> gpu_intra_node_bytes_per_second;
  std::map<std::string, double> gpu_inter_node_bytes_per_second;
  // Max-flow from the GPUs of the first half of the nodes (floor(nodes/2)) to those of the
  // second half, bytes/s per direction; link capacities are bandwidths, servers do not forward
  // for others. 0 with fewer than 2 nodes (printed as "n/a").
  double bisection_bytes_per_second = 0;
  int diameter_hops = 0;              // longest least-cost GPU-to-GPU path, in links
  std::size_t ecmp_first_to_last = 0; // equal-cost paths from the first GPU to the last GPU
  std::size_t ecmp_max_sampled = 0;   // the largest ECMP set seen over the sampled GPU pairs
  // GPU pairs behind diameter_hops and ecmp_max_sampled: every unordered pair up to
  // kExhaustivePairGpus GPUs, else a deterministic pseudo-random sample of kSampledPairs.
  std::size_t gpu_pairs_examined = 0;
  bool pairs_sampled = false;
};

inline constexpr std::size_t kExhaustivePairGpus = 256;
inline constexpr std::size_t kSampledPairs = 8192;

TopologySummary summarize(const Topology& topology);
void print_summary(const TopologySummary& summary, std::ostream& out);
// Graphviz: one vertex per topology vertex, one undirected edge per duplex link.
void write_dot(const Topology& topology, std::ostream& out);

} // namespace ddlsim::topo
