// One node as NCCL runs it: rings over a hybrid cube-mesh's NVLinks only (search.cc), NVLS's
// efficiency and its once-per-call latency (tuning.cc), and NCCL's small-size ring latency.
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/models/nccl_model.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/sim/engine.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "ddlsim/topologies/presets.hpp"
#include "ddlsim/topologies/router.hpp"
#include "error_of.hpp"
#include "nccl_run.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <utility>

using namespace ddlsim;
using Catch::Matchers::Contains;
using Run = ddlsim::test_support::NcclRun;
using ddlsim::test_support::run_nccl;

namespace {

topo::Topology one_node(const char* preset) {
  topo::ClusterSpec spec;
  spec.node_groups.push_back({*topo::find_node_preset(preset), 1});
  return topo::build_topology(spec);
}

Scenario scenario_of(const char* preset) {
  return load_scenario(Json::parse(std::string(R"({"topology": {"nodes": [{"preset": ")") + preset +
                                   R"(", "count": 1}]},
    "workload": {"type": "collective", "op": "all_reduce", "algorithm": "nccl",
                 "sizes": ["8B"]}})"),
                       "s.json", ".");
}

} // namespace

TEST_CASE("nccl one node: cube-mesh rings go over direct NVLinks and load them evenly") {
  const topo::Topology topology = one_node("dgx1-v100");
  const std::vector<std::vector<int>> rings = models::nccl_node_rings(topology);
  // 6 NVLinks per V100 (DGX-1V whitepaper): six rings of one NVLink each, as NCCL finds.
  REQUIRE(rings.size() == 6);
  const topo::Node& node = topology.nodes().front();
  std::map<std::pair<int, int>, double> load; // rings per directed GPU pair, per link capacity
  for (const auto& ring : rings) {
    REQUIRE(ring.size() == 8);
    for (std::size_t i = 0; i < ring.size(); ++i) {
      const int a = ring[i], b = ring[(i + 1) % ring.size()];
      double capacity = 0;
      for (topo::LinkId id : topology.out_links(node.gpus[std::size_t(a)]))
        if (topology.link(id).dst == node.gpus[std::size_t(b)]) {
          CHECK(topology.link(id).link_class == topo::LinkClass::nvlink);
          capacity += topology.link(id).bandwidth_bytes_per_second;
        }
      INFO("ring hop " << a << " -> " << b);
      REQUIRE(capacity > 0); // a direct NVLink
      load[{a, b}] += 1 / capacity;
    }
  }
  // Every used direction carries the same rings per byte/s of link: doubled NVLinks two rings,
  // single ones one.
  const double first = load.begin()->second;
  for (const auto& [pair, l] : load) CHECK(l == Approx(first));
  // NVSwitch and PCIe nodes have no direct GPU links: the local ranks in order.
  CHECK(models::nccl_node_rings(one_node("dgx-h100")).empty());
  CHECK(models::nccl_node_rings(one_node("pcie-8gpu-10g")).empty());
}

TEST_CASE("nccl one node: nccl_ring's sends on a cube-mesh each cross one NVLink") {
  const topo::Topology topology = one_node("dgx1-v100");
  topo::Router router(topology);
  for (int channels : {1, 2, 6, 12}) {
    coll::CollectiveCall call;
    call.op = coll::Op::all_reduce;
    call.ranks = 8;
    call.bytes = 1 << 16;
    call.algorithm = "nccl_ring";
    call.params.channels = channels;
    call.node_of_rank.assign(8, 0);
    call.node_rings = models::nccl_node_rings(topology);
    const coll::Schedule schedule = coll::Schedule::make(call);
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < channels; ++c) {
        coll::StepStream stream = schedule.program(r, c);
        while (const coll::Step* step = stream.next()) {
          if (step->kind != coll::StepKind::send) continue;
          const topo::Path& path = router.ecmp_path(1, r, step->peer, std::uint16_t(c));
          INFO(channels << " channels, rank " << r << " -> " << step->peer);
          REQUIRE(path.size() == 1);
          CHECK(topology.link(path.front()).link_class == topo::LinkClass::nvlink);
        }
      }
  }
}

