// NVLS on the analytic engine: switch steps (rule 4 of step.hpp) timed as one flow over every
// member's leg to the NVSwitch and the switch's legs out (sim/src/switch_routes.hpp).
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/sim/analytic_engine.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "ddlsim/topologies/presets.hpp"
#include "error_of.hpp"
#include "make_call.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>

using namespace ddlsim;
using namespace ddlsim::sim;

namespace {

constexpr double kLink = 1e11;                 // bytes/s per GPU and direction to the switch
constexpr Picoseconds kHop = 300 * kPsPerNs;   // GPU to switch, one way
constexpr std::uint64_t kBytes = 8'000'000;    // n: 2e6 fp32, a multiple of 8 ranks' shards
constexpr Picoseconds kNOverB = 80 * kPsPerUs; // n / kLink

topo::NodeSpec nvswitch_node(int gpus, bool nvls) {
  topo::NodeSpec node;
  node.gpu_model = "H100-SXM5-80GB";
  node.gpus = gpus;
  node.intra = topo::IntraNode::nvswitch;
  node.nvlink_bytes_per_second = kLink;
  node.nvlink_latency = kHop;
  node.nvls = nvls;
  node.pcie_bytes_per_second = 63e9;
  node.nics = 1;
  node.nic_bytes_per_second = 50e9;
  return node;
}

// 2 nodes of 2 NVSwitch GPUs with multicast, a 400 Gb/s NIC per GPU, NVLink at `nvlink` bytes/s:
// NVLS-Tree's switch and network side by side.
topo::ClusterSpec two_nvls_nodes(double nvlink) {
  topo::NodeSpec node = nvswitch_node(2, true);
  node.nics = 2;
  node.nvlink_bytes_per_second = nvlink;
  topo::ClusterSpec spec;
  spec.node_groups.push_back({node, 2});
  return spec;
}

topo::Topology cluster(int nodes, int gpus, bool nvls) {
  topo::ClusterSpec spec;
  spec.node_groups.push_back({nvswitch_node(gpus, nvls), nodes});
  return topo::build_topology(spec);
}

coll::CollectiveCall call_of(const std::string& algorithm, int ranks, std::uint64_t bytes,
                             int chunks = 1, int per_node = 0) {
  coll::CollectiveCall call =
      test_support::make_call(coll::Op::all_reduce, algorithm, ranks, bytes / 4);
  call.params.chunks = chunks;
  if (per_node > 0)
    for (int r = 0; r < ranks; ++r) call.node_of_rank.push_back(r / per_node);
  return call;
}

Picoseconds time_of(const topo::Topology& topology, const coll::CollectiveCall& call,
                    AnalyticOptions options = {}) {
  topo::Router router(topology);
  return simulate_analytic(topology, router, coll::Schedule::make(call), options).time;
}

} // namespace

TEST_CASE("nvls: one chunk is a switch reduce then a multicast, n/B each, 2 hops of latency each") {
  // Reduce: each GPU's uplink carries all p shards (n), each owner's downlink its own (n/p):
  // the uplinks are the bottleneck, n/B. Multicast: each downlink carries all p shards, n/B.
  for (int p : {2, 4, 8}) {
    INFO("p = " << p);
    const topo::Topology topology = cluster(1, p, true);
    const Picoseconds t = time_of(topology, call_of("nvls", p, kBytes));
    CHECK(std::llabs(t - (4 * kHop + 2 * kNOverB)) <= 4);
  }
}

TEST_CASE("nvls: pipelined chunks approach (n + n/p)/B per GPU and beat the ring for p >= 4") {
  constexpr std::uint64_t kLarge = 256'000'000; // 4 MB chunks at 64: round trips are noise
  for (int p : {4, 8}) {
    const topo::Topology topology = cluster(1, p, true);
    const double per_gpu = double(kLarge) * (1.0 + 1.0 / p) / kLink * 1e12; // ps
    const double ring = double(time_of(topology, call_of("ring", p, kLarge)));
    double pipelined = 0;
    for (int chunks : {16, 64}) {
      INFO("p = " << p << ", chunks = " << chunks);
      const double t = double(time_of(topology, call_of("nvls", p, kLarge, chunks)));
      // Two chunks per shard in flight (nvls.cpp) fill the pipe; 5% for the switch round trips.
      CHECK(t >= per_gpu);
      CHECK(t <= per_gpu * (1.0 + 2.0 / chunks) * 1.05);
      CHECK(t < ring);
      pipelined = t;
    }
    // NVLS against the ring: about the ratio of their bytes per GPU, (n + n/p) : 2n(p-1)/p.
    INFO("p = " << p);
    CHECK(pipelined / ring <= (1.0 + 1.0 / p) / (2.0 * (p - 1) / p) * 1.1);
  }
}

