// summarize(), print_summary() and write_dot() on cases small enough to count by hand.
#include "topology_test_util.hpp"

#include "ddlsim/topologies/describe.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace ddlsim;
using namespace ddlsim::topo;
using namespace ddlsim::topo::test;
using Catch::Matchers::Contains;

TEST_CASE("describe: 4 single-GPU hosts on a 2:1 oversubscribed leaf-spine - counted by hand") {
  // 2 leaves of 2 hosts (10 Gb/s NICs: 20 Gb/s down per leaf), 2 spines: at 2:1 every leaf
  // has 10 Gb/s up, 5 Gb/s per spine link.
  const Topology t = build(R"({"nodes": [{"preset": "single-gpu-host", "count": 4}],
    "fabric": {"type": "leaf_spine", "nics_per_leaf": 2, "spines": 2, "oversubscription": 2}})");
  const TopologySummary s = summarize(t);
  CHECK(s.nodes == 4);
  CHECK(s.vertices_per_kind ==
        std::map<std::string, std::size_t>{{"gpu", 4}, {"host", 4}, {"nic", 4}, {"switch", 4}});
  // Per node GPU-CPU and NIC-CPU; per NIC one link to its leaf; 2 leaves x 2 spines.
  CHECK(s.links_per_class ==
        std::map<std::string, std::size_t>{{"pcie", 2 * 4 * 2}, {"nic", 2 * 4}, {"fabric", 2 * 4}});
  CHECK(s.gpu_intra_node_bytes_per_second.at("single-gpu-host") == 15.75e9); // PCIe 3.0 x16
  CHECK(s.gpu_inter_node_bytes_per_second.at("single-gpu-host") == gbps_to_bytes_per_second(10));
  // The cut between {node0, node1} and {node2, node3} is leaf0's two 5 Gb/s uplinks.
  CHECK(s.bisection_bytes_per_second == Approx(gbps_to_bytes_per_second(10)));
  // gpu-cpu-nic-leaf-spine-leaf-nic-cpu-gpu
  CHECK(s.diameter_hops == 8);
  CHECK(s.ecmp_first_to_last == 2);
  CHECK(s.ecmp_max_sampled == 2);
  CHECK(s.gpu_pairs_examined == 6);
  CHECK_FALSE(s.pairs_sampled);

  std::ostringstream text;
  print_summary(s, text);
  CHECK_THAT(text.str(), Contains("bisection bandwidth:   10 Gb/s"));
  CHECK_THAT(text.str(), Contains("diameter:              8 links (6 GPU pairs, all)"));
}

TEST_CASE("describe: two DGX A100 on one switch have 1.6 Tb/s of bisection (8 x 200 Gb/s)") {
  const TopologySummary s = summarize(build_topology(cluster("dgx-a100", 2)));
  CHECK(s.bisection_bytes_per_second == Approx(8 * gbps_to_bytes_per_second(200)));
  CHECK(s.gpu_intra_node_bytes_per_second.at("dgx-a100") == 300e9);
  CHECK(s.gpu_inter_node_bytes_per_second.at("dgx-a100") == gbps_to_bytes_per_second(200));
  // gpu-pcie-nic-switch-nic-pcie-gpu; 2 NICs on each side of the first and last GPU.
  CHECK(s.diameter_hops == 6);
  CHECK(s.ecmp_first_to_last == 4);
  CHECK(s.vertices_per_kind.at("nvswitch") == 2);
}

TEST_CASE("describe: one node has no bisection - nodes that differ from their preset are listed") {
  const TopologySummary one = summarize(build_topology(cluster("dgx1-v100", 1)));
  CHECK(one.bisection_bytes_per_second == 0);
  CHECK(one.gpu_intra_node_bytes_per_second.at("dgx1-v100") == 150e9); // 6 x 25 GB/s
  std::ostringstream text;
  print_summary(one, text);
  CHECK_THAT(text.str(), Contains("n/a"));

  const TopologySummary mixed = summarize(build(R"({"nodes": [
    {"preset": "cloud-8xv100-25g"}, {"preset": "cloud-8xv100-25g", "nic_bandwidth_gbps": 100}]})"));
  CHECK(mixed.gpu_inter_node_bytes_per_second.at("cloud-8xv100-25g") ==
        gbps_to_bytes_per_second(25) / 8);
  CHECK(mixed.gpu_inter_node_bytes_per_second.at("cloud-8xv100-25g [from node 1]") ==
        gbps_to_bytes_per_second(100) / 8);
  // The 25 Gb/s NIC of node 0 is the cut.
  CHECK(mixed.bisection_bytes_per_second == Approx(gbps_to_bytes_per_second(25)));
}

TEST_CASE("describe: many GPUs are sampled deterministically") {
  FabricSpec fabric;
  fabric.type = FabricType::fat_tree;
  fabric.k = 8;
  const Topology t = build_topology(cluster("dgx-h100", 16, fabric));   // 128 NICs, 128 GPUs
  const Topology big = build_topology(cluster("cloud-8xv100-25g", 40)); // 320 GPUs
  const TopologySummary a = summarize(big), b = summarize(big);
  CHECK(a.pairs_sampled);
  CHECK(a.gpu_pairs_examined == kSampledPairs);
  CHECK(a.diameter_hops == b.diameter_hops);
  // Cross-node through NCCL's socket bounce (the preset's transport), the NIC on the host:
  // gpu-pcie-cpu-nic-switch-nic-cpu-pcie-gpu.
  CHECK(a.diameter_hops == 8);
  const TopologySummary tree = summarize(t);
  CHECK_FALSE(tree.pairs_sampled);
  // Inter-pod: 2 NICs x 16 core paths x 2 NICs.
  CHECK(tree.ecmp_first_to_last == 64);
  CHECK(tree.ecmp_max_sampled == 64);
  // gpu-pcie-nic-edge-agg-core-agg-edge-nic-pcie-gpu
  CHECK(tree.diameter_hops == 10);
}

TEST_CASE("write_dot: one vertex statement per vertex - one edge per duplex link") {
  const Topology t = build_topology(cluster("dgx-a100", 2));
  std::ostringstream dot;
  write_dot(t, dot);
  const std::string text = dot.str();
  CHECK(text.rfind("graph topology {", 0) == 0);
  std::size_t edges = 0;
  for (std::size_t pos = text.find(" -- "); pos != std::string::npos;
       pos = text.find(" -- ", pos + 1))
    ++edges;
  CHECK(edges == t.link_count() / 2);
  CHECK_THAT(text, Contains("subgraph cluster_node1"));
  CHECK_THAT(text, Contains("\"node0/gpu0\" -- \"node0/pcie0\""));
  CHECK_THAT(text, Contains("300 GB/s"));
  CHECK_THAT(text, Contains("200 Gb/s"));
}
