// Fabric builders: the shapes they promise (switch counts, degrees, ECMP widths, rates).
#include "topology_test_util.hpp"

#include "ddlsim/topologies/router.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::topo;
using namespace ddlsim::topo::test;
using Catch::Matchers::Contains;

namespace {

std::size_t fabric_degree(const Topology& t, VertexId v) {
  return out_links_of_class(t, v, LinkClass::fabric).size();
}

FabricSpec fat_tree(int k) {
  FabricSpec f;
  f.type = FabricType::fat_tree;
  f.k = k;
  return f;
}

FabricSpec torus(std::vector<int> dims) {
  FabricSpec f;
  f.type = dims.size() == 2 ? FabricType::torus2d : FabricType::torus3d;
  f.dims = std::move(dims);
  return f;
}

} // namespace

TEST_CASE("fat tree k=4: 16 host ports - 20 switches - 4 paths across pods - 2 within a pod") {
  const Topology t = build_topology(cluster("single-gpu-host", 16, fat_tree(4)));
  CHECK(count_kind(t, VertexKind::network_switch) == 20);
  std::size_t per_tier[3] = {0, 0, 0};
  for (const Vertex& v : t.vertices())
    if (v.kind == VertexKind::network_switch) ++per_tier[v.tier];
  CHECK(per_tier[0] == 8); // edge
  CHECK(per_tier[1] == 8); // aggregation
  CHECK(per_tier[2] == 4); // core
  // Every switch uses all k = 4 ports.
  for (VertexId v = 0; v < t.vertex_count(); ++v)
    if (t.vertex(v).kind == VertexKind::network_switch) CHECK(t.out_links(v).size() == 4);

  Router router(t);
  auto nic = [&](int node) { return t.node(node).nics[0]; };
  auto gpu = [&](int node) { return t.node(node).gpus[0]; };
  // Hosts 0,1 on edge0; 2,3 on edge1 (same pod 0); host 4 in pod 1.
  CHECK(router.paths(nic(0), nic(1)).size() == 1);
  CHECK(router.paths(nic(0), nic(2)).size() == 2);
  CHECK(router.paths(nic(0), nic(4)).size() == 4);
  CHECK(router.paths(nic(0), nic(15)).size() == 4);
  CHECK(router.paths(gpu(0), gpu(15)).size() == 4);
  for (const Path& p : router.paths(nic(0), nic(15))) CHECK(p.size() == 6);
  for (const Path& p : router.paths(nic(0), nic(2))) CHECK(p.size() == 4);
}

TEST_CASE("fat tree: too many NICs and odd k are errors naming /topology/fabric/k") {
  const std::string full =
      error_of([] { build_topology(cluster("single-gpu-host", 17, fat_tree(4))); });
  CHECK_THAT(full, Contains("/topology/fabric/k"));
  CHECK_THAT(full, Contains("16 host ports"));
  CHECK_THAT(full, Contains("k=6"));
  CHECK_THAT(error_of([] { build_topology(cluster("single-gpu-host", 2, fat_tree(3))); }),
             Contains("/topology/fabric/k"));
}

TEST_CASE("torus 4x4: degree 4 with wraparound - torus0.0 to torus3.0 is one hop") {
  const Topology t = build_topology(cluster("single-gpu-host", 16, torus({4, 4})));
  CHECK(count_kind(t, VertexKind::network_switch) == 16);
  for (VertexId v = 0; v < t.vertex_count(); ++v)
    if (t.vertex(v).kind == VertexKind::network_switch) CHECK(fabric_degree(t, v) == 4);
  Router router(t);
  const auto& paths = router.paths(vertex(t, "torus0.0"), vertex(t, "torus3.0"));
  REQUIRE(paths.size() == 1);
  CHECK(paths[0].size() == 1);
  // The farthest switch, (2,2), is 4 hops away: either way round in x and in y (2 x 2), and
  // 6 orders of the 2 x-steps and 2 y-steps.
  const auto& far = router.paths(vertex(t, "torus0.0"), vertex(t, "torus2.2"));
  CHECK(far.size() == 24);
  CHECK(far[0].size() == 4);
  // Node p sits on the switch at position p = x + 4y.
  CHECK(links_between(t, t.node(7).nics[0], vertex(t, "torus3.1")).size() == 1);
}

