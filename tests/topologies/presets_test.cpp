// Node presets: the numbers from the datasheets end up on the right links.
#include "topology_test_util.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

using namespace ddlsim;
using namespace ddlsim::topo;
using namespace ddlsim::topo::test;

namespace {

Topology one_node(const std::string& preset) {
  return build_topology(cluster(preset, 1));
}

// The GPUs a GPU has an NVLink to, with the bandwidth of that link.
std::map<int, double> nvlink_peers(const Topology& t, int node, int gpu) {
  std::map<int, double> peers;
  const VertexId v = t.node(node).gpus[static_cast<std::size_t>(gpu)];
  for (const Link* link : out_links_of_class(t, v, LinkClass::nvlink))
    if (t.vertex(link->dst).kind == VertexKind::gpu)
      peers[t.vertex(link->dst).local] = link->bandwidth_bytes_per_second;
  return peers;
}

} // namespace

TEST_CASE("the node presets exist - sorted") {
  CHECK(node_preset_names() ==
        std::vector<std::string>{
            "aws-g5-48xlarge",   "aws-g6e-48xlarge",   "aws-p4d-24xlarge",  "aws-p4de-24xlarge",
            "aws-p5-48xlarge",   "aws-p5e-48xlarge",   "azure-nd96asr-v4",  "azure-nd96isr-h100-v5",
            "cloud-8xv100-25g",  "dgx-a100",           "dgx-b200",          "dgx-h100",
            "dgx-h200",          "dgx1-v100",          "gb200-nvl72",       "gcp-a3-highgpu-8g",
            "gcp-a3-megagpu-8g", "gcp-a3-ultragpu-8g", "gcp-a4-highgpu-8g", "gh200-quad",
            "hgx-a100-80gb",     "oci-bm-gpu-h100-8",  "oci-bm-gpu4-8",     "pcie-8gpu-10g",
            "pcie-8x-rtx2080ti", "pcie-8x-rtx3090",    "pcie-8x-rtx4090",   "single-gpu-host"});
  CHECK_FALSE(find_node_preset("dgx-a1000"));
  for (const std::string& name : node_preset_names()) {
    INFO(name);
    const NodeSpec spec = *find_node_preset(name);
    CHECK(spec.preset == name);
    CHECK_FALSE(spec.gpu_model.empty());
    CHECK_NOTHROW(one_node(name));
  }
}

TEST_CASE("dgx-a100: every GPU has one 300 GB/s link to the NVSwitch plane - 8x200 Gb/s NICs") {
  const Topology t = one_node("dgx-a100");
  const VertexId plane = vertex(t, "node0/nvswitch");
  REQUIRE(t.node(0).gpus.size() == 8);
  for (VertexId gpu : t.node(0).gpus) {
    const auto nvlinks = out_links_of_class(t, gpu, LinkClass::nvlink);
    REQUIRE(nvlinks.size() == 1);
    CHECK(nvlinks[0]->dst == plane);
    CHECK(nvlinks[0]->bandwidth_bytes_per_second == 300e9);
    CHECK(links_between(t, plane, gpu).at(0)->bandwidth_bytes_per_second == 300e9);
  }
  REQUIRE(t.node(0).nics.size() == 8);
  for (VertexId nic : t.node(0).nics)
    CHECK(out_links_of_class(t, nic, LinkClass::nic).at(0)->bandwidth_bytes_per_second ==
          gbps_to_bytes_per_second(200));
  CHECK(count_kind(t, VertexKind::pcie_switch) == 4);
  // 2 GPUs and 2 NICs under each PCIe gen4 switch.
  for (int j = 0; j < 4; ++j) {
    const VertexId sw = vertex(t, "node0/pcie" + std::to_string(j));
    int gpus = 0, nics = 0;
    for (LinkId l : t.out_links(sw)) {
      const Vertex& peer = t.vertex(t.link(l).dst);
      gpus += peer.kind == VertexKind::gpu;
      nics += peer.kind == VertexKind::nic;
      CHECK(t.link(l).bandwidth_bytes_per_second == 31.5e9);
    }
    CHECK(gpus == 2);
    CHECK(nics == 2);
  }
}

