// parse_cluster_spec: one test per error class, each checking that the message names the JSON
// path; and the values that valid input produces.
#include "topology_test_util.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::topo;
using namespace ddlsim::topo::test;
using Catch::Matchers::Contains;

namespace {

std::string parse_error(const std::string& json) {
  return error_of([&] { (void)parse(json); });
}

std::string
with_fabric(const std::string& fabric,
            const std::string& nodes = R"([{"preset": "single-gpu-host", "count": 16}])") {
  return parse_error(R"({"nodes": )" + nodes + R"(, "fabric": )" + fabric + "}");
}

} // namespace

TEST_CASE("parser: a valid heterogeneous cluster with overrides") {
  const ClusterSpec spec = parse(R"({
    "nodes": [{"preset": "dgx-a100", "count": 4},
              {"preset": "cloud-8xv100-25g", "count": 8, "nic_bandwidth_gbps": 50},
              {"count": 2, "gpus": 4, "gpu_model": "A10G", "intra": "pcie_only",
               "pcie_bandwidth_gbps": 126, "nics": 1, "nic_bandwidth_gbps": 100}],
    "fabric": {"type": "leaf_spine", "leaves": 4, "spines": 2, "bandwidth_gbps": 400,
               "latency_ns": 500, "buffer_bytes": "12MiB", "oversubscription": 2}})");
  REQUIRE(spec.node_groups.size() == 3);
  CHECK(spec.json_path == "/topology");
  CHECK(spec.node_groups[0].count == 4);
  CHECK(spec.node_groups[0].spec.preset == "dgx-a100");
  CHECK(spec.node_groups[1].spec.nic_bytes_per_second == gbps_to_bytes_per_second(50));
  CHECK(spec.node_groups[1].spec.nvlink_bytes_per_second == 25e9); // kept from the preset
  const NodeSpec& custom = spec.node_groups[2].spec;
  CHECK(custom.preset == "custom");
  CHECK(custom.gpus == 4);
  CHECK(custom.intra == IntraNode::pcie_only);
  CHECK(custom.pcie_bytes_per_second == 15.75e9);
  CHECK(custom.pcie_latency == kDefaultPcieLatency);
  CHECK(spec.fabric.type == FabricType::leaf_spine);
  CHECK(spec.fabric.link_bytes_per_second == 50e9);
  CHECK(spec.fabric.link_latency == 500'000);
  CHECK(spec.fabric.buffer_bytes == 12u << 20);
  CHECK(spec.fabric.oversubscription == 2);
  CHECK_NOTHROW(build_topology(spec));
}

TEST_CASE("parser: the fabric defaults to one switch") {
  const ClusterSpec spec = parse(R"({"nodes": [{"preset": "dgx1-v100", "count": 2}]})");
  CHECK(spec.fabric.type == FabricType::single_switch);
  CHECK(spec.fabric.link_latency == kDefaultFabricLatency);
}

TEST_CASE("parser error: unknown key - with the nearest valid key") {
  const std::string group = parse_error(R"({"nodes": [{"preset": "dgx-a100", "cout": 4}]})");
  CHECK_THAT(group, Contains("/topology/nodes/0/cout"));
  CHECK_THAT(group, Contains("did you mean \"count\"?"));
  const std::string fabric = with_fabric(R"({"type": "fat_tree", "k": 4, "bandwith_gbps": 100})");
  CHECK_THAT(fabric, Contains("/topology/fabric/bandwith_gbps"));
  CHECK_THAT(fabric, Contains("did you mean \"bandwidth_gbps\"?"));
  const std::string top = parse_error(R"({"nodes": [{"preset": "dgx-a100"}], "fabrik": {}})");
  CHECK_THAT(top, Contains("/topology/fabrik"));
  CHECK_THAT(top, Contains("did you mean \"fabric\"?"));
}

