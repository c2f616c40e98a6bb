// Scale-up domains: NVLink domains that span nodes (GB200 NVL72), nodes of more than 64 GPUs, and
// the GH200 quad node's all-to-all NVLink.
#include "topology_test_util.hpp"

#include "ddlsim/topologies/router.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <string>

using namespace ddlsim;
using namespace ddlsim::topo;
using namespace ddlsim::topo::test;

namespace {

bool only_nvlink(const Topology& t, const Path& path) {
  for (LinkId l : path)
    if (t.link(l).link_class != LinkClass::nvlink) return false;
  return true;
}

} // namespace

TEST_CASE("scale-up: a gb200-nvl72 tray carries the datasheet's figures") {
  const NodeSpec spec = *find_node_preset("gb200-nvl72");
  CHECK(spec.gpu_model == "GB200-186GB");
  CHECK(spec.gpus == 4);
  CHECK(spec.nvlink_domain_gpus == 72);
  CHECK(spec.transport == Transport::ib);
  const Topology t = build_topology(cluster("gb200-nvl72", 1));
  for (VertexId gpu : t.node(0).gpus) {
    const auto nvlinks = out_links_of_class(t, gpu, LinkClass::nvlink);
    REQUIRE(nvlinks.size() == 1);
    CHECK(nvlinks[0]->dst == vertex(t, "nvl0/nvswitch"));
    CHECK(nvlinks[0]->bandwidth_bytes_per_second == 900e9); // 1.8 TB/s bidirectional
  }
  REQUIRE(t.node(0).nics.size() == 4);
  for (VertexId nic : t.node(0).nics)
    CHECK(out_links_of_class(t, nic, LinkClass::nic).at(0)->bandwidth_bytes_per_second == 50e9);
}

TEST_CASE("scale-up: 18 trays are one 72-GPU NVLink domain and GPU-to-GPU routes stay on NVLink") {
  const Topology t = build_topology(cluster("gb200-nvl72", 18));
  REQUIRE(t.gpus().size() == 72);
  CHECK(count_kind(t, VertexKind::nvswitch) == 1);
  const VertexId plane = vertex(t, "nvl0/nvswitch");
  CHECK(t.vertex(plane).node == -1); // the rack's, not a tray's
  std::size_t joined = 0;
  for (LinkId l : t.out_links(plane)) joined += t.vertex(t.link(l).dst).kind == VertexKind::gpu;
  CHECK(joined == 72);
  Router router(t);
  for (std::size_t a = 0; a < 72; a += 5)
    for (std::size_t b = 0; b < 72; b += 7) {
      if (a == b) continue;
      INFO(a << " -> " << b);
      const auto& paths = router.paths(t.gpus()[a], t.gpus()[b]);
      REQUIRE_FALSE(paths.empty());
      for (const Path& path : paths) {
        CHECK(only_nvlink(t, path));
        CHECK(path.size() == 2); // GPU -> plane -> GPU
      }
    }
}

TEST_CASE("scale-up: 36 trays are two racks, joined by the NICs") {
  const Topology t = build_topology(cluster("gb200-nvl72", 36));
  CHECK(count_kind(t, VertexKind::nvswitch) == 2);
  Router router(t);
  const auto& same_rack = router.paths(t.gpus()[0], t.gpus()[71]);
  CHECK(only_nvlink(t, same_rack.at(0)));
  const auto& other_rack = router.paths(t.gpus()[0], t.gpus()[72]);
  REQUIRE_FALSE(other_rack.empty());
  CHECK_FALSE(only_nvlink(t, other_rack.at(0)));
}

TEST_CASE("scale-up: collective algorithms see an NVLink domain as one node") {
  ClusterSpec two_racks = cluster("gb200-nvl72", 36);
  const std::vector<int> nodes = algorithm_node_of_gpu(two_racks);
  REQUIRE(nodes.size() == 144);
  CHECK(std::set<int>(nodes.begin(), nodes.begin() + 72) == std::set<int>{0});
  CHECK(std::set<int>(nodes.begin() + 72, nodes.end()) == std::set<int>{1});
  // A partial rack is still one domain; a group after it starts a new node.
  ClusterSpec mixed = cluster("gb200-nvl72", 2);
  mixed.node_groups.push_back(NodeGroup{*find_node_preset("dgx-h100"), 2});
  const std::vector<int> labels = algorithm_node_of_gpu(mixed);
  REQUIRE(labels.size() == 24);
  CHECK(labels[0] == 0);
  CHECK(labels[7] == 0);
  CHECK(labels[8] == 1);
  CHECK(labels[16] == 2);
  // Without domains a node is a node.
  const std::vector<int> dgx = algorithm_node_of_gpu(cluster("dgx-h100", 3));
  CHECK(dgx[7] == 0);
  CHECK(dgx[8] == 1);
  CHECK(dgx[23] == 2);
}