TEST_CASE("torus dimensions of 2 get one link - of 1 none - 3D and ring work") {
  const Topology two = build_topology(cluster("single-gpu-host", 4, torus({2, 2})));
  for (VertexId v = 0; v < two.vertex_count(); ++v)
    if (two.vertex(v).kind == VertexKind::network_switch) CHECK(fabric_degree(two, v) == 2);
  const Topology line = build_topology(cluster("single-gpu-host", 3, torus({3, 1})));
  for (VertexId v = 0; v < line.vertex_count(); ++v)
    if (line.vertex(v).kind == VertexKind::network_switch) CHECK(fabric_degree(line, v) == 2);
  const Topology cube = build_topology(cluster("single-gpu-host", 27, torus({3, 3, 3})));
  for (VertexId v = 0; v < cube.vertex_count(); ++v)
    if (cube.vertex(v).kind == VertexKind::network_switch) CHECK(fabric_degree(cube, v) == 6);
  FabricSpec ring;
  ring.type = FabricType::ring;
  const Topology r = build_topology(cluster("single-gpu-host", 5, ring));
  CHECK(count_kind(r, VertexKind::network_switch) == 5);
  Router router(r);
  CHECK(router.paths(vertex(r, "ring0"), vertex(r, "ring4")).at(0).size() == 1);
}

TEST_CASE("torus dims that do not match the node count are an error at /topology/fabric/dims") {
  const std::string message = error_of([] {
    build_topology(cluster("single-gpu-host", 12, torus({4, 4})));
  });
  CHECK_THAT(message, Contains("/topology/fabric/dims"));
  CHECK_THAT(message, Contains("16 switch positions"));
  CHECK_THAT(message, Contains("12 nodes"));
}

TEST_CASE("leaf_spine: the oversubscription ratio is the ratio of link bandwidths") {
  // 16 hosts of 100 Gb/s, 4 per leaf: 400 Gb/s down per leaf.
  ClusterSpec spec = cluster("single-gpu-host", 16);
  spec.node_groups[0].spec.nic_bytes_per_second = gbps_to_bytes_per_second(100);
  spec.fabric.type = FabricType::leaf_spine;
  spec.fabric.leaves = 4;
  spec.fabric.spines = 2;
  for (double ratio : {1.0, 2.0, 4.0}) {
    INFO("oversubscription " << ratio);
    spec.fabric.oversubscription = ratio;
    const Topology t = build_topology(spec);
    for (int i = 0; i < 4; ++i) {
      const VertexId leaf = vertex(t, "leaf" + std::to_string(i));
      double down = 0, up = 0;
      for (const Link* l : out_links_of_class(t, leaf, LinkClass::nic))
        down += l->bandwidth_bytes_per_second;
      for (const Link* l : out_links_of_class(t, leaf, LinkClass::fabric))
        up += l->bandwidth_bytes_per_second;
      CHECK(down == gbps_to_bytes_per_second(400));
      CHECK(down / up == Approx(ratio));
    }
  }
}

TEST_CASE("leaf_spine: a link rate with oversubscription derives the links per pair") {
  ClusterSpec spec = cluster("dgx-a100", 4); // 32 NICs of 200 Gb/s
  spec.fabric.type = FabricType::leaf_spine;
  spec.fabric.leaves = 2; // 16 NICs, 3.2 Tb/s down per leaf
  spec.fabric.spines = 4;
  spec.fabric.link_bytes_per_second = gbps_to_bytes_per_second(400);
  spec.fabric.oversubscription = 2; // 1.6 Tb/s up = 4 spines x 1 link x 400 Gb/s
  const Topology half = build_topology(spec);
  CHECK(links_between(half, vertex(half, "leaf0"), vertex(half, "spine3")).size() == 1);
  spec.fabric.oversubscription = 1; // 3.2 Tb/s up: 2 links per pair
  const Topology full = build_topology(spec);
  CHECK(links_between(full, vertex(full, "leaf1"), vertex(full, "spine0")).size() == 2);
  spec.fabric.links_per_pair = 2;
  CHECK_THAT(error_of([&] { build_topology(spec); }), Contains("/topology/fabric/links_per_pair"));
}