TEST_CASE("nvls: more bytes take longer, a faster switch link less") {
  const topo::Topology topology = cluster(1, 8, true);
  const Picoseconds small = time_of(topology, call_of("nvls", 8, kBytes, 8));
  const Picoseconds large = time_of(topology, call_of("nvls", 8, 4 * kBytes, 8));
  CHECK(large > 3 * small);
  topo::ClusterSpec faster;
  faster.node_groups.push_back({nvswitch_node(8, true), 1});
  faster.node_groups.back().spec.nvlink_bytes_per_second = 2 * kLink;
  CHECK(time_of(topo::build_topology(faster), call_of("nvls", 8, kBytes, 8)) < small);
}

TEST_CASE("nvls: a switch without in-switch reduction is an error naming the fix") {
  const topo::Topology plain = cluster(1, 8, false);
  const std::string error =
      test_support::error_of([&] { time_of(plain, call_of("nvls", 8, kBytes)); });
  CHECK_THAT(error, Catch::Contains("needs an NVSwitch that reduces in the switch"));
  CHECK_THAT(error, Catch::Contains("has no \"nvls\""));
  CHECK_THAT(error, Catch::Contains("\"nvls\": true"));
  // Ranks on two nodes: the route between them crosses NICs, not one NVSwitch.
  const topo::Topology two = cluster(2, 1, true);
  CHECK_THAT(test_support::error_of([&] { time_of(two, call_of("nvls", 2, kBytes)); }),
             Catch::Contains("has none"));
}

TEST_CASE("nvls: the dependency-order evaluation hands switch steps to the event-driven one") {
  const topo::Topology topology = cluster(1, 8, true);
  topo::Router router(topology);
  const coll::Schedule schedule = coll::Schedule::make(call_of("nvls", 8, kBytes, 4));
  CHECK_FALSE(simulate_dependency_order(topology, router, schedule, {}).has_value());
  const CollectiveTiming timing = simulate_analytic(topology, router, schedule, {});
  CHECK_FALSE(timing.evaluated_in_dependency_order);
  AnalyticOptions events_only;
  events_only.try_dependency_order = false;
  CHECK(simulate_analytic(topology, router, schedule, events_only).time == timing.time);
  // Each reduce puts every member's shard on the wire, each multicast the owner's once.
  CHECK(timing.bytes_sent == 8 * kBytes + kBytes);
}

TEST_CASE("nvls: nvls_tree on two H100 nodes beats a flat ring and uses every NIC") {
  topo::ClusterSpec spec;
  spec.node_groups.push_back({*topo::find_node_preset("dgx-h100"), 2});
  const topo::Topology topology = topo::build_topology(spec);
  const std::uint64_t bytes = 256 << 20;
  const Picoseconds tree = time_of(topology, call_of("nvls_tree", 16, bytes, 16, 8));
  const Picoseconds ring = time_of(topology, call_of("ring", 16, bytes, 1, 8));
  CHECK(tree < ring);
  // Every GPU's shard crosses its NIC: 2·(n/8)·(N-1)/N = n/8 each way, at 400 Gb/s n/8 / 50 GB/s
  // (about the NVLink side's (n + n/8) / 450 GB/s, which overlaps it). The route's ECMP choice
  // may put two GPUs of one PCIe switch on the same NIC (NCCL's rail affinity is not modelled
  // here), so allow up to twice that plus the pipeline's fill; a flat ring is about 4x.
  const double nic_bound = double(bytes) / 8.0 / 50e9 * 1e12;
  CHECK(double(tree) >= nic_bound);
  CHECK(double(tree) <= 2.5 * nic_bound);
}

