// nccl_tree on the analytic engine: its closed forms on one switch (uniform_star.hpp), pipelining,
// linear growth with the bytes, and the reason it exists: its channels spread a node's traffic
// over all of the node's NICs, where one tree head funnels it through one.
#include "uniform_star.hpp"

#include "ddlsim/topologies/builders.hpp"
#include "ddlsim/topologies/presets.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::sim;
using namespace ddlsim::sim::test;

namespace {

coll::CollectiveCall tree_call(int ranks, std::uint64_t bytes, int channels, int chunks,
                               std::vector<int> node_of_rank = {}) {
  coll::CollectiveCall call = make_call(coll::Op::all_reduce, "nccl_tree", ranks, bytes);
  call.params.channels = channels;
  call.params.chunks = chunks;
  call.node_of_rank = std::move(node_of_rank);
  return call;
}

// Two DGX-A100 servers (eight GPUs on NVSwitch, `nics` NICs) under one switch.
topo::Topology two_dgx(int nics) {
  topo::ClusterSpec spec;
  topo::NodeSpec node = *topo::find_node_preset("dgx-a100");
  node.nics = nics;
  spec.node_groups.push_back({node, 2});
  spec.fabric.type = topo::FabricType::single_switch;
  return topo::build_topology(spec);
}

double simulate_on(const topo::Topology& topology, coll::CollectiveCall call) {
  for (int r = 0; r < call.ranks; ++r)
    call.node_of_rank.push_back(topology.vertex(topology.gpus()[std::size_t(r)]).node);
  topo::Router router(topology);
  return double(simulate_analytic(topology, router, coll::Schedule::make(call), {}).time);
}

} // namespace

TEST_CASE("nccl_tree: a chain inside one node, unpipelined: 2(p-1)(a + n b) + (p-1) n g") {
  // One node of p GPUs, one channel, one chunk: the chain head 0 <- 1 <- ... <- p-1 reduces up
  // (p-1 receive-reduces) and broadcasts back down.
  for (int p : {2, 3, 5, 8}) {
    const double n = 64 * 1024;
    INFO("p = " << p);
    check_equal(simulate(tree_call(p, std::uint64_t(n), 1, 1, std::vector<int>(std::size_t(p)))),
                2 * (p - 1) * (kAlpha + n * kBeta) + (p - 1) * n * kGamma);
  }
}

TEST_CASE("nccl_tree: two nodes, both trees: 2a + n b + n/2 g, the ring's cost") {
  // Tree 0 reduces the first half from rank 1 into rank 0 while tree 1 (its mirror) reduces the
  // second half the other way, on the other direction of the links; then both broadcast back.
  const double n = 64 * 1024;
  check_equal(simulate(tree_call(2, std::uint64_t(n), 2, 1)),
              2 * kAlpha + n * kBeta + n / 2 * kGamma);
  check_equal(simulate(make_call(coll::Op::all_reduce, "ring", 2, std::uint64_t(n))),
              2 * kAlpha + n * kBeta + n / 2 * kGamma);
}

TEST_CASE("nccl_tree: pipelining in chunks approaches the bandwidth bound") {
  // Four nodes of four GPUs on one switch, eight channels (both trees on every GPU's chain).
  // Every GPU sends about 2n over its one link, so 2n·β bounds the time from below; the
  // channels already overlap one another, and chunks fill the rest of the pipeline.
  std::vector<int> nodes;
  for (int r = 0; r < 16; ++r) nodes.push_back(r / 4);
  const double n = 64.0 * 1024 * 1024;
  const double bound = 2 * n * kBeta;
  double previous = 0;
  for (int chunks : {16, 4, 1}) {
    const double time = simulate(tree_call(16, std::uint64_t(n), 8, chunks, nodes));
    INFO("K = " << chunks << ": " << time << " ps, 2n b = " << bound);
    CHECK(time > bound);
    CHECK(time > previous);
    previous = time;
    if (chunks == 16) CHECK(time < 1.05 * bound);
    if (chunks == 1) CHECK(time > 1.3 * bound);
  }
}

TEST_CASE("nccl_tree: at large sizes twice the bytes take about twice the time") {
  const topo::Topology topology = two_dgx(8);
  const double once = simulate_on(topology, tree_call(16, 256 << 20, 16, 8));
  const double twice = simulate_on(topology, tree_call(16, 512 << 20, 16, 8));
  INFO(once << " ps, " << twice << " ps");
  CHECK(twice > 1.9 * once);
  CHECK(twice < 2.02 * once);
}

TEST_CASE("nccl_tree: C = L channels put every NIC to work, one tree head uses one") {
  // Two DGX-A100: with eight channels each GPU heads one and sends over its own NIC, so eight
  // NICs move the inter-node bytes about eight times as fast as one NIC; a single head (one
  // channel, or double_binary_tree) goes through one NIC whatever the node has.
  const std::uint64_t bytes = 256 << 20;
  const topo::Topology eight = two_dgx(8), one = two_dgx(1);
  const double spread = simulate_on(eight, tree_call(16, bytes, 8, 8));
  const double funnelled = simulate_on(one, tree_call(16, bytes, 8, 8));
  INFO("8 NICs: " << spread << " ps, 1 NIC: " << funnelled << " ps");
  CHECK(funnelled > 3 * spread);
  const double head8 = simulate_on(eight, tree_call(16, bytes, 1, 8));
  const double head1 = simulate_on(one, tree_call(16, bytes, 1, 8));
  INFO("one channel: 8 NICs " << head8 << " ps, 1 NIC " << head1 << " ps");
  CHECK(head1 < 1.1 * head8);
  CHECK(head8 > 3 * spread);
}
