// Router: least-cost paths, transit rules, deterministic order, caching.
#include "topology_test_util.hpp"

#include "ddlsim/topologies/router.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

using namespace ddlsim;
using namespace ddlsim::topo;
using namespace ddlsim::topo::test;

namespace {

std::int64_t cost_of(const Topology& t, const Path& path) {
  std::int64_t cost = 0;
  for (LinkId l : path) cost += Router::link_cost(t.link(l));
  return cost;
}

// Every path chains from src to dst, has the same cost, no GPU in the middle, no vertex of a
// third node; the set is sorted and free of duplicates.
void check_paths(const Topology& t, VertexId src, VertexId dst, const std::vector<Path>& paths) {
  REQUIRE_FALSE(paths.empty());
  const std::int64_t cost = cost_of(t, paths.front());
  const std::int32_t src_node = t.vertex(src).node, dst_node = t.vertex(dst).node;
  for (const Path& path : paths) {
    REQUIRE_FALSE(path.empty());
    CHECK(t.link(path.front()).src == src);
    CHECK(t.link(path.back()).dst == dst);
    CHECK(cost_of(t, path) == cost);
    for (std::size_t i = 0; i + 1 < path.size(); ++i) {
      const VertexId middle = t.link(path[i]).dst;
      CHECK(t.link(path[i + 1]).src == middle);
      const Vertex& v = t.vertex(middle);
      CHECK(v.kind != VertexKind::gpu);
      CHECK((v.node < 0 || v.node == src_node || v.node == dst_node));
    }
  }
  CHECK(std::is_sorted(paths.begin(), paths.end()));
  CHECK(std::adjacent_find(paths.begin(), paths.end()) == paths.end());
}

FabricSpec fat_tree(int k) {
  FabricSpec f;
  f.type = FabricType::fat_tree;
  f.k = k;
  return f;
}

} // namespace

TEST_CASE("inside a DGX A100 - GPU pairs talk through the NVSwitch - not PCIe") {
  const Topology t = build_topology(cluster("dgx-a100", 1));
  Router router(t);
  const VertexId plane = vertex(t, "node0/nvswitch");
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b) {
      if (a == b) continue;
      const auto& paths = router.paths(t.gpus()[a], t.gpus()[b]);
      REQUIRE(paths.size() == 1);
      REQUIRE(paths[0].size() == 2);
      CHECK(t.link(paths[0][0]).dst == plane);
      CHECK(t.link(paths[0][0]).link_class == LinkClass::nvlink);
      CHECK(t.link(paths[0][1]).link_class == LinkClass::nvlink);
    }
}

TEST_CASE("inside a DGX-1 - NVLink neighbours talk directly and the rest go over PCIe") {
  const Topology t = build_topology(cluster("dgx1-v100", 1));
  Router router(t);
  const auto& direct = router.paths(t.gpus()[0], t.gpus()[1]);
  REQUIRE(direct.size() == 1);
  REQUIRE(direct[0].size() == 1);
  CHECK(t.link(direct[0][0]).link_class == LinkClass::nvlink);
  // GPU 0 and GPU 5 share no NVLink, and GPU 1 or GPU 4 may not relay: PCIe through the CPU.
  const auto& far = router.paths(t.gpus()[0], t.gpus()[5]);
  check_paths(t, t.gpus()[0], t.gpus()[5], far);
  REQUIRE(far.size() == 1);
  CHECK(far[0].size() == 4);
  for (LinkId l : far[0]) CHECK(t.link(l).link_class == LinkClass::pcie);
}

