// NCCL's choice model (models/nccl_model.hpp): the description NCCL's search finds, the cost
// table of src/graph/tuning.cc (NCCL 2.30.7) against figures computed by hand from that file,
// and the choice per size.
#include "ddlsim/models/gpu.hpp"
#include "ddlsim/models/nccl_model.hpp"
#include "ddlsim/topologies/presets.hpp"
#include "error_of.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::models;
using ddlsim::test_support::error_of;

namespace {

topo::ClusterSpec cluster(const char* preset, int nodes) {
  topo::ClusterSpec spec;
  spec.node_groups.push_back({*topo::find_node_preset(preset), nodes});
  return spec;
}

bool only_ring(NcclAlgorithm a, NcclProtocol) {
  return a == NcclAlgorithm::ring;
}
bool every_algorithm(NcclAlgorithm, NcclProtocol) {
  return true;
}

} // namespace

TEST_CASE("NCCL model: compute capability from the GPU catalog and nvidia-smi names") {
  CHECK(find_gpu("H100", "x").compute_capability == 90);
  CHECK(find_gpu("A100-SXM4-80GB", "x").compute_capability == 80);
  CHECK(find_gpu("MI300X", "x").compute_capability == 0);
  CHECK(compute_capability("Tesla V100-SXM2-16GB") == 70);
  CHECK(compute_capability("NVIDIA H800") == 90);
  CHECK(compute_capability("B200") == 100);
  CHECK(compute_capability("some accelerator") == 0);
}

TEST_CASE("NCCL model: a 2-node DGX H100 as NCCL's search sees it") {
  const NcclSystem s = describe_nccl(cluster("dgx-h100", 2), 16);
  CHECK(s.nodes == 2);
  CHECK(s.local_ranks == 8);
  CHECK(s.min_cc == 90);
  CHECK(s.intra == "nvswitch");
  CHECK(s.nvlinks_per_gpu == 18);
  CHECK(s.nvlink_gbs == Approx(18 * 20.6)); // topo.h SM90_NVLINK_BW
  CHECK(s.pcie_gbs == Approx(48.0));        // Gen5 x16: 16 x 240 / 80
  CHECK(s.nic_gbs == Approx(50.0));         // 400 Gb/s / 8
  CHECK(s.nic_path == NcclNicPath::pxb);
  // Ring: 48 GB/s fits 7 channels on 370.8 GB/s of NVLink, 45 GB/s fits 8 (one per NIC).
  CHECK(s.ring == NcclGraph{8, 45, 45});
  CHECK(s.tree == NcclGraph{8, 45, 45});
  // NVLS: heads carry twice, (8 + 1) x 40 <= 370.8; across nodes raised to the NIC path's 48.
  CHECK(s.nvls == NcclGraph{8, 40, 48});
  CHECK(s.channels == 16);      // connect.cc doubles the 8 search channels
  CHECK(s.nvls_channels == 16); // NVLS_NCHANNELS_SM90
  CHECK(s.ll128);
}

TEST_CASE("NCCL model: one DGX H100 and one DGX A100 node") {
  const NcclSystem h = describe_nccl(cluster("dgx-h100", 1), 8);
  CHECK(h.ring == NcclGraph{12, 30, 30}); // 6 x 60, duplicated to 12 x 30
  CHECK(h.channels == 24);
  CHECK(h.nvls == NcclGraph{8, 40, 60});
  const NcclSystem a = describe_nccl(cluster("dgx-a100", 1), 8);
  CHECK(a.nvlink_gbs == Approx(240.0)); // 12 links x SM80_NVLINK_BW
  CHECK(a.ring == NcclGraph{12, 20, 20});
  CHECK(a.channels == 24);
  CHECK(a.nvls_channels == 0); // NVLS needs sm_90
}