TEST_CASE("dgx-h100: 450 GB/s per GPU to the NVSwitch plane - 8x400 Gb/s NICs - PCIe gen5") {
  const Topology t = one_node("dgx-h100");
  for (VertexId gpu : t.node(0).gpus) {
    CHECK(out_links_of_class(t, gpu, LinkClass::nvlink).at(0)->bandwidth_bytes_per_second == 450e9);
    CHECK(out_links_of_class(t, gpu, LinkClass::pcie).at(0)->bandwidth_bytes_per_second == 63e9);
  }
  for (VertexId nic : t.node(0).nics)
    CHECK(out_links_of_class(t, nic, LinkClass::nic).at(0)->bandwidth_bytes_per_second == 50e9);
}

TEST_CASE("dgx1-v100: the hybrid cube-mesh adjacency with 25 GB/s NVLinks - some pairs doubled") {
  const Topology t = one_node("dgx1-v100");
  // nvidia-smi topo -m on a DGX-1V: 1 = NV1, 2 = NV2, 0 = no NVLink.
  const int expected[8][8] = {
      {0, 1, 1, 2, 2, 0, 0, 0}, {1, 0, 2, 1, 0, 2, 0, 0}, {1, 2, 0, 2, 0, 0, 1, 0},
      {2, 1, 2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 1, 1, 2}, {0, 2, 0, 0, 1, 0, 2, 1},
      {0, 0, 1, 0, 1, 2, 0, 2}, {0, 0, 0, 1, 2, 1, 2, 0},
  };
  for (int g = 0; g < 8; ++g) {
    INFO("GPU " << g);
    const auto peers = nvlink_peers(t, 0, g);
    CHECK(peers.size() == 4); // 4 NVLink neighbours
    double total = 0;
    for (int p = 0; p < 8; ++p) {
      const auto it = peers.find(p);
      CHECK((it == peers.end() ? 0.0 : it->second) == expected[g][p] * 25e9);
      if (it != peers.end()) total += it->second;
    }
    CHECK(total == 6 * 25e9); // 6 NVLinks of 25 GB/s per direction
  }
  CHECK(t.node(0).nics.size() == 4);
  CHECK(
      out_links_of_class(t, t.node(0).nics[0], LinkClass::nic).at(0)->bandwidth_bytes_per_second ==
      gbps_to_bytes_per_second(100));
  CHECK(
      out_links_of_class(t, t.node(0).gpus[0], LinkClass::pcie).at(0)->bandwidth_bytes_per_second ==
      15.75e9);
}

TEST_CASE("cloud-8xv100-25g: the DGX-1 NVLink mesh but one shared 25 Gb/s NIC") {
  const Topology cloud = one_node("cloud-8xv100-25g");
  const Topology dgx1 = one_node("dgx1-v100");
  for (int g = 0; g < 8; ++g) CHECK(nvlink_peers(cloud, 0, g) == nvlink_peers(dgx1, 0, g));
  REQUIRE(cloud.node(0).nics.size() == 1);
  const auto nic = out_links_of_class(cloud, cloud.node(0).nics[0], LinkClass::nic);
  REQUIRE(nic.size() == 1);
  CHECK(nic[0]->bandwidth_bytes_per_second == gbps_to_bytes_per_second(25));
}

