// NIC affinity: which NICs a GPU's inter-node traffic uses (Node::gpu_nics, NCCL's
// ncclTopoGetLocalNetType), and the routes that follow it (Router::channel_paths).
#include "ddlsim/topologies/router.hpp"
#include "topology_test_util.hpp"

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

using namespace ddlsim;
using namespace ddlsim::topo;
using namespace ddlsim::topo::test;

namespace {

std::vector<std::string> nic_names(const Topology& t, int node, int gpu) {
  std::vector<std::string> names;
  for (VertexId nic : t.node(node).gpu_nics[static_cast<std::size_t>(gpu)])
    names.push_back(t.vertex(nic).name);
  return names;
}

ClusterSpec with_nics(const std::string& preset, int count, int nics) {
  ClusterSpec spec = cluster(preset, count);
  spec.node_groups.front().spec.nics = nics;
  return spec;
}

// The NICs (source, destination) a path crosses.
std::pair<std::string, std::string> nics_on(const Topology& t, const Path& path) {
  std::string from, to;
  for (LinkId l : path) {
    const Link& link = t.link(l);
    if (link.link_class != LinkClass::nic) continue;
    if (t.vertex(link.src).kind == VertexKind::nic) from = t.vertex(link.src).name;
    if (t.vertex(link.dst).kind == VertexKind::nic) to = t.vertex(link.dst).name;
  }
  return {from, to};
}

} // namespace

TEST_CASE("NIC affinity - a DGX A100 GPU uses the NIC of its own rail on its PCIe switch") {
  const Topology t = build_topology(cluster("dgx-a100", 2));
  for (int g = 0; g < 8; ++g)
    CHECK(nic_names(t, 1, g) == std::vector<std::string>{"node1/nic" + std::to_string(g)});
}

TEST_CASE("NIC affinity - 32 NICs on 4 PCIe switches give each GPU 4, mirrored as in NCCL") {
  // 2 GPUs and 8 NICs per switch: GPU 0 starts at NIC 0, GPU 1 at mirrorBits(1, 8) = 4.
  const Topology t = build_topology(with_nics("dgx-h100", 1, 32));
  CHECK(nic_names(t, 0, 0) ==
        std::vector<std::string>{"node0/nic0", "node0/nic1", "node0/nic2", "node0/nic3"});
  CHECK(nic_names(t, 0, 1) ==
        std::vector<std::string>{"node0/nic4", "node0/nic5", "node0/nic6", "node0/nic7"});
  CHECK(nic_names(t, 0, 7) ==
        std::vector<std::string>{"node0/nic28", "node0/nic29", "node0/nic30", "node0/nic31"});
  std::set<VertexId> all;
  for (const auto& nics : t.node(0).gpu_nics) all.insert(nics.begin(), nics.end());
  CHECK(all.size() == 32); // every NIC serves one GPU
}

TEST_CASE("NIC affinity - fewer NICs than GPUs: the GPUs of a switch share its NIC") {
  const Topology t = build_topology(with_nics("dgx-a100", 1, 4)); // p4de: 4 NICs, 4 switches
  for (int g = 0; g < 8; ++g)
    CHECK(nic_names(t, 0, g) == std::vector<std::string>{"node0/nic" + std::to_string(g / 2)});
}

TEST_CASE("NIC affinity - NICs on the host are shared out one per GPU") {
  // gh200-quad: no PCIe switch, every NIC equally far from every GPU (through the CPU); NCCL
  // starts GPU g at mirrorBits(g, 4): 0, 2, 1, 3.
  const Topology t = build_topology(cluster("gh200-quad", 1));
  CHECK(nic_names(t, 0, 0) == std::vector<std::string>{"node0/nic0"});
  CHECK(nic_names(t, 0, 1) == std::vector<std::string>{"node0/nic2"});
  CHECK(nic_names(t, 0, 2) == std::vector<std::string>{"node0/nic1"});
  CHECK(nic_names(t, 0, 3) == std::vector<std::string>{"node0/nic3"});
}

TEST_CASE("channel paths - inter-node traffic leaves and enters by the GPUs' NICs per channel") {
  const Topology t = build_topology(with_nics("dgx-h100", 2, 32));
  Router router(t);
  // rank 1 = node0/gpu1 (NICs 4..7), rank 8 = node1/gpu0 (NICs 0..3).
  for (std::uint16_t c = 0; c < 8; ++c) {
    const std::vector<Path>& paths = router.channel_paths(1, 8, c);
    REQUIRE(!paths.empty());
    for (const Path& path : paths)
      CHECK(nics_on(t, path) ==
            std::pair<std::string, std::string>{"node0/nic" + std::to_string(4 + c % 4),
                                                "node1/nic" + std::to_string(c % 4)});
    CHECK(router.ecmp_path(7, 1, 8, c) == paths.front()); // one fabric path: single switch
  }
  // The plain least-cost set has every NIC pair of the two switches.
  CHECK(router.paths(t.gpus()[1], t.gpus()[8]).size() == 64);
}

TEST_CASE("channel paths - inside a node they are the least-cost paths") {
  const Topology t = build_topology(cluster("dgx-a100", 2));
  Router router(t);
  CHECK(&router.channel_paths(0, 5, 3) == &router.paths(t.gpus()[0], t.gpus()[5]));
}