TEST_CASE("scale-up: a cluster's GPU count sums nodes x GPUs over groups without overflow") {
  ClusterSpec mixed = cluster("gb200-nvl72", 2);
  mixed.node_groups.push_back(NodeGroup{*find_node_preset("dgx-h100"), 2});
  CHECK(total_gpus(mixed) == 24);
  CHECK(total_gpus(mixed) == static_cast<std::int64_t>(algorithm_node_of_gpu(mixed).size()));
  // An unchecked spec built in code may exceed an int; the count stays exact.
  ClusterSpec huge = cluster("dgx-h100", 1);
  huge.node_groups[0].count = 1 << 30;
  CHECK(total_gpus(huge) == (std::int64_t{1} << 33));
}

TEST_CASE("scale-up: a node of more than 64 GPUs builds, up to NVIDIA's 576-GPU domain") {
  const Topology t = build(R"({"nodes": [{"gpus": 72, "gpu_model": "GB200", "intra": "nvswitch",
      "nvlink_bandwidth_gbps": 7200, "pcie_bandwidth_gbps": 504, "nics": 72,
      "nic_bandwidth_gbps": 400}]})");
  CHECK(t.gpus().size() == 72);
  CHECK(t.node(0).nics.size() == 72);
  CHECK_THAT(error_of([] {
               build(R"({"nodes": [{"gpus": 577, "gpu_model": "GB200", "intra": "nvswitch",
                   "nvlink_bandwidth_gbps": 7200, "pcie_bandwidth_gbps": 504, "nics": 0}]})");
             }),
             Catch::Contains("/topology/nodes/0/gpus") && Catch::Contains("576"));
}

TEST_CASE("scale-up: gh200-quad joins its 4 GPUs all-to-all at 150 GB/s per pair") {
  const NodeSpec spec = *find_node_preset("gh200-quad");
  CHECK(spec.gpu_model == "GH200-96GB");
  CHECK(spec.intra == IntraNode::nvlink_all_to_all);
  CHECK(spec.transport == Transport::cxi);
  const Topology t = build_topology(cluster("gh200-quad", 2));
  CHECK(count_kind(t, VertexKind::nvswitch) == 0);
  for (int g = 0; g < 4; ++g) {
    const auto nvlinks =
        out_links_of_class(t, t.node(0).gpus[static_cast<std::size_t>(g)], LinkClass::nvlink);
    REQUIRE(nvlinks.size() == 3);
    for (const Link* link : nvlinks) {
      CHECK(t.vertex(link->dst).kind == VertexKind::gpu);
      CHECK(link->bandwidth_bytes_per_second == 150e9);
    }
  }
  REQUIRE(t.node(1).nics.size() == 4);
  CHECK(
      out_links_of_class(t, t.node(1).nics[0], LinkClass::nic).at(0)->bandwidth_bytes_per_second ==
      25e9);
}

TEST_CASE("scale-up: domain and all-to-all keys are checked") {
  auto group = [](const std::string& keys) {
    return R"({"nodes": [{"count": 2, "gpus": 4, "gpu_model": "GB200", "pcie_bandwidth_gbps": 504,
               "nics": 1, "nic_bandwidth_gbps": 400, )" +
           keys + "}]}";
  };
  CHECK_THAT(error_of([&] {
               build(group(R"("intra": "nvswitch", "nvlink_bandwidth_gbps": 7200,
                              "nvlink_domain_gpus": 6)"));
             }),
             Catch::Contains("/topology/nodes/0/nvlink_domain_gpus") &&
                 Catch::Contains("multiple of the node's 4 GPUs"));
  CHECK_THAT(error_of([&] { build(group(R"("intra": "pcie_only", "nvlink_domain_gpus": 8)")); }),
             Catch::Contains("nvlink_domain_gpus") && Catch::Contains("nvswitch"));
  CHECK_THAT(error_of([&] {
               build(group(R"("intra": "nvlink_all_to_all", "nvlink_bandwidth_gbps": 1200,
                              "nvlink_domain_gpus": 8)"));
             }),
             Catch::Contains("nvlink_domain_gpus"));
  CHECK_THAT(error_of([] {
               build(R"({"nodes": [{"gpus": 19, "gpu_model": "GH200", "intra": "nvlink_all_to_all",
                   "nvlink_bandwidth_gbps": 1200, "pcie_bandwidth_gbps": 252, "nics": 0}]})");
             }),
             Catch::Contains("/topology/nodes/0/gpus") && Catch::Contains("18"));
  // Two 4-GPU trays in a domain of 8 GPUs share one plane.
  const Topology t = build(
      group(R"("intra": "nvswitch", "nvlink_bandwidth_gbps": 7200, "nvlink_domain_gpus": 8)"));
  CHECK(count_kind(t, VertexKind::nvswitch) == 1);
}