TEST_CASE("GPUs never transit and servers never forward for others") {
  SECTION("DGX A100 nodes on a fat tree") {
    const Topology t = build_topology(cluster("dgx-a100", 4, fat_tree(6)));
    Router router(t);
    for (std::size_t a = 0; a < t.gpus().size(); a += 3)
      for (std::size_t b = 1; b < t.gpus().size(); b += 5)
        if (a != b)
          check_paths(t, t.gpus()[a], t.gpus()[b], router.paths(t.gpus()[a], t.gpus()[b]));
  }
  SECTION("cloud nodes with one NIC on a torus") {
    FabricSpec fabric;
    fabric.type = FabricType::torus2d;
    fabric.dims = {3, 2};
    const Topology t = build_topology(cluster("cloud-8xv100-25g", 6, fabric));
    Router router(t);
    for (std::size_t a = 0; a < t.gpus().size(); a += 7)
      for (std::size_t b = 0; b < t.gpus().size(); b += 3)
        if (a != b)
          check_paths(t, t.gpus()[a], t.gpus()[b], router.paths(t.gpus()[a], t.gpus()[b]));
  }
}

TEST_CASE("across DGX A100 nodes - each GPU uses the two NICs on its PCIe switch") {
  const Topology t = build_topology(cluster("dgx-a100", 2));
  Router router(t);
  const auto& paths = router.paths(t.node(0).gpus[2], t.node(1).gpus[7]);
  check_paths(t, t.node(0).gpus[2], t.node(1).gpus[7], paths);
  CHECK(paths.size() == 4); // 2 NICs on each side
  std::set<VertexId> first_nics;
  for (const Path& p : paths) first_nics.insert(t.link(p[1]).dst);
  CHECK(first_nics == std::set<VertexId>{t.node(0).nics[2], t.node(0).nics[3]});
}

TEST_CASE("paths come in a deterministic order - capped by max_paths_per_pair") {
  const Topology t = build_topology(cluster("dgx-a100", 16, fat_tree(8)));
  const VertexId src = t.node(0).gpus[0], dst = t.node(15).gpus[7];
  Router a(t), b(t), capped(t, 3);
  const std::vector<Path> first = a.paths(src, dst);
  (void)b.paths(dst, src);
  CHECK(b.paths(src, dst) == first);
  check_paths(t, src, dst, first);
  CHECK(first.size() == 2 * 16 * 2); // 2 NICs x (k/2)^2 core paths x 2 NICs
  const auto& three = capped.paths(src, dst);
  REQUIRE(three.size() == 3);
  CHECK(std::equal(three.begin(), three.end(), first.begin()));
}

TEST_CASE("paths are cached per pair - src == dst gives one empty path") {
  const Topology t = build_topology(cluster("single-gpu-host", 2));
  Router router(t);
  const auto& once = router.paths(t.gpus()[0], t.gpus()[1]);
  const auto& twice = router.paths(t.gpus()[0], t.gpus()[1]);
  CHECK(&once == &twice);
  CHECK(router.cached_pairs() == 1);
  const auto& self = router.paths(t.gpus()[0], t.gpus()[0]);
  REQUIRE(self.size() == 1);
  CHECK(self[0].empty());
  router.clear_cache();
  CHECK(router.cached_pairs() == 0);
}

TEST_CASE("an unreachable vertex gives no path") {
  Topology t;
  const VertexId a = t.add_vertex(Vertex{VertexKind::network_switch, "a", -1, 0, 0});
  const VertexId b = t.add_vertex(Vertex{VertexKind::network_switch, "b", -1, 1, 0});
  const VertexId c = t.add_vertex(Vertex{VertexKind::network_switch, "c", -1, 2, 0});
  t.add_duplex_link(a, b, 1e9, 1000, LinkClass::fabric);
  Router router(t);
  CHECK(router.paths(a, c).empty());
  CHECK(router.paths(a, b).size() == 1);
  CHECK(router.paths(a, c).empty()); // scratch state was reset between queries
}

TEST_CASE("link cost: latency plus the time to push 64 KiB") {
  Link link{0, 1, 65536.0 * 1e6, 500, 0, LinkClass::fabric, 1}; // 64 KiB in 1 us
  CHECK(Router::link_cost(link) == 500 + 1'000'000);
  link.bandwidth_bytes_per_second *= 2;
  CHECK(Router::link_cost(link) == 500 + 500'000);
}