TEST_CASE("NCCL model: more NICs per node give more inter-node bandwidth") {
  double previous = 0;
  for (int nics : {1, 2, 4, 8}) {
    topo::ClusterSpec spec = cluster("dgx-h100", 4);
    spec.node_groups[0].spec.nics = nics;
    spec.node_groups[0].spec.pcie_switches = std::min(nics, 4);
    const NcclSystem s = describe_nccl(spec, 32);
    INFO(nics << " NICs: " << s.summary());
    const double inter = s.ring.channels * s.ring.bw_inter;
    CHECK(inter > previous);
    previous = inter;
    const NcclTuner tuner(s);
    CHECK(
        tuner.cost(coll::Op::all_reduce, NcclAlgorithm::ring, NcclProtocol::simple).bandwidth_gbs ==
        Approx(inter * 32 / 62.0));
  }
}

TEST_CASE("NCCL model: on EFA NCCL sees aws-ofi-nccl's devices, a GPU's 4 NICs as one") {
  // p5.48xlarge: 32 x 100 Gb/s EFA, 4 beside each GPU. The plugin's RDMA protocol presents one
  // device per GPU at the 4 rails' 400 Gb/s (topo::nic_devices), so NCCL's search and cost table
  // see what a DGX H100 with 8 x 400 Gb/s NICs shows, not 32 slow NICs.
  const NcclSystem efa = describe_nccl(cluster("aws-p5-48xlarge", 2), 16);
  CHECK(efa.nics_per_node == 8);
  CHECK(efa.nic_gbs == Approx(50.0));
  const NcclSystem dgx = describe_nccl(cluster("dgx-h100", 2), 16);
  CHECK(efa.ring == dgx.ring);
  CHECK(efa.nvls == dgx.nvls);
  // Under a transport with a device per NIC, the same hardware is 32 NICs of 12.5 GB/s.
  topo::ClusterSpec ib = cluster("aws-p5-48xlarge", 2);
  ib.node_groups[0].spec.transport = topo::Transport::ib;
  const NcclSystem per_nic = describe_nccl(ib, 16);
  CHECK(per_nic.nics_per_node == 32);
  CHECK(per_nic.nic_gbs == Approx(12.5));
  // With the devices, NVLS-Tree takes the largest sizes, as the 2 x p5 log's bus bandwidth
  // (487 GB/s at 16 GiB, above the 400 GB/s a ring can move through 3,200 Gb/s) says it ran.
  CHECK(NcclTuner(efa).choose(coll::Op::all_reduce, 16ull << 30).algorithm ==
        NcclAlgorithm::nvls_tree);
}

