// Traffic workloads through the engine layer: every engine runs the flows' Schedule and times
// each flow; incast shares one link, a permutation on one switch runs at link rate.
#include "../uniform_star.hpp"
#include "ddlsim/sim/engine.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace ddlsim;

namespace {

sim::EngineSpec spec_of(sim::EngineKind kind) {
  sim::EngineSpec spec;
  spec.kind = std::move(kind);
  return spec;
}

// Each engine where it is α-β on these links: the flow engine's CM02 without acks and with a
// window that never caps (LV08 adds its latency and bandwidth factors, docs/engines.md), the
// packet engine with buffers that hold a whole incast (no loss and retransmission).
sim::flow::FlowEngineSpec alpha_beta_flow() {
  sim::flow::FlowEngineSpec flow;
  flow.network_model = sim::flow::NetworkModel::cm02;
  flow.crosstraffic = false;
  flow.tcp_gamma_bytes = 1e12;
  return flow;
}
sim::packet::PacketEngineSpec lossless_packet() {
  sim::packet::PacketEngineSpec packet;
  packet.switch_spec.buffer_bytes = 64 << 20;
  return packet;
}
const std::vector<sim::EngineKind> kEveryEngine = {sim::AnalyticEngineSpec{}, alpha_beta_flow(),
                                                   lossless_packet()};

sim::EngineResult run(const std::vector<coll::Flow>& flows, int ranks,
                      const sim::EngineSpec& spec) {
  const topo::Topology topology = sim::test::star(ranks);
  topo::Router router(topology);
  return sim::simulate(sim::Traffic{flows, ranks, coll::DataType::fp32}, topology, router, spec,
                       {});
}

} // namespace

TEST_CASE("every engine times every flow of a traffic workload") {
  const std::vector<coll::Flow> flows = {{0, 1, 1 << 20}, {2, 3, 1 << 18}, {1, 0, 1 << 16}};
  for (const sim::EngineKind& kind : kEveryEngine) {
    const sim::EngineSpec spec = spec_of(kind);
    INFO(sim::engine_name(spec) << " engine");
    const sim::EngineResult result = run(flows, 4, spec);
    REQUIRE(result.complete);
    REQUIRE(result.flow_times.size() == flows.size());
    CHECK(result.algorithm == "traffic");
    CHECK(result.bytes_sent == (1u << 20) + (1u << 18) + (1u << 16));
    // Smaller flows on links of their own end first; the workload ends with its last flow.
    CHECK(result.flow_times[2] < result.flow_times[1]);
    CHECK(result.flow_times[1] < result.flow_times[0]);
    CHECK(result.time == *std::max_element(result.flow_times.begin(), result.flow_times.end()));
    // No flow beats its bytes over the link rate.
    for (std::size_t f = 0; f < flows.size(); ++f)
      CHECK(static_cast<double>(result.flow_times[f]) >=
            static_cast<double>(flows[f].bytes) * sim::test::kBeta);
  }
}

TEST_CASE("incast time grows with the senders: N flows share the receiver's link") {
  const std::uint64_t bytes = 1 << 20;
  for (const sim::EngineKind& kind : kEveryEngine) {
    const sim::EngineSpec spec = spec_of(kind);
    INFO(sim::engine_name(spec) << " engine");
    Picoseconds previous = 0;
    for (int senders : {1, 2, 4, 8}) {
      INFO(senders << " senders");
      const sim::EngineResult result = run(coll::incast_flows(9, senders, 8, bytes), 9, spec);
      REQUIRE(result.complete);
      CHECK(result.time > previous);
      // N x one flow's bytes through one link, within the engine's per-packet and latency terms.
      const double serial =
          static_cast<double>(senders) * static_cast<double>(bytes) * sim::test::kBeta;
      CHECK(static_cast<double>(result.time) >= serial);
      CHECK(static_cast<double>(result.time) <= 1.1 * serial + 10 * sim::test::kAlpha);
      previous = result.time;
    }
  }
  // The analytic engine shares the link fairly: N flows end together at N x one flow's transfer.
  const sim::EngineResult one =
      run(coll::incast_flows(9, 1, 8, bytes), 9, spec_of(sim::AnalyticEngineSpec{}));
  const sim::EngineResult eight =
      run(coll::incast_flows(9, 8, 8, bytes), 9, spec_of(sim::AnalyticEngineSpec{}));
  const double transfer = static_cast<double>(bytes) * sim::test::kBeta;
  CHECK(static_cast<double>(one.time) == Approx(transfer + sim::test::kAlpha).epsilon(1e-9));
  CHECK(static_cast<double>(eight.time) == Approx(8 * transfer + sim::test::kAlpha).epsilon(1e-9));
}

TEST_CASE("a permutation on one switch runs every flow at link rate on every engine") {
  const std::uint64_t bytes = 1 << 20;
  const double ideal = static_cast<double>(bytes) * sim::test::kBeta;
  for (const sim::EngineKind& kind : kEveryEngine) {
    const sim::EngineSpec spec = spec_of(kind);
    INFO(sim::engine_name(spec) << " engine");
    const sim::EngineResult result = run(coll::permutation_flows(16, bytes, 5), 16, spec);
    REQUIRE(result.complete);
    for (const Picoseconds t : result.flow_times) {
      CHECK(static_cast<double>(t) >= ideal);
      CHECK(static_cast<double>(t) <= 1.05 * ideal + 2 * sim::test::kAlpha);
    }
  }
}