TEST_CASE("pcie-8gpu-10g and single-gpu-host have no NVLink") {
  const Topology pcie = one_node("pcie-8gpu-10g");
  for (const Link& link : pcie.links()) CHECK(link.link_class != LinkClass::nvlink);
  CHECK(pcie.node(0).gpus.size() == 8);
  CHECK(pcie.node(0).nics.size() == 1);
  CHECK(count_kind(pcie, VertexKind::pcie_switch) == 4);
  CHECK(out_links_of_class(pcie, pcie.node(0).nics[0], LinkClass::nic)
            .at(0)
            ->bandwidth_bytes_per_second == gbps_to_bytes_per_second(10));

  const Topology single = one_node("single-gpu-host");
  CHECK(single.gpus().size() == 1);
  CHECK(single.node(0).nics.size() == 1);
  CHECK(count_kind(single, VertexKind::pcie_switch) == 0);
  // GPU and NIC sit on the CPU's root ports.
  CHECK(links_between(single, single.gpus()[0], vertex(single, "node0/cpu")).size() == 1);
}

TEST_CASE("vertex names follow node<i>/<kind><j>") {
  const Topology t = build_topology(cluster("dgx-a100", 2));
  for (const char* name :
       {"node0/cpu", "node1/gpu7", "node1/nic0", "node0/pcie3", "node1/nvswitch"})
    CHECK(t.find(name) != kNoVertex);
  const Vertex& gpu = t.vertex(vertex(t, "node1/gpu5"));
  CHECK(gpu.kind == VertexKind::gpu);
  CHECK(gpu.node == 1);
  CHECK(gpu.local == 5);
  std::set<std::string> names;
  for (const Vertex& v : t.vertices()) CHECK(names.insert(v.name).second);
}

namespace {

// A minimal valid preset file for `name` whose "sources" is `sources`.
std::string preset_text(const std::string& name, const std::string& sources) {
  return R"({"name": ")" + name + R"(", "description": "a test node",
            "node": {"gpu_model": "A100-SXM4-40GB", "gpus": 2, "intra": "pcie_only",
                     "pcie_bandwidth_gbps": 252, "nics": 1, "nic_bandwidth_gbps": 100,
                     "transport": "socket"},
            "sources": )" +
         sources + "}";
}

const std::string kAllSources = R"({"gpu_model": "a", "gpus": "b", "intra": "c",
                                     "pcie_bandwidth_gbps": "d", "nics": "e",
                                     "nic_bandwidth_gbps": "f", "transport": "t"})";

} // namespace

TEST_CASE("node presets are data: a preset file gives the node in the scenario's format") {
  const NodeSpec spec = parse_node_preset("box", preset_text("box", kAllSources));
  CHECK(spec.preset == "box");
  CHECK(spec.gpus == 2);
  CHECK(spec.intra == IntraNode::pcie_only);
  CHECK(spec.pcie_bytes_per_second == 31.5e9);
  CHECK(spec.nic_bytes_per_second == 12.5e9);
  CHECK(spec.transport == Transport::socket);
}

TEST_CASE("node presets are data: every figure needs its source - errors name file and key") {
  using Catch::Matchers::Contains;
  const std::string missing = R"({"gpu_model": "a", "gpus": "b", "intra": "c",
                                   "pcie_bandwidth_gbps": "d", "nics": "e", "transport": "t"})";
  const std::string error =
      error_of([&] { parse_node_preset("box", preset_text("box", missing)); });
  CHECK_THAT(error, Contains("topologies/presets/box.json#/sources"));
  CHECK_THAT(error, Contains("no source for \"nic_bandwidth_gbps\""));
  const std::string stale =
      R"({"gpu_model": "a", "gpus": "b", "intra": "c", "pcie_bandwidth_gbps": "d",
                                 "nics": "e", "nic_bandwidth_gbps": "f", "transport": "t",
                                 "nvlink_latency_ns": "g"})";
  CHECK_THAT(error_of([&] { parse_node_preset("box", preset_text("box", stale)); }),
             Contains("nvlink_latency_ns"));
  CHECK_THAT(error_of([&] { parse_node_preset("box", preset_text("other", kAllSources)); }),
             Contains("must be the file's name"));
  CHECK_THAT(error_of([&] { parse_node_preset("box", R"({"name": "box"})"); }),
             Contains("description"));
}