TEST_CASE("NCCL model: tuning.cc's cost table on a 2-node DGX H100") {
  const NcclTuner tuner(describe_nccl(cluster("dgx-h100", 2), 16));
  auto cell = [&](NcclAlgorithm a, NcclProtocol p) {
    return tuner.cost(coll::Op::all_reduce, a, p);
  };
  using A = NcclAlgorithm;
  using P = NcclProtocol;
  // Ring, 8 channels x 45 GB/s; algorithm bandwidth = bus bandwidth x 16 / 30.
  CHECK(cell(A::ring, P::ll).bandwidth_gbs == Approx(39.0 * 16 / 30)); // llMaxBws Intel, 2 nodes
  CHECK(cell(A::ring, P::ll128).bandwidth_gbs == Approx(8 * 36.7 * 16 / 30).epsilon(1e-5));
  CHECK(cell(A::ring, P::simple).bandwidth_gbs == Approx(360.0 * 16 / 30));
  // Latency: base + 28 NVLink steps at max(hw, net overhead) + 2 network steps.
  CHECK(cell(A::ring, P::ll).latency_us == Approx(6.6 + 28 * 1.0 + 2 * 2.7));
  CHECK(cell(A::ring, P::ll128).latency_us == Approx(14.0 + 28 * 1.9 + 2 * 4.0));
  CHECK(cell(A::ring, P::simple).latency_us == Approx(8.4 + 28 * 3.4 + 2 * 14.0));
  // Tree: min(360 x 0.92, 8 x 41.4), then per protocol, x 0.5.
  CHECK(cell(A::tree, P::ll).bandwidth_gbs == Approx(39.0 * 0.5));
  CHECK(cell(A::tree, P::ll128).bandwidth_gbs == Approx(8 * 36.7 * 0.5).epsilon(1e-5));
  CHECK(cell(A::tree, P::simple).bandwidth_gbs == Approx(331.2 * 0.5).epsilon(1e-5));
  CHECK(cell(A::tree, P::ll).latency_us == Approx(6.8 + 2 * (7 * 0.6 + 5.0)));
  CHECK(cell(A::tree, P::simple).latency_us == Approx(8.4 + 2 * (7 * 4.0 + 14.0)));
  // NVLS Tree: min(40 x 0.85 x 7/8 x 2, 48 x 2, 57.7) per channel.
  CHECK(cell(A::nvls_tree, P::simple).bandwidth_gbs == Approx(8 * 57.7 * 16 / 30).epsilon(1e-5));
  CHECK(cell(A::nvls_tree, P::simple).latency_us == Approx(25.0 + 2 * 20.9).epsilon(1e-5));
  CHECK(cell(A::nvls_tree, P::ll).bandwidth_gbs == 0); // NVLS runs Simple only
  CHECK(cell(A::nvls, P::simple).bandwidth_gbs == 0);  // NVLS across nodes needs CollNet
  // The ring's Simple plateau on several nodes: latency x 1.4 once a channel's share is 64 B.
  CHECK(tuner.model_time_us(coll::Op::all_reduce, A::ring, P::simple, 1 << 20) ==
        Approx((8.4 + 28 * 3.4 + 28) * 1.4 + (1 << 20) / (1000 * 192.0)).epsilon(1e-5));
  // Tree correction for 1 MiB, LL128: treeCorrectionFactor[1][log2(16384) = 14] = 0.6.
  CHECK(tuner.model_time_us(coll::Op::all_reduce, A::tree, P::ll128, 1 << 20) ==
        Approx(48.5 + (1 << 20) / (1000 * 146.8 * 0.6)).epsilon(1e-5));
}

TEST_CASE("NCCL model: LL, then LL128, then Simple as the size grows on one NVLink node") {
  const NcclTuner tuner(describe_nccl(cluster("dgx-h100", 1), 8));
  std::vector<NcclProtocol> seen;
  for (std::uint64_t bytes = 1024; bytes <= (1ull << 30); bytes *= 2) {
    const NcclChoice c = tuner.choose(coll::Op::all_reduce, bytes, only_ring);
    CHECK(c.algorithm == NcclAlgorithm::ring);
    CHECK(c.generator == "nccl_ring");
    if (seen.empty() || seen.back() != c.protocol) seen.push_back(c.protocol);
  }
  CHECK(seen == std::vector{NcclProtocol::ll, NcclProtocol::ll128, NcclProtocol::simple});
  // Small calls launch fewer channels: 64 KiB of ring LL = 2 channels of 512 threads x 64 B.
  CHECK(tuner.choose(coll::Op::all_reduce, 64 << 10, only_ring).channels == 2);
  CHECK(tuner.choose(coll::Op::all_reduce, 1 << 30, only_ring).channels == 24);
  // With every algorithm, NVLS takes the large sizes on one H100 node.
  CHECK(tuner.choose(coll::Op::all_reduce, 1 << 30, every_algorithm).algorithm ==
        NcclAlgorithm::nvls);
}

TEST_CASE("NCCL model: across nodes Tree wins small and mid sizes and Ring the largest") {
  const NcclTuner tuner(describe_nccl(cluster("dgx-h100", 2), 16));
  auto pick = [&](std::uint64_t bytes) {
    return tuner
        .choose(coll::Op::all_reduce, bytes,
                [](NcclAlgorithm a, NcclProtocol) {
                  return a == NcclAlgorithm::ring || a == NcclAlgorithm::tree;
                })
        .algorithm;
  };
  CHECK(pick(4 << 10) == NcclAlgorithm::tree);
  CHECK(pick(1 << 20) == NcclAlgorithm::tree);
  CHECK(pick(1ull << 30) == NcclAlgorithm::ring);
  // NVLS Tree, where offered, takes the large sizes.
  CHECK(tuner.choose(coll::Op::all_reduce, 1ull << 30, every_algorithm).algorithm ==
        NcclAlgorithm::nvls_tree);
  // Without a registered generator an algorithm is never chosen by default.
  const NcclChoice c = tuner.choose(coll::Op::all_reduce, 1 << 20);
  CHECK(!c.generator.empty());
  CHECK(nccl_generator(coll::Op::all_reduce, c.algorithm) == c.generator);
}