TEST_CASE("nvls: nvls_tree crosses the nodes in a tree, 2·lg N hops, not a ring's 2(N-1)") {
  // NCCL's NVLS-Tree runs a binary tree of the shard owners across the nodes (src/graph/
  // connect.cc, ncclGetDtree), and its tuner charges 2·log2(N) network hops (src/graph/
  // tuning.cc). With a small message (1 KiB) and one chunk the time is all latency: a leaf's
  // shard goes lg N levels up and comes back, so 4 nodes take 4 hops and 8 nodes 6 (a ring: 6
  // and 14).
  const Picoseconds hop = 20 * kPsPerUs; // NCCL's NET latency for NVLS-Tree/Simple, about 20 us
  auto time_for = [hop](int nodes, int chunks) {
    const int gpus = 2;
    coll::CollectiveCall call = call_of("nvls_tree", nodes * gpus, 1024, chunks, gpus);
    call.protocol.inter_hop_ps = hop;
    return time_of(cluster(nodes, gpus, true), call);
  };
  const Picoseconds four = time_for(4, 1), eight = time_for(8, 1);
  CHECK(four >= 4 * hop);
  CHECK(four < 5 * hop);
  CHECK(eight >= 6 * hop);
  CHECK(eight < 7 * hop);
  // Doubling the nodes adds one level: two hops, not the ring's 2N.
  CHECK(eight - four >= 2 * hop - hop / 4);
  CHECK(eight - four <= 2 * hop + hop / 4);
  // 64 chunks: a connection carries up to NCCL_STEPS = 8 at once (the receiving lane posts its
  // receives 8 chunks ahead, as NCCL's slots allow), so the first hop passes them in 64 / 8 = 8
  // rounds of one hop, and the last round then takes the rest of the round trip, 2·lg N - 1
  // hops: 8 + 2·lg N - 1 in all. The upward and downward streams are separate programs (NCCL's
  // reduce and bcast warps), so neither holds the other up.
  for (int nodes : {2, 4, 8}) {
    INFO("nodes = " << nodes);
    const int levels = nodes == 2 ? 1 : nodes == 4 ? 2 : 3;
    const Picoseconds many = time_for(nodes, 64);
    CHECK(many >= (8 + 2 * levels - 1) * hop);
    CHECK(many < (8 + 2 * levels) * hop);
  }
}

TEST_CASE("nvls: nvls_tree on two DGX H100 runs at its switch steps' pace at large sizes") {
  // Two nodes: each GPU's shard makes one exchange across the network, n/8 at 50 GB/s, while its
  // NVLinks carry n + n/8 each way through the switch, at nvlsEfficiency (0.85 on Hopper, NCCL
  // src/graph/tuning.cc) of the preset's NVLink rate: the switch is the slower side, and since
  // NCCL's warp groups run the switch reduces, the tree's two streams and the multicasts apart
  // (src/device/all_reduce.h), a large call takes about the switch's time alone.
  topo::ClusterSpec spec;
  const topo::NodeSpec node = *topo::find_node_preset("dgx-h100");
  spec.node_groups.push_back({node, 2});
  const topo::Topology topology = topo::build_topology(spec);
  const std::uint64_t bytes = std::uint64_t{4} << 30;
  coll::CollectiveCall call = call_of("nvls_tree", 16, bytes, 64, 8);
  call.params.channels = 16;
  call.protocol.switch_efficiency = 0.85;
  const double switch_bound =
      double(bytes) * (1.0 + 1.0 / 8) / (0.85 * node.nvlink_bytes_per_second) * 1e12;
  const double network = double(bytes) / 8 / node.nic_bytes_per_second * 1e12;
  REQUIRE(network < switch_bound);
  const double t = double(time_of(topology, call));
  CHECK(t >= switch_bound);
  CHECK(t <= 1.06 * switch_bound);
  // A slower switch slows the call as much; the network's rate hardly matters.
  call.protocol.switch_efficiency = 0.5;
  const double slower = double(time_of(topology, call));
  CHECK(slower >= switch_bound * 0.85 / 0.5);
  CHECK(slower <= 1.06 * switch_bound * 0.85 / 0.5);
}

