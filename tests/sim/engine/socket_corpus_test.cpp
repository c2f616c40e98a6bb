// The g5.2xlarge socket system of the nccl-tests corpus as NCCL ran it: NET/Socket with the 2
// threads x 8 sockets its log prints, each socket at EC2's 5 Gbps single-flow limit, on an "up to
// 10 Gbps" instance whose sustained rate once its burst credits are spent is a 5 Gbps baseline
// (docs/transports.md, "Up to" cloud instances). The streams together outrun the NIC, so the NIC
// caps a long all-reduce, at whichever rate the scenario gives it.
#include "ddlsim/core/json_reader.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/topologies/cluster_spec.hpp"
#include "ddlsim/topologies/transport.hpp"
#include "nccl_run.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

using namespace ddlsim;
using ddlsim::test_support::run_nccl;

namespace {

const std::filesystem::path kG5 =
    std::filesystem::path(DDLSIM_SCENARIO_DIR) / "corpus/aws-g5.2xlarge-2node-tcp-socket-a10g.json";

// The corpus scenario with `key` of its node group set to `value`.
Scenario g5_with(const std::string& key, double value) {
  std::ifstream in(kG5);
  Json json = Json::parse(in);
  json["topology"]["nodes"][0][key] = value;
  return load_scenario(json, kG5.string(), kG5.parent_path());
}

double seconds(const Scenario& scenario, std::uint64_t bytes) {
  return static_cast<double>(run_nccl(scenario, bytes).result.time) / kPsPerSecond;
}

} // namespace

TEST_CASE("socket: the g5.2xlarge corpus scenario runs NET/Socket with 16 streams over its NIC") {
  const Scenario scenario = load_scenario_file(kG5);
  const topo::NodeSpec& spec = scenario.topology.node_groups.at(0).spec;
  CHECK(spec.transport == topo::Transport::socket);
  // The log: "NET/Socket: Using 2 threads and 8 sockets per thread".
  CHECK(topo::socket_streams(spec.socket_nthreads, spec.socket_nsocks_perthread) == 16);
  // 16 streams x 5 Gbps (EC2's single-flow limit outside a placement group) = 80 Gbps, far above
  // the NIC, so the NIC's rate is what the link carries.
  CHECK(spec.socket_stream_bytes_per_second == Approx(gbps_to_bytes_per_second(5.0)));
  CHECK(topo::transport_nic_bytes_per_second(spec) == Approx(spec.nic_bytes_per_second));
  // With NCCL's default off AWS (no helper thread: one socket, the proxy's core both ways) the
  // one 5 Gbps flow would cap the NIC at half of it.
  CHECK(topo::transport_nic_bytes_per_second(
            g5_with("socket_nthreads", 0).topology.node_groups.at(0).spec) ==
        Approx(gbps_to_bytes_per_second(2.5)));
}

TEST_CASE("socket: the NIC caps a long 2-rank all-reduce: at the 5 Gbps baseline twice as long") {
  // Ring all-reduce on 2 ranks: each rank sends half the buffer twice, so the whole buffer
  // crosses each NIC one way, at no more than the NIC's rate.
  const std::uint64_t bytes = std::uint64_t{128} << 20;
  for (const double gbps : {10.0, 5.0}) {
    INFO(gbps << " Gbps");
    const double t = seconds(g5_with("nic_bandwidth_gbps", gbps), bytes);
    const double bound = static_cast<double>(bytes) / gbps_to_bytes_per_second(gbps);
    CHECK(t >= bound);
    CHECK(t <= 1.05 * bound); // the NIC is the bottleneck, nothing else
  }
  CHECK(seconds(g5_with("nic_bandwidth_gbps", 5.0), bytes) ==
        Approx(2 * seconds(load_scenario_file(kG5), bytes)).epsilon(0.05));
}