TEST_CASE("NCCL model: forced algorithm, protocol and channels are honoured") {
  const NcclSystem s = describe_nccl(cluster("dgx-h100", 2), 16);
  NcclOverrides force;
  force.protocol = NcclProtocol::simple;
  force.channels = 4;
  const NcclTuner tuner(s, force);
  const NcclChoice c = tuner.choose(coll::Op::all_reduce, 1 << 30, only_ring);
  CHECK(c.protocol == NcclProtocol::simple);
  CHECK(c.channels == 4);
  CHECK(c.describe() == "ring/Simple, 4 channels");
  // A forced LL128 runs where the default rule would leave it off (PCIe inside the node).
  topo::ClusterSpec pcie = cluster("dgx-h100", 1);
  pcie.node_groups[0].spec.intra = topo::IntraNode::pcie_only;
  const NcclSystem p = describe_nccl(pcie, 8);
  CHECK_FALSE(p.ll128);
  CHECK(NcclTuner(p)
            .cost(coll::Op::all_reduce, NcclAlgorithm::ring, NcclProtocol::ll128)
            .bandwidth_gbs == 0);
  NcclOverrides ll128;
  ll128.protocol = NcclProtocol::ll128;
  CHECK(NcclTuner(p, ll128).choose(coll::Op::all_reduce, 1 << 20, only_ring).protocol ==
        NcclProtocol::ll128);
  // A forced algorithm with no generator is an error naming the key.
  NcclOverrides tree;
  tree.algorithm = NcclAlgorithm::collnet_direct;
  CHECK_THAT(error_of([&] { NcclTuner(s, tree).choose(coll::Op::all_reduce, 1 << 20); }),
             Catch::Contains("/workload/nccl") && Catch::Contains("collnet_direct"));
  CHECK_THAT(error_of([&] { parse_nccl_algorithm("rign", "/workload/nccl/algorithm"); }),
             Catch::Contains("/workload/nccl/algorithm") && Catch::Contains("ring"));
  CHECK(parse_nccl_algorithm("NVLSTree", "x") == NcclAlgorithm::nvls_tree);
  CHECK(parse_nccl_protocol("LL128", "x") == NcclProtocol::ll128);
  CHECK_THAT(error_of([&] { NcclTuner(s).choose(coll::Op::all_to_all, 1 << 20); }),
             Catch::Contains("/workload/op"));
}