TEST_CASE("leaf_spine: NICs that do not fit the leaves are an error") {
  ClusterSpec spec = cluster("dgx-a100", 2);
  spec.fabric.type = FabricType::leaf_spine;
  spec.fabric.leaves = 1;
  spec.fabric.nics_per_leaf = 8;
  spec.fabric.spines = 1;
  const std::string message = error_of([&] { build_topology(spec); });
  CHECK_THAT(message, Contains("/topology/fabric/nics_per_leaf"));
  CHECK_THAT(message, Contains("16 NICs"));
  spec.fabric.leaves = 0; // as many leaves of 8 ports as needed
  const Topology t = build_topology(spec);
  CHECK(t.find("leaf1") != kNoVertex);
  CHECK(t.find("leaf2") == kNoVertex);
}

TEST_CASE("rail_optimized: NIC i of every node on rail i - spines join the rails") {
  FabricSpec fabric;
  fabric.type = FabricType::rail_optimized;
  fabric.rail_spines = 2;
  const Topology t = build_topology(cluster("dgx-a100", 4, fabric));
  for (int node = 0; node < 4; ++node)
    for (int i = 0; i < 8; ++i)
      CHECK(links_between(t, t.node(node).nics[static_cast<std::size_t>(i)],
                          vertex(t, "rail" + std::to_string(i)))
                .size() == 1);
  // Non-blocking by default: 4 x 200 Gb/s down per rail, 2 x 400 Gb/s up.
  const auto up = out_links_of_class(t, vertex(t, "rail0"), LinkClass::fabric);
  REQUIRE(up.size() == 2);
  CHECK(up[0]->bandwidth_bytes_per_second == gbps_to_bytes_per_second(400));
  Router router(t);
  // Same rail: one switch hop; different rails: through a spine.
  CHECK(router.paths(t.node(0).nics[3], t.node(2).nics[3]).at(0).size() == 2);
  CHECK(router.paths(t.node(0).nics[3], t.node(2).nics[4]).size() == 2);
}

TEST_CASE("single_switch: one switch - its latency split over the two NIC links") {
  FabricSpec fabric;
  fabric.link_latency = 1000 * kPsPerNs;
  const Topology t = build_topology(cluster("cloud-8xv100-25g", 3, fabric));
  CHECK(count_kind(t, VertexKind::network_switch) == 1);
  const auto nic = out_links_of_class(t, t.node(0).nics[0], LinkClass::nic);
  REQUIRE(nic.size() == 1);
  CHECK(nic[0]->latency == 10 * kPsPerUs + 500 * kPsPerNs);
  CHECK(nic[0]->bandwidth_bytes_per_second == gbps_to_bytes_per_second(25));
}

TEST_CASE("single_switch: a fabric bandwidth is the port rate and caps faster NICs") {
  FabricSpec fabric;
  fabric.link_bytes_per_second = gbps_to_bytes_per_second(100);
  const Topology t = build_topology(cluster("dgx-h100", 2, fabric)); // 400 Gb/s NICs
  for (VertexId nic : t.node(1).nics)
    CHECK(out_links_of_class(t, nic, LinkClass::nic).at(0)->bandwidth_bytes_per_second ==
          gbps_to_bytes_per_second(100));
}

TEST_CASE("heterogeneous clusters: nodes in group order - GPU ranks node-major") {
  const Topology t = build(R"({"nodes": [
      {"preset": "dgx-a100", "count": 2},
      {"preset": "cloud-8xv100-25g", "count": 2, "nic_bandwidth_gbps": 50},
      {"count": 1, "gpus": 4, "gpu_model": "A10G", "intra": "pcie_only",
       "pcie_bandwidth_gbps": 126, "nic_bandwidth_gbps": 100}],
    "fabric": {"type": "leaf_spine", "leaves": 2, "spines": 2}})");
  REQUIRE(t.nodes().size() == 5);
  CHECK(t.node(0).preset == "dgx-a100");
  CHECK(t.node(2).preset == "cloud-8xv100-25g");
  CHECK(t.node(4).preset == "custom");
  CHECK(t.node(4).gpu_model == "A10G");
  REQUIRE(t.gpus().size() == 8 + 8 + 8 + 8 + 4);
  for (std::size_t rank = 0; rank < t.gpus().size(); ++rank) {
    const Vertex& gpu = t.vertex(t.gpus()[rank]);
    const int node = rank < 32 ? static_cast<int>(rank / 8) : 4;
    CHECK(gpu.node == node);
    CHECK(gpu.local == static_cast<int>(rank) - node * 8);
  }
  CHECK(
      out_links_of_class(t, t.node(3).nics[0], LinkClass::nic).at(0)->bandwidth_bytes_per_second ==
      gbps_to_bytes_per_second(50));
  CHECK(
      out_links_of_class(t, t.node(4).gpus[0], LinkClass::pcie).at(0)->bandwidth_bytes_per_second ==
      gbps_to_bytes_per_second(126));
}