TEST_CASE("parser error: unknown preset or fabric type - with a suggestion") {
  const std::string preset = parse_error(R"({"nodes": [{"preset": "dgx-a10"}]})");
  CHECK_THAT(preset, Contains("/topology/nodes/0/preset"));
  CHECK_THAT(preset, Contains("did you mean \"dgx-a100\"?"));
  const std::string type = with_fabric(R"({"type": "fat-tree", "k": 4})");
  CHECK_THAT(type, Contains("/topology/fabric/type"));
  CHECK_THAT(type, Contains("did you mean \"fat_tree\"?"));
  const std::string intra =
      parse_error(R"({"nodes": [{"preset": "dgx-a100", "intra": "nvswich"}]})");
  CHECK_THAT(intra, Contains("/topology/nodes/0/intra"));
  CHECK_THAT(intra, Contains("did you mean \"nvswitch\"?"));
}

TEST_CASE("parser error: a value of the wrong type") {
  const std::string gpus = parse_error(R"({"nodes": [{"preset": "dgx-a100", "gpus": "eight"}]})");
  CHECK_THAT(gpus, Contains("/topology/nodes/0/gpus"));
  CHECK_THAT(gpus, Contains("expected an integer"));
  CHECK_THAT(gpus, Contains("\"eight\""));
  CHECK_THAT(parse_error(R"({"nodes": {"preset": "dgx-a100"}})"), Contains("/topology/nodes"));
  CHECK_THAT(with_fabric(R"({"type": "custom", "links": [{"from": 1, "to": "x"}]})"),
             Contains("/topology/fabric/links/0/from"));
  CHECK_THAT(with_fabric(R"({"type": "single_switch", "buffer_bytes": "12 parsecs"})"),
             Contains("/topology/fabric/buffer_bytes"));
}

TEST_CASE("parser error: zero - negative and absurd values") {
  const std::string zero =
      parse_error(R"({"nodes": [{"preset": "dgx-a100", "nic_bandwidth_gbps": 0}]})");
  CHECK_THAT(zero, Contains("/topology/nodes/0/nic_bandwidth_gbps"));
  CHECK_THAT(zero, Contains("greater than 0"));
  CHECK_THAT(parse_error(R"({"nodes": [{"preset": "dgx-a100", "pcie_latency_ns": -5}]})"),
             Contains("/topology/nodes/0/pcie_latency_ns"));
  CHECK_THAT(parse_error(R"({"nodes": [{"preset": "dgx-a100", "count": 0}]})"),
             Contains("/topology/nodes/0/count"));
  CHECK_THAT(with_fabric(R"({"type": "leaf_spine", "leaves": 2, "spines": 0})"),
             Contains("/topology/fabric/spines"));
  CHECK_THAT(with_fabric(R"({"type": "fat_tree", "k": 4, "bandwidth_gbps": 1e12})"),
             Contains("/topology/fabric/bandwidth_gbps"));
  const std::string odd = with_fabric(R"({"type": "fat_tree", "k": 5})");
  CHECK_THAT(odd, Contains("/topology/fabric/k"));
  CHECK_THAT(odd, Contains("even"));
}

TEST_CASE("parser error: too many GPUs - with the reason") {
  const std::string per_node =
      parse_error(R"({"nodes": [{"preset": "dgx-a100", "gpus": 1000000000}]})");
  CHECK_THAT(per_node, Contains("/topology/nodes/0/gpus"));
  CHECK_THAT(per_node, Contains("from 1 to 576"));
  const std::string total = parse_error(
      R"({"nodes": [{"preset": "dgx-a100", "count": 100000}, {"preset": "dgx-a100", "count": 100000}]})");
  CHECK_THAT(total, Contains("/topology/nodes/1/count"));
  CHECK_THAT(total, Contains("at most 1048576"));
}

TEST_CASE("parser error: a missing required key") {
  const std::string no_model = parse_error(
      R"({"nodes": [{"gpus": 4, "intra": "pcie_only", "pcie_bandwidth_gbps": 126, "nic_bandwidth_gbps": 100}]})");
  CHECK_THAT(no_model, Contains("/topology/nodes/0"));
  CHECK_THAT(no_model, Contains("missing required key \"gpu_model\""));
  const std::string no_nvlink = parse_error(
      R"({"nodes": [{"gpus": 8, "gpu_model": "V100", "intra": "nvswitch", "pcie_bandwidth_gbps": 126, "nic_bandwidth_gbps": 100}]})");
  CHECK_THAT(no_nvlink, Contains("missing required key \"nvlink_bandwidth_gbps\""));
  CHECK_THAT(parse_error(R"({"fabric": {"type": "ring"}})"),
             Contains("missing required key \"nodes\""));
  const std::string spines = with_fabric(R"({"type": "leaf_spine", "leaves": 4})");
  CHECK_THAT(spines, Contains("/topology/fabric"));
  CHECK_THAT(spines, Contains("missing required key \"spines\""));
  CHECK_THAT(with_fabric(R"({"type": "torus2d"})"), Contains("missing required key \"dims\""));
  CHECK_THAT(with_fabric(R"({"k": 4})"), Contains("missing required key \"type\""));
}

