// Multi-node collectives use every NIC: each channel leaves a node by the NIC of its GPU
// (Node::gpu_nics), so a large 2-node all-reduce runs at the node's total NIC rate, and the
// per-link load report (sim/link_load.hpp) accounts for exactly the schedule's bytes.
#include "ddlsim/sim/link_load.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "ddlsim/topologies/presets.hpp"
#include "make_call.hpp"

#include <catch2/catch.hpp>

#include <map>

using namespace ddlsim;
using namespace ddlsim::sim;
using ddlsim::test_support::make_call;

namespace {

// Two DGX-A100 servers (eight GPUs on NVSwitch, 4 PCIe switches, `nics` NICs) under one switch.
topo::Topology two_dgx(int nics) {
  topo::ClusterSpec spec;
  topo::NodeSpec node = *topo::find_node_preset("dgx-a100");
  node.nics = nics;
  spec.node_groups.push_back({node, 2});
  spec.fabric.type = topo::FabricType::single_switch;
  return topo::build_topology(spec);
}

coll::CollectiveCall on_nodes(const topo::Topology& topology, coll::Op op,
                              const std::string& algorithm, std::uint64_t bytes, int channels) {
  coll::CollectiveCall call = make_call(op, algorithm, int(topology.gpus().size()), bytes / 4);
  call.params.channels = channels;
  for (topo::VertexId gpu : topology.gpus()) call.node_of_rank.push_back(topology.vertex(gpu).node);
  return call;
}

CollectiveTiming run(const topo::Topology& topology, const coll::CollectiveCall& call,
                     bool record = false) {
  topo::Router router(topology);
  AnalyticOptions options;
  options.record_steps = record;
  return simulate_analytic(topology, router, coll::Schedule::make(call), options);
}

// The rate of node 0's first NIC into the fabric.
double nic_bytes_per_second(const topo::Topology& topology) {
  for (topo::LinkId link : topology.out_links(topology.node(0).nics.front()))
    if (topology.link(link).link_class == topo::LinkClass::nic)
      return topology.link(link).bandwidth_bytes_per_second;
  return 0;
}

} // namespace

TEST_CASE("nccl_ring across 2 nodes: time = 2n(p-1)/p / (NICs x NIC rate) at large sizes") {
  // 16 channels on 8 GPUs per node: two channels leave by each GPU, on its own NIC (8 NICs), on
  // the one NIC of its PCIe switch (4), or on one of the two NICs through the CPU (2). Every NIC
  // carries the same share, so the node's 2n(p-1)/p bytes leave at the NICs' total rate.
  const std::uint64_t n = 1ull << 30;
  double previous = 0;
  for (int nics : {2, 4, 8}) {
    INFO("NICs per node: " << nics);
    const topo::Topology topology = two_dgx(nics);
    const coll::CollectiveCall call = on_nodes(topology, coll::Op::all_reduce, "nccl_ring", n, 16);
    const double seconds = ps_to_seconds(run(topology, call).time);
    const double p = 16;
    const double closed = 2 * double(n) * (p - 1) / p / (nics * nic_bytes_per_second(topology));
    // Within 20%, not exactly: the engines let the sends of one connection share its link
    // instead of queuing as NCCL's FIFO of steps does, and the all-reduce's data then reaches
    // the NICs in bursts that leave them idle part of the time (~17% at 8 NICs, where the
    // NVLink legs are relatively slowest). Before NIC affinity, 8 NICs took twice the time.
    CHECK(seconds >= closed);
    CHECK(seconds <= closed * 1.2);
    if (previous > 0) {
      CHECK(previous / seconds >= 1.75); // twice the NICs, nearly twice as fast
      CHECK(previous / seconds <= 2.02);
    }
    previous = seconds;
  }
}

TEST_CASE("all_gather and reduce_scatter nccl_ring spread the channels over the NICs") {
  // `ring` crosses between the nodes on one GPU pair in every channel (one NIC each way);
  // nccl_ring crosses on every GPU, so 8 NICs carry it.
  const topo::Topology topology = two_dgx(8);
  const std::uint64_t n = 256ull << 20;
  for (coll::Op op : {coll::Op::all_gather, coll::Op::reduce_scatter}) {
    INFO(coll::to_string(op));
    const double ring = double(run(topology, on_nodes(topology, op, "ring", n, 16)).time);
    const double nccl = double(run(topology, on_nodes(topology, op, "nccl_ring", n, 16)).time);
    const double closed =
        double(n) * 15.0 / 16.0 / (8 * nic_bytes_per_second(topology)); // n(p-1)/p over 8 NICs
    CHECK(ps_to_seconds(Picoseconds(nccl)) <= closed * 1.05);
    CHECK(ring / nccl >= 4.0);
  }
}

TEST_CASE("link report: the bytes on a link are the schedule's bytes on it") {
  const topo::Topology topology = two_dgx(8);
  const coll::CollectiveCall call =
      on_nodes(topology, coll::Op::all_reduce, "nccl_ring", 64ull << 20, 16);
  const CollectiveTiming timing = run(topology, call, true);
  topo::Router router(topology);
  const LinkLoadReport report = link_loads(topology, router, 1, timing.steps_recorded, timing.time);

  // What the schedule sends from node 0 to node 1, and what node 0's NIC uplinks carried.
  std::uint64_t crossing = 0;
  for (const StepRecord& step : timing.steps_recorded)
    if (step.kind == coll::StepKind::send && step.rank < 8 && step.peer >= 8)
      crossing += step.bytes;
  std::map<std::string, std::uint64_t> uplinks;
  std::uint64_t total = 0, busiest = 0;
  for (const LinkLoad& load : report.links) {
    const topo::Link& link = topology.link(load.link);
    if (link.link_class != topo::LinkClass::nic || topology.vertex(link.src).node != 0) continue;
    uplinks[topology.vertex(link.src).name] = load.bytes;
    total += load.bytes;
    CHECK(load.busy <= timing.time);
    CHECK(load.utilisation == Approx(double(load.bytes) / link.bandwidth_bytes_per_second /
                                     ps_to_seconds(timing.time)));
  }
  CHECK(total == crossing);
  REQUIRE(uplinks.size() == 8);
  for (const auto& [name, bytes] : uplinks) CHECK(bytes == crossing / 8); // one rail per GPU
  // Sorted by utilisation, busiest first; NIC links are the bottleneck here.
  for (std::size_t i = 1; i < report.links.size(); ++i)
    CHECK(report.links[i - 1].utilisation >= report.links[i].utilisation);
  busiest = report.links.front().bytes;
  CHECK(topology.link(report.links.front().link).link_class == topo::LinkClass::nic);
  CHECK(busiest == crossing / 8);
  CHECK(report.links.front().utilisation > 0.75);
  CHECK(report.switch_bytes == 0);
}