TEST_CASE("NCCL model: protocol costs and per-call overhead come from tuning.cc") {
  const NcclSystem s = describe_nccl(cluster("dgx-h100", 2), 16);
  const coll::Protocol ll = nccl_protocol(s, NcclAlgorithm::ring, NcclProtocol::ll);
  CHECK(ll.name == "ll");
  CHECK(ll.payload_efficiency == 0.5);
  CHECK(ll.intra_hop_ps == 1'000'000); // max(NVLink 0.6 us, net overhead 1 us)
  CHECK(ll.inter_hop_ps == 2'700'000);
  CHECK(ll.reduce_in_flight);
  const coll::Protocol ll128 = nccl_protocol(s, NcclAlgorithm::tree, NcclProtocol::ll128);
  CHECK(ll128.payload_efficiency == 120.0 / 128.0);
  CHECK(ll128.intra_hop_ps == 1'250'000);
  CHECK(ll128.inter_hop_ps == 8'500'000);
  CHECK(nccl_protocol(s, NcclAlgorithm::ring, NcclProtocol::simple).payload_efficiency == 1.0);
  CHECK(nccl_call_overhead(NcclAlgorithm::ring, NcclProtocol::simple) == 8'400'000);
  // NVLS-Tree's switch steps run at nvlsEfficiency (0.85 Hopper, 0.74 Blackwell); Simple keeps
  // the payload of its network hops and of every other algorithm's steps.
  const coll::Protocol nvls_tree = nccl_protocol(s, NcclAlgorithm::nvls_tree, NcclProtocol::simple);
  CHECK(nvls_tree.payload_efficiency == 1.0);
  CHECK(nvls_tree.switch_efficiency == Approx(0.85));
  CHECK(nccl_protocol(s, NcclAlgorithm::ring, NcclProtocol::simple).switch_efficiency == 1.0);
  const NcclSystem b200 = describe_nccl(cluster("dgx-b200", 2), 16);
  CHECK(nccl_protocol(b200, NcclAlgorithm::nvls_tree, NcclProtocol::simple).switch_efficiency ==
        Approx(0.74));
  CHECK(nccl_call_overhead(NcclAlgorithm::tree, NcclProtocol::ll) == 6'800'000);
}

TEST_CASE("NCCL model: LL128's architecture rule by release") {
  CHECK_FALSE(nccl_ll128_architecture(204, 70));
  CHECK(nccl_ll128_architecture(205, 70));
  CHECK_FALSE(nccl_ll128_architecture(206, 80));
  CHECK(nccl_ll128_architecture(207, 80));
  CHECK_FALSE(nccl_ll128_architecture(217, 90));
  CHECK(nccl_ll128_architecture(218, 90));
  CHECK(nccl_ll128_architecture(230, 89));
  CHECK_FALSE(nccl_ll128_architecture(230, 61));
}

TEST_CASE("NCCL model: GPUs NCCL does not run on are rejected with the key") {
  topo::ClusterSpec spec = cluster("dgx-h100", 1);
  spec.node_groups[0].spec.gpu_model = "MI300X";
  CHECK_THAT(error_of([&] { describe_nccl(spec, 8); }),
             Catch::Contains("/topology/nodes/0/gpu_model"));
  CHECK_THAT(error_of([&] { describe_nccl(cluster("dgx-h100", 1), 9); }),
             Catch::Contains("/workload/ranks"));
}

TEST_CASE("NCCL model: GPUDirect-TCPXO's NCCL profile leaves Simple only and no NVLS") {
  // Google's nccl-env-profile.sh for TCPXO sets NCCL_PROTO=Simple and NCCL_NVLS_ENABLE=0.
  topo::ClusterSpec spec = cluster("dgx-h100", 2);
  spec.node_groups[0].spec.transport = topo::Transport::tcpxo;
  const NcclSystem system = describe_nccl(spec, 16);
  CHECK(system.simple_only);
  CHECK(system.nvls_channels == 0);
  const NcclTuner tuner(system);
  for (std::uint64_t bytes : {std::uint64_t{8}, std::uint64_t{1} << 20, std::uint64_t{1} << 30}) {
    const NcclChoice c = tuner.choose(coll::Op::all_reduce, bytes, every_algorithm);
    INFO("bytes " << bytes);
    CHECK(c.protocol == NcclProtocol::simple);
    CHECK(c.algorithm != NcclAlgorithm::nvls_tree);
  }
  // The same nodes over InfiniBand keep NCCL's defaults.
  const NcclTuner ib(describe_nccl(cluster("dgx-h100", 2), 16));
  CHECK(ib.choose(coll::Op::all_reduce, 8, every_algorithm).protocol != NcclProtocol::simple);
  CHECK(ib.choose(coll::Op::all_reduce, 1ull << 30, every_algorithm).algorithm ==
        NcclAlgorithm::nvls_tree);
  // A forced protocol is still honoured (NCCL_PROTO set by hand overrides the profile).
  NcclOverrides force;
  force.protocol = NcclProtocol::ll;
  CHECK(NcclTuner(system, force).choose(coll::Op::all_reduce, 8, every_algorithm).protocol ==
        NcclProtocol::ll);
}