TEST_CASE("nccl one node: a cube-mesh all-reduce runs at its NVLinks' rate, not PCIe's") {
  const Scenario scenario = scenario_of("dgx1-v100");
  const std::uint64_t bytes = std::uint64_t{128} << 20;
  const Run r = run_nccl(scenario, bytes);
  REQUIRE(r.choice.algorithm == models::NcclAlgorithm::ring);
  // busbw = 2(p-1)/p · n / t; six NVLinks of 25 GB/s per GPU give at most 150 GB/s, one PCIe
  // 3.0 link (15.75 GB/s) far less.
  const double seconds = static_cast<double>(r.result.time) * 1e-12;
  const double busbw = 2.0 * 7 / 8 * static_cast<double>(bytes) / seconds;
  CHECK(busbw > 60e9);
  CHECK(busbw <= 150e9);
}

TEST_CASE("nccl one node: a small ring all-reduce costs NCCL's base plus 2(p-1) hops") {
  // NCCL's model for one node (tuning.cc): baseLatency + 2(p-1)·hwLatency, the hop covering the
  // link. On a DGX H100 the path (2 x 300 ns) equals NCCL's NVLink LL hop (0.6 us), so a tiny
  // all-reduce takes what NCCL's own model says: 6.6 + 14 x 0.6 = 15 us.
  const Run r = run_nccl(scenario_of("dgx-h100"), 8);
  REQUIRE(r.choice.algorithm == models::NcclAlgorithm::ring);
  REQUIRE(r.choice.protocol == models::NcclProtocol::ll);
  CHECK(static_cast<double>(r.result.time) == Approx(15e6).epsilon(0.01));
  CHECK(r.choice.model_seconds == Approx(15e-6).epsilon(0.01));
}

TEST_CASE("nccl one node: NVLS moves fewer payload bytes per NVLink byte and pays 25 us once") {
  const Scenario scenario = scenario_of("dgx-h100");
  const models::NcclSystem& system = *scenario.workload.collective.nccl_system;
  const coll::Protocol nvls =
      models::nccl_protocol(system, models::NcclAlgorithm::nvls, models::NcclProtocol::simple);
  CHECK(nvls.payload_efficiency == 1.0);         // Simple: no flags
  CHECK(nvls.switch_efficiency == Approx(0.85)); // tuning.cc nvlsEfficiency, Hopper
  CHECK(models::nccl_call_overhead(models::NcclAlgorithm::nvls, models::NcclProtocol::simple) ==
        25'000'000);
  // Direction: at a large size the NVLS call is slower than its bytes at the full link rate, by
  // about the efficiency (the fixed 25 us is small there).
  const std::uint64_t bytes = std::uint64_t{1} << 30;
  const Run r = run_nccl(scenario, bytes);
  REQUIRE(r.choice.algorithm == models::NcclAlgorithm::nvls);
  coll::CollectiveCall call =
      make_collective_call(scenario.workload.collective, scenario.topology, bytes);
  call.algorithm = "nvls";
  call.params.channels = r.choice.channels;
  call.params.chunks = models::nccl_pipeline_chunks(system, r.choice, bytes);
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  const sim::EngineResult plain = sim::simulate(call, topology, router, scenario.engine, {});
  const double ratio =
      static_cast<double>(r.result.time - 25'000'000) / static_cast<double>(plain.time);
  CHECK(ratio == Approx(1 / 0.85).epsilon(0.02));
}

TEST_CASE("nccl one node: node_rings that are not permutations of the local ranks are rejected") {
  coll::CollectiveCall call;
  call.op = coll::Op::all_reduce;
  call.ranks = 4;
  call.bytes = 1024;
  call.algorithm = "nccl_ring";
  call.node_rings = {{0, 2, 1, 3}};
  CHECK_NOTHROW(coll::check_call(call));
  call.node_rings = {{0, 2, 2, 3}};
  CHECK_THAT(test_support::error_of([&] { coll::check_call(call); }),
             Contains("node_rings") && Contains("once each"));
  call.node_rings = {{0, 1, 2, 3}, {0, 1}};
  CHECK_THAT(test_support::error_of([&] { coll::check_call(call); }),
             Contains("node_rings") && Contains("same size"));
}