TEST_CASE("parser error: a key of another fabric type names the types that use it") {
  const std::string spines = with_fabric(R"({"type": "fat_tree", "k": 4, "spines": 2})");
  CHECK_THAT(spines, Contains("/topology/fabric/spines"));
  CHECK_THAT(spines, Contains("used by fabric type leaf_spine, not by fat_tree"));
  const std::string dims =
      with_fabric(R"({"type": "leaf_spine", "spines": 2, "leaves": 2, "dims": [4, 4]})");
  CHECK_THAT(dims, Contains("/topology/fabric/dims"));
  CHECK_THAT(dims, Contains("torus2d, torus3d or ring"));
  const std::string k = with_fabric(R"({"type": "single_switch", "k": 4})");
  CHECK_THAT(k, Contains("/topology/fabric/k"));
  CHECK_THAT(k, Contains("used by fabric type fat_tree, not by single_switch"));
}

TEST_CASE("parser error: torus dims that do not match the node count") {
  const std::string mismatch = with_fabric(R"({"type": "torus2d", "dims": [4, 3]})");
  CHECK_THAT(mismatch, Contains("/topology/fabric/dims"));
  CHECK_THAT(mismatch, Contains("4x3 has 12 switch positions but the cluster has 16 nodes"));
  const std::string rank = with_fabric(R"({"type": "torus3d", "dims": [4, 4]})");
  CHECK_THAT(rank, Contains("/topology/fabric/dims"));
  CHECK_THAT(rank, Contains("needs 3 dimensions"));
  CHECK_NOTHROW(parse(R"({"nodes": [{"preset": "single-gpu-host", "count": 16}],
                          "fabric": {"type": "torus3d", "dims": [4, 2, 2]}})"));
}

TEST_CASE("parser error: a spec that cannot be built is rejected while parsing") {
  const std::string ports = with_fabric(R"({"type": "fat_tree", "k": 2})");
  CHECK_THAT(ports, Contains("/topology/fabric/k"));
  CHECK_THAT(ports, Contains("too many NICs"));
  const std::string mesh = parse_error(R"({"nodes": [{"preset": "dgx1-v100", "gpus": 4}]})");
  CHECK_THAT(mesh, Contains("/topology/nodes/0/gpus"));
  CHECK_THAT(mesh, Contains("exactly 8 GPUs"));
  const std::string nvlink = parse_error(
      R"({"nodes": [{"preset": "dgx-a100", "intra": "pcie_only", "nvlink_bandwidth_gbps": 100}]})");
  CHECK_THAT(nvlink, Contains("/topology/nodes/0/nvlink_bandwidth_gbps"));
  CHECK_THAT(nvlink, Contains("pcie_only"));
  CHECK_THAT(parse_error(R"({"nodes": [{"preset": "dgx-a100", "nvlinks_per_pair": 2}]})"),
             Contains("/topology/nodes/0/nvlinks_per_pair"));
  const std::string over = with_fabric(
      R"({"type": "leaf_spine", "leaves": 4, "spines": 2, "bandwidth_gbps": 100, "oversubscription": 2, "links_per_pair": 1})");
  CHECK_THAT(over, Contains("/topology/fabric/links_per_pair"));
  const std::string custom = with_fabric(
      R"({"type": "custom", "vertices": [{"name": "s0"}, {"name": "s0"}], "links": [{"from": "s0", "to": "node0/nic0"}]})");
  CHECK_THAT(custom, Contains("/topology/fabric/vertices/1/name"));
  CHECK_THAT(custom, Contains("duplicate"));
}