TEST_CASE("NCCL model: NCCL_PROTO lists and exclusions as NCCL's parseList reads them") {
  const NcclSystem system = describe_nccl(cluster("dgx-h100", 2), 16);
  const std::vector<std::uint64_t> sizes{8, 64 << 10, 1 << 20, 16 << 20, 1ull << 30};
  auto protocols_chosen = [&](const NcclOverrides& force) {
    std::array<bool, kNcclProtocols> seen{};
    const NcclTuner tuner(system, force);
    for (std::uint64_t bytes : sizes)
      seen[static_cast<std::size_t>(tuner.choose(coll::Op::all_reduce, bytes).protocol)] = true;
    return seen;
  };
  const auto ll = static_cast<std::size_t>(NcclProtocol::ll);
  const auto ll128 = static_cast<std::size_t>(NcclProtocol::ll128);
  const auto simple = static_cast<std::size_t>(NcclProtocol::simple);
  REQUIRE(protocols_chosen({})[ll128]); // NCCL's default runs LL128 at some size here
  NcclOverrides no_ll128;
  parse_nccl_protocols("^LL128", "x", no_ll128);
  CHECK_FALSE(no_ll128.protocol);
  REQUIRE(no_ll128.protocols);
  const auto without = protocols_chosen(no_ll128);
  CHECK_FALSE(without[ll128]);
  CHECK(without[ll]);
  CHECK(without[simple]);
  NcclOverrides list;
  parse_nccl_protocols("ll,SIMPLE", "x", list);
  CHECK(*list.protocols == *no_ll128.protocols);
  // One name is a forced protocol, as before.
  NcclOverrides one;
  parse_nccl_protocols("LL128", "x", one);
  CHECK(one.protocol == NcclProtocol::ll128);
  CHECK_FALSE(one.protocols);
  // A list that leaves LL128 on turns it on where NCCL's default rule has it off.
  NcclSystem off = describe_nccl(cluster("dgx-h100", 1), 8);
  off.ll128 = false;
  NcclOverrides no_ll;
  parse_nccl_protocols("^LL", "x", no_ll);
  CHECK(NcclTuner(off, no_ll)
            .cost(coll::Op::all_reduce, NcclAlgorithm::ring, NcclProtocol::ll128)
            .bandwidth_gbs > 0);
  CHECK(NcclTuner(off)
            .cost(coll::Op::all_reduce, NcclAlgorithm::ring, NcclProtocol::ll128)
            .bandwidth_gbs == 0);
  NcclOverrides bad;
  CHECK_THROWS_WITH(parse_nccl_protocols("^LL,LL9", "/workload/nccl/protocol", bad),
                    Catch::Contains("/workload/nccl/protocol") && Catch::Contains("LL9"));
  CHECK_THROWS_WITH(parse_nccl_protocols("^LL,LL128,Simple", "/workload/nccl/protocol", bad),
                    Catch::Contains("no protocol on"));
}