TEST_CASE("custom fabric: switches and links by name") {
  const Topology t = build(R"({"nodes": [{"preset": "single-gpu-host", "count": 4}],
    "fabric": {"type": "custom", "vertices": [{"name": "s0"}, {"name": "s1", "tier": 1}],
      "links": [{"from": "node0/nic0", "to": "s0"}, {"from": "node1/nic0", "to": "s0"},
                {"from": "node2/nic0", "to": "s1", "bandwidth_gbps": 40},
                {"from": "s1", "to": "node3/nic0"},
                {"from": "s0", "to": "s1", "bandwidth_gbps": 40, "latency_ns": 2000}]}})");
  const VertexId s0 = vertex(t, "s0"), s1 = vertex(t, "s1");
  CHECK(t.vertex(s1).tier == 1);
  const auto trunk = links_between(t, s0, s1);
  REQUIRE(trunk.size() == 1);
  CHECK(trunk[0]->link_class == LinkClass::fabric);
  CHECK(trunk[0]->latency == 2'000'000);
  CHECK(trunk[0]->bandwidth_bytes_per_second == gbps_to_bytes_per_second(40));
  const auto nic = links_between(t, t.node(0).nics[0], s0);
  REQUIRE(nic.size() == 1);
  CHECK(nic[0]->link_class == LinkClass::nic);
  CHECK(nic[0]->bandwidth_bytes_per_second == gbps_to_bytes_per_second(10)); // the NIC's rate
  CHECK(links_between(t, s1, t.node(3).nics[0]).size() == 1);
}

TEST_CASE(
    "custom fabric errors: unknown names with a suggestion, non-NIC ends, disconnected nodes") {
  auto custom = [](const std::string& links) {
    return error_of([&] {
      build(R"({"nodes": [{"preset": "single-gpu-host", "count": 2}], "fabric": {"type": "custom",
        "vertices": [{"name": "spine"}], "links": )" +
            links + "}}");
    });
  };
  const std::string unknown = custom(R"([{"from": "node0/nic0", "to": "spien"}])");
  CHECK_THAT(unknown, Contains("/topology/fabric/links/0/to"));
  CHECK_THAT(unknown, Contains("did you mean \"spine\"?"));
  const std::string nic_typo = custom(R"([{"from": "node0/nci0", "to": "spine"}])");
  CHECK_THAT(nic_typo, Contains("/topology/fabric/links/0/from"));
  CHECK_THAT(nic_typo, Contains("did you mean \"node0/nic0\"?"));
  CHECK_THAT(custom(R"([{"from": "node0/nic1", "to": "spine"}])"), Contains("node 0 has 1 NIC"));
  CHECK_THAT(custom(R"([{"from": "node5/nic0", "to": "spine"}])"), Contains("no node 5"));
  CHECK_THAT(custom(R"([{"from": "node0/gpu0", "to": "spine"}])"), Contains("is a gpu"));
  CHECK_THAT(custom(R"([{"from": "spine", "to": "spine"}])"), Contains("itself"));
  const std::string apart = custom(R"([{"from": "node0/nic0", "to": "spine"}])");
  CHECK_THAT(apart, Contains("/topology/fabric"));
  CHECK_THAT(apart, Contains("cannot reach"));
}

TEST_CASE("nodes that can only meet through a third server are not connected") {
  // node1 has two NICs, one on each switch; nodes 0 and 2 would need node1 to forward.
  const std::string message = error_of([] {
    build(R"({"nodes": [{"preset": "single-gpu-host"},
                         {"preset": "single-gpu-host", "nics": 2},
                         {"preset": "single-gpu-host"}],
      "fabric": {"type": "custom", "vertices": [{"name": "a"}, {"name": "b"}],
        "links": [{"from": "node0/nic0", "to": "a"}, {"from": "node1/nic0", "to": "a"},
                  {"from": "node1/nic1", "to": "b"}, {"from": "node2/nic0", "to": "b"}]}})");
  });
  CHECK_THAT(message, Contains("node 0 cannot reach those of node 2"));
}
