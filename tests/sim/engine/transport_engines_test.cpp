// Transports in every engine: NCCL's socket transport caps a NIC at streams x the per-stream rate
// and bounces through host memory, and the analytic, flow and packet engines all charge it,
// because it lives in the topology they share.
#include "ddlsim/core/json_reader.hpp"
#include "ddlsim/sim/engine.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "ddlsim/topologies/spec_parser.hpp"
#include "ddlsim/topologies/transport.hpp"
#include "make_call.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace ddlsim;

namespace {

// Two nodes of one A10G and one 100 Gb/s NIC each (PCIe 4.0 x16 is faster than the NIC).
topo::Topology two_nodes(const std::string& transport) {
  const Json j = Json::parse(R"({"nodes": [{"count": 2, "gpus": 1, "gpu_model": "A10G",
      "intra": "pcie_only", "pcie_switches": 1, "pcie_bandwidth_gbps": 252, "nics": 1,
      "nic_bandwidth_gbps": 100, "transport": ")" +
                             transport + R"("}]})");
  return topo::build_topology(topo::parse_cluster_spec(JsonValue(j, "/topology")));
}

double seconds(const std::string& transport, const sim::EngineKind& engine, std::uint64_t bytes) {
  const topo::Topology topology = two_nodes(transport);
  topo::Router router(topology);
  sim::EngineSpec spec;
  spec.kind = engine;
  const coll::CollectiveCall call =
      test_support::make_call_bytes(coll::Op::all_reduce, "ring", 2, bytes);
  return static_cast<double>(
             sim::simulate(call, topology, router, spec, sim::CommonOptions{}).time) /
         kPsPerSecond;
}

} // namespace

TEST_CASE("transports: socket is slower than GPUDirect on the same hardware, in every engine, "
          "by the stream ceiling") {
  const std::uint64_t bytes = std::uint64_t{64} << 20;
  // Ring all-reduce on 2 ranks: each rank sends n/2 twice, so n bytes cross each NIC one way.
  // NCCL's default socket connection: 1 stream at kDefaultSocketStreamGbps, driven by the rank's
  // proxy thread, which copies both directions on one core (one GPU per NIC): half each way.
  const double ceiling =
      gbps_to_bytes_per_second(topo::kDefaultSocketStreamGbps) * topo::socket_proxy_share(0, 1, 1);
  const double bound = static_cast<double>(bytes) / ceiling;
  const std::vector<std::pair<const char*, sim::EngineKind>> engines{
      {"analytic", sim::AnalyticEngineSpec{}},
      {"flow", sim::flow::FlowEngineSpec{}},
      {"packet", sim::packet::PacketEngineSpec{}}};
  for (const auto& [name, engine] : engines) {
    INFO(name);
    const double socket = seconds("socket", engine, bytes);
    const double ib = seconds("ib", engine, bytes);
    CHECK(socket > 5.0 * ib); // 100 / 17 = 5.9 on the wire
    CHECK(socket >= bound);
    // The rest is latency, the reduction and each engine's own overheads: packet headers, and
    // the flow engine's LV08 TCP model (bandwidth x 0.97, and 5% of each flow's rate on the
    // reverse route, which the other rank's flow uses: docs/engines.md).
    const double tcp_model = std::string(name) == "flow" ? 1.05 / 0.97 : 1.0;
    CHECK(socket < 1.08 * tcp_model * bound);
  }
}

TEST_CASE("scale-up: an all-reduce on a 72-GPU NVLink domain never leaves NVLink") {
  // One GB200 NVL72 rack (18 trays): the NICs' rate must not matter, in any engine.
  auto rack_time = [](double nic_gbps, const sim::EngineKind& engine) {
    const Json j = Json::parse(R"({"nodes": [{"preset": "gb200-nvl72", "count": 18,
        "nic_bandwidth_gbps": )" +
                               std::to_string(nic_gbps) + "}]}");
    const topo::Topology topology =
        topo::build_topology(topo::parse_cluster_spec(JsonValue(j, "/topology")));
    topo::Router router(topology);
    sim::EngineSpec spec;
    spec.kind = engine;
    const coll::CollectiveCall call =
        test_support::make_call_bytes(coll::Op::all_reduce, "ring", 72, std::uint64_t{1} << 20);
    return sim::simulate(call, topology, router, spec, sim::CommonOptions{}).time;
  };
  CHECK(rack_time(400, sim::AnalyticEngineSpec{}) == rack_time(1, sim::AnalyticEngineSpec{}));
  CHECK(rack_time(400, sim::packet::PacketEngineSpec{}) ==
        rack_time(1, sim::packet::PacketEngineSpec{}));
}