TEST_CASE(
    "NCCL model: on EFA the plugin's NCCL profile sets 8 MiB buffers and 512 KiB NVLS chunks") {
  // aws-ofi-nccl (src/platform-aws.cpp) sets NCCL_BUFFSIZE=8388608 on EFA instances and, from
  // p5, NCCL_NVLS_CHUNKSIZE = NCCL_NVLSTREE_MAX_CHUNKSIZE = 524288: a Simple step of 1 MiB and
  // NVLS chunks of 512 KiB where NCCL's defaults are 512 KiB and 128 KiB.
  const NcclSystem efa = describe_nccl(cluster("aws-p5-48xlarge", 2), 16);
  const NcclSystem ib = describe_nccl(cluster("dgx-h100", 2), 16);
  CHECK(efa.simple_buffsize == (std::uint64_t{8} << 20));
  CHECK(efa.nvls_chunk == (std::uint64_t{512} << 10));
  CHECK(ib.simple_buffsize == (std::uint64_t{4} << 20));
  CHECK(ib.nvls_chunk == (std::uint64_t{128} << 10));
  NcclChoice nvls_tree;
  nvls_tree.algorithm = NcclAlgorithm::nvls_tree;
  nvls_tree.protocol = NcclProtocol::simple;
  nvls_tree.channels = 16;
  // 256 MiB: 16 MiB per channel, 2 MiB of it per local rank's shard: 16 chunks of 128 KiB, 4 of
  // 512 KiB.
  CHECK(nccl_pipeline_chunks(ib, nvls_tree, std::uint64_t{256} << 20) == 16);
  CHECK(nccl_pipeline_chunks(efa, nvls_tree, std::uint64_t{256} << 20) == 4);
  NcclChoice tree = nvls_tree;
  tree.algorithm = NcclAlgorithm::tree;
  // Tree/Simple, 64 MiB: 4 MiB per channel in 512 KiB steps (8) or 1 MiB steps (4).
  CHECK(nccl_pipeline_chunks(ib, tree, std::uint64_t{64} << 20) == 8);
  CHECK(nccl_pipeline_chunks(efa, tree, std::uint64_t{64} << 20) == 4);
}

TEST_CASE("NCCL model: Tree/LL128 halves its chunk for mid-size calls as enqueue.cc does") {
  // calcCollChunking (src/enqueue.cc, NCCL 2.30.7) on 2 nodes of 8 GPUs: nstepsLL128 = 1 +
  // log2(2) + 0.1 x 8 = 2.8, so the chunk halves from 576,000 bytes while a channel has fewer
  // than 2.8 x 64 / 8 = 22.4 chunks (not below 128 KiB), then fewer than 5.6 (not below 32 KiB),
  // and is rounded down to LL128 grains of 1,920 bytes.
  const NcclSystem s = describe_nccl(cluster("dgx-h100", 2), 16);
  NcclChoice tree;
  tree.algorithm = NcclAlgorithm::tree;
  tree.protocol = NcclProtocol::ll128;
  tree.channels = 16;
  auto chunks = [&](std::uint64_t bytes) { return nccl_pipeline_chunks(s, tree, bytes); };
  // 1 MiB: 64 KiB per channel in chunks of 576,000 / 32 = 18,000 -> 17,280 bytes: 4 chunks.
  CHECK(chunks(std::uint64_t{1} << 20) == 4);
  CHECK(chunks(std::uint64_t{512} << 10) == 2); // 32 KiB per channel
  CHECK(chunks(std::uint64_t{2} << 20) == 8);   // 128 KiB per channel, 17,280-byte chunks
  CHECK(chunks(std::uint64_t{4} << 20) == 8);   // 36,000 -> 34,560-byte chunks
  // 16 MiB: 144,000 is above 128 KiB, so the first loop halves once more to 72,000 (71,040).
  CHECK(chunks(std::uint64_t{16} << 20) == 15);
  // A call too small for one chunk per channel still runs one.
  CHECK(chunks(std::uint64_t{64} << 10) == 1);
  // Large calls keep the full 576,000-byte step: 256 MiB is 16 MiB per channel, 30 chunks.
  CHECK(chunks(std::uint64_t{256} << 20) == 30);
  // Only Tree/LL128 halves: Tree/Simple keeps its 512 KiB step (1 MiB: one chunk per channel).
  NcclChoice simple = tree;
  simple.protocol = NcclProtocol::simple;
  CHECK(nccl_pipeline_chunks(s, simple, std::uint64_t{1} << 20) == 1);
  // A deeper tree wants more chunks: on 4 nodes (nstepsLL128 = 3.8: 7.6 chunks at least) 4 MiB
  // halves down to 18,000 (17,280) bytes, 16 chunks per channel where 2 nodes run 8.
  const NcclSystem four = describe_nccl(cluster("dgx-h100", 4), 32);
  CHECK(nccl_pipeline_chunks(four, tree, std::uint64_t{4} << 20) == 16);
}