TEST_CASE("node presets are data: the bundled files load with a source for every figure") {
  for (const std::string& name : node_preset_names()) {
    INFO(name);
    CHECK_NOTHROW(*find_node_preset(name));
  }
}

namespace {

// What a preset's datasheet or cloud documentation says, as the built topology must carry it.
struct PresetFigures {
  std::string name;
  std::string gpu_model;
  double nvlink_gbytes_per_second; // per GPU and direction to the NVSwitch plane; 0: no NVLink
  double pcie_gbytes_per_second;   // per x16 link and direction
  int pcie_switches;
  int nics;
  double nic_gbps;
};

const std::vector<PresetFigures>& todays_systems() {
  static const std::vector<PresetFigures> systems{
      {"dgx-h200", "H200-SXM-141GB", 450, 63, 4, 8, 400},
      {"dgx-b200", "B200-SXM-180GB", 900, 63, 4, 8, 400}, // NVLink 5: 1.8 TB/s bidirectional
      {"aws-p5-48xlarge", "H100-SXM5-80GB", 450, 63, 4, 32, 100}, // 3,200 Gb/s EFA
      {"aws-p4d-24xlarge", "A100-SXM4-40GB", 300, 31.5, 4, 4, 100},
      {"aws-p4de-24xlarge", "A100-SXM4-80GB", 300, 31.5, 4, 4, 100},
      {"gcp-a3-highgpu-8g", "H100-SXM5-80GB", 450, 63, 4, 4, 200},
      {"gcp-a3-megagpu-8g", "H100-SXM5-80GB", 450, 63, 4, 8, 200},
      {"azure-nd96asr-v4", "A100-SXM4-40GB", 300, 31.5, 4, 8, 200},
      {"azure-nd96isr-h100-v5", "H100-SXM5-80GB", 450, 63, 4, 8, 400},
      {"oci-bm-gpu4-8", "A100-SXM4-40GB", 300, 31.5, 4, 8, 200},
      {"oci-bm-gpu-h100-8", "H100-SXM5-80GB", 450, 63, 4, 16, 200},
      {"aws-g6e-48xlarge", "L40S", 0, 31.5, 4, 4, 100},
      {"pcie-8x-rtx4090", "RTX-4090", 0, 31.5, 0, 1, 100},
      {"aws-g5-48xlarge", "A10G", 0, 31.5, 4, 1, 100},
      {"aws-p5e-48xlarge", "H200-SXM-141GB", 450, 63, 4, 32, 100},
      {"gcp-a3-ultragpu-8g", "H200-SXM-141GB", 450, 63, 4, 8, 400},
      {"gcp-a4-highgpu-8g", "B200-SXM-180GB", 900, 63, 4, 8, 400},
      {"hgx-a100-80gb", "A100-SXM4-80GB", 300, 31.5, 4, 8, 200},
      {"pcie-8x-rtx3090", "RTX-3090", 0, 31.5, 0, 1, 100},
      {"pcie-8x-rtx2080ti", "RTX-2080-Ti", 0, 15.75, 0, 1, 100},
  };
  return systems;
}

} // namespace