TEST_CASE(
    "nvls: nvls_tree overlaps the switch with the network, the larger of the two sets the time") {
  // 2 nodes of 2 GPUs, a 400 Gb/s NIC per GPU, NVLink set so that a GPU's switch traffic,
  // (n + n/L)/B_i, takes as long as its NIC's, (n/L)/B_o: 2.56 ms each for n = 256 MB. NCCL's
  // warp groups feed the switch apart from the ones that wait for the tree, so the two overlap
  // and a large call takes about one of them; taking turns (each chunk through the switch, then
  // through the network) would take about their sum.
  constexpr std::uint64_t bytes = 256'000'000;
  const topo::ClusterSpec spec = two_nvls_nodes(1.5e11);
  const topo::Topology topology = topo::build_topology(spec);
  const double one = double(bytes) / 2 / 50e9 * 1e12; // either resource alone, ps
  // The first chunk's trip through the switch and the last one's multicast do not overlap the
  // network: more (smaller) chunks make that share smaller.
  const double coarse = double(time_of(topology, call_of("nvls_tree", 4, bytes, 16, 2)));
  const double fine = double(time_of(topology, call_of("nvls_tree", 4, bytes, 64, 2)));
  CHECK(fine >= one);
  CHECK(fine <= 1.1 * one); // the lanes keep both resources busy
  CHECK(fine < coarse);
  CHECK(coarse <= 1.4 * one);
  // Halving the NIC rate makes the network the bottleneck: the time follows it, not the sum.
  topo::ClusterSpec slow = spec;
  slow.node_groups.back().spec.nic_bytes_per_second = 25e9;
  const double t =
      double(time_of(topo::build_topology(slow), call_of("nvls_tree", 4, bytes, 64, 2)));
  CHECK(t >= 2 * one);
  CHECK(t <= 2.3 * one);
}

TEST_CASE("nvls: a switch step puts n / switch_efficiency on its links, other steps keep theirs") {
  // NCCL rates multimem traffic through the switch at nvlsEfficiency of the unicast NVLink rate
  // (src/graph/tuning.cc, NCCL 2.30.7); coll::Protocol::switch_efficiency charges it on the switch
  // steps only. One chunk: a reduce and a multicast, n/B each at efficiency 1 (first case above),
  // so n/(e·B) each at efficiency e; with payload_efficiency too, n/(e·f·B).
  const topo::Topology topology = cluster(1, 4, true);
  coll::CollectiveCall call = call_of("nvls", 4, kBytes);
  call.protocol.switch_efficiency = 0.5;
  CHECK(std::llabs(time_of(topology, call) - (4 * kHop + 4 * kNOverB)) <= 4);
  call.protocol.payload_efficiency = 0.5;
  CHECK(std::llabs(time_of(topology, call) - (4 * kHop + 8 * kNOverB)) <= 4);
  // A ring has no switch steps: its time does not see the switch efficiency.
  coll::CollectiveCall ring = call_of("ring", 4, kBytes);
  const Picoseconds plain = time_of(topology, ring);
  ring.protocol.switch_efficiency = 0.5;
  CHECK(time_of(topology, ring) == plain);
}

TEST_CASE("nvls: nvls_tree's switch efficiency slows the switch, not the network") {
  // 2 nodes of 2 GPUs with the NVLinks fast enough that the network sets the time: a switch
  // efficiency that still leaves the switch faster than the network changes the time a little
  // (the pipeline's first and last chunks), one that makes the switch the slower resource makes
  // the time follow the switch at its efficiency: (n + n/L) / (e·B_i).
  constexpr std::uint64_t bytes = 256'000'000;
  const topo::Topology topology = topo::build_topology(two_nvls_nodes(3e11));
  const double network = double(bytes) / 2 / 50e9 * 1e12; // (n/L)/B_o, ps
  coll::CollectiveCall call = call_of("nvls_tree", 4, bytes, 64, 2);
  const double full = double(time_of(topology, call));
  call.protocol.switch_efficiency = 0.85;
  const double hopper = double(time_of(topology, call));
  CHECK(hopper >= full);
  CHECK(hopper <= 1.05 * full);
  CHECK(hopper >= network);
  call.protocol.switch_efficiency = 0.25;
  const double slow = double(time_of(topology, call));
  const double switch_bound = double(bytes) * 1.5 / (0.25 * 3e11) * 1e12;
  CHECK(slow >= switch_bound);
  CHECK(slow <= 1.25 * switch_bound);
}