TEST_CASE("today's systems: NVLink, PCIe and NIC figures land on the right links") {
  for (const PresetFigures& want : todays_systems()) {
    INFO(want.name);
    const Topology t = one_node(want.name);
    CHECK(t.node(0).gpu_model == want.gpu_model);
    REQUIRE(t.node(0).gpus.size() == 8);
    for (VertexId gpu : t.node(0).gpus) {
      const auto nvlinks = out_links_of_class(t, gpu, LinkClass::nvlink);
      if (want.nvlink_gbytes_per_second == 0) {
        CHECK(nvlinks.empty());
      } else {
        REQUIRE(nvlinks.size() == 1);
        CHECK(nvlinks[0]->dst == vertex(t, "node0/nvswitch"));
        CHECK(nvlinks[0]->bandwidth_bytes_per_second == want.nvlink_gbytes_per_second * 1e9);
      }
      CHECK(out_links_of_class(t, gpu, LinkClass::pcie).at(0)->bandwidth_bytes_per_second ==
            want.pcie_gbytes_per_second * 1e9);
    }
    CHECK(count_kind(t, VertexKind::pcie_switch) == static_cast<std::size_t>(want.pcie_switches));
    // The NIC's rate, under its transport (socket caps it; on EFA a GPU's NICs form one port
    // of their summed rate: transport_test.cpp).
    const NodeSpec spec = *find_node_preset(want.name);
    CHECK(spec.nics == want.nics);
    CHECK(spec.nic_bytes_per_second == gbps_to_bytes_per_second(want.nic_gbps));
    const NicDevices devices = nic_devices(spec);
    CHECK(devices.count * devices.rails == want.nics);
    REQUIRE(t.node(0).nics.size() == static_cast<std::size_t>(devices.count));
    for (VertexId nic : t.node(0).nics)
      CHECK(out_links_of_class(t, nic, LinkClass::nic).at(0)->bandwidth_bytes_per_second ==
            devices.rails * transport_nic_bytes_per_second(spec));
  }
}

TEST_CASE("today's systems: the aggregate NIC rate is the documented one") {
  const std::map<std::string, double> total_gbps{
      {"aws-p5-48xlarge", 3200},  {"aws-p4d-24xlarge", 400},       {"gcp-a3-megagpu-8g", 1600},
      {"azure-nd96asr-v4", 1600}, {"azure-nd96isr-h100-v5", 3200}, {"oci-bm-gpu-h100-8", 3200}};
  for (const auto& [name, gbps] : total_gbps) {
    INFO(name);
    const NodeSpec spec = *find_node_preset(name);
    CHECK(spec.nics * spec.nic_bytes_per_second == gbps_to_bytes_per_second(gbps));
  }
}

TEST_CASE("nvls: H100 and later NVSwitch presets reduce in the switch - A100 does not") {
  for (const std::string preset :
       {"dgx-h100", "dgx-h200", "dgx-b200", "aws-p5-48xlarge", "azure-nd96isr-h100-v5",
        "gcp-a3-highgpu-8g", "gcp-a3-megagpu-8g", "oci-bm-gpu-h100-8"}) {
    INFO(preset);
    const Topology t = one_node(preset);
    CHECK(t.vertex(vertex(t, "node0/nvswitch")).nvls);
  }
  for (const std::string preset : {"dgx-a100", "aws-p4d-24xlarge", "azure-nd96asr-v4"}) {
    INFO(preset);
    const Topology t = one_node(preset);
    CHECK_FALSE(t.vertex(vertex(t, "node0/nvswitch")).nvls);
  }
}

TEST_CASE("nvls: a node key - false to turn it off - an error without an NVSwitch") {
  const Topology off = build(R"({"nodes": [{"preset": "dgx-h100", "nvls": false}]})");
  CHECK_FALSE(off.vertex(vertex(off, "node0/nvswitch")).nvls);
  const Topology on = build(R"({"nodes": [{"preset": "dgx-a100", "nvls": true}]})");
  CHECK(on.vertex(vertex(on, "node0/nvswitch")).nvls);
  // Another interconnect drops the preset's NVLS with its NVSwitch.
  const Topology pcie = build(R"({"nodes": [{"preset": "dgx-h100", "intra": "pcie_only"}]})");
  CHECK(count_kind(pcie, VertexKind::nvswitch) == 0);
  CHECK_THAT(error_of([] { parse(R"({"nodes": [{"preset": "dgx1-v100", "nvls": true}]})"); }),
             Catch::Contains("/topology/nodes/0/nvls") && Catch::Contains("needs an NVSwitch"));
  CHECK_THAT(error_of([] { parse(R"({"nodes": [{"preset": "dgx-h100", "nvls": 1}]})"); }),
             Catch::Contains("/topology/nodes/0/nvls"));
}
