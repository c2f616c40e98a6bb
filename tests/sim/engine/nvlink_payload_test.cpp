// The payload rate of an NVLink, which every engine charges: its generation's, NCCL's per-link
// figure, not the datasheet's signalling rate (models/nvlink.hpp).
#include "ddlsim/models/nccl_model.hpp"
#include "ddlsim/models/nvlink.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/sim/engine.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "error_of.hpp"
#include "nccl_run.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace ddlsim;
using Catch::Matchers::Contains;
using ddlsim::test_support::nccl_scenario;
using ddlsim::test_support::run_nccl;

namespace {

// The NVLink links of a built topology: every one runs at `rate`.
void check_nvlinks(const topo::Topology& topology, double rate) {
  int count = 0;
  for (const topo::Link& link : topology.links())
    if (link.link_class == topo::LinkClass::nvlink) {
      CHECK(link.bandwidth_bytes_per_second == Approx(rate));
      ++count;
    }
  CHECK(count > 0);
}

double seconds(const sim::EngineResult& r) {
  return static_cast<double>(r.time) / kPsPerSecond;
}

} // namespace

TEST_CASE("nvlink payload: each generation carries NCCL's per-link figure of its signalling rate") {
  // src/graph/topo.h (NCCL 2.30.7): SM60/70/80/86/90/100_NVLINK_BW against the datasheets.
  CHECK(models::nvlink_payload_efficiency(60) == Approx(18.0 / 20.0));
  CHECK(models::nvlink_payload_efficiency(70) == Approx(20.0 / 25.0));
  CHECK(models::nvlink_payload_efficiency(80) == Approx(20.0 / 25.0));
  CHECK(models::nvlink_payload_efficiency(86) == Approx(12.0 / 14.0625));
  CHECK(models::nvlink_payload_efficiency(90) == Approx(20.6 / 25.0));
  CHECK(models::nvlink_payload_efficiency(100) == Approx(40.1 / 50.0));
  CHECK(models::nvlink_payload_efficiency(0) == 1.0); // not a CUDA GPU: the datasheet rate
  CHECK(models::nvlink_payload_bytes_per_link(90) == Approx(20.6e9));
}

TEST_CASE("nvlink payload: a scenario keeps the datasheet rate and its links run at the payload "
          "rate") {
  const Scenario h100 = nccl_scenario(R"({"nodes": [{"preset": "dgx-h100"}]})");
  const topo::NodeSpec& spec = h100.topology.node_groups.front().spec;
  CHECK(spec.nvlink_bytes_per_second == Approx(450e9)); // 18 links x 25 GB/s, as written
  CHECK(spec.nvlink_payload_efficiency == Approx(20.6 / 25));
  check_nvlinks(topo::build_topology(h100.topology), 18 * 20.6e9);
  // NCCL still counts 18 links of 20.6 GB/s: the description is the datasheet's.
  CHECK(h100.workload.collective.nccl_system->nvlinks_per_gpu == 18);
  CHECK(h100.workload.collective.nccl_system->nvlink_gbs == Approx(18 * 20.6));
  // The V100 cube-mesh: each pair's links at 20 of 25 GB/s.
  const Scenario v100 = nccl_scenario(R"({"nodes": [{"preset": "dgx1-v100"}]})");
  const topo::Topology mesh = topo::build_topology(v100.topology);
  for (const topo::Link& link : mesh.links())
    if (link.link_class == topo::LinkClass::nvlink) {
      const double links = link.bandwidth_bytes_per_second / 20e9;
      CHECK(links == Approx(std::round(links))); // 1 or 2 links of 20 GB/s
    }
  // A GPU ddlsim does not know as an NVIDIA part keeps the datasheet rate.
  const Json amd = Json::parse(R"({"topology": {"nodes": [{"gpus": 2, "gpu_model": "MI300X",
      "intra": "nvswitch", "nvlink_bandwidth_gbps": 1000, "pcie_bandwidth_gbps": 504, "nics": 0}]},
      "workload": {"type": "collective", "op": "all_reduce", "algorithm": "ring",
                   "sizes": ["1MiB"]}})");
  const Scenario custom = load_scenario(amd, "s.json", ".");
  check_nvlinks(topo::build_topology(custom.topology), 125e9);
}

TEST_CASE("nvlink payload: a one-node NVLink ring's large-size bus bandwidth is links x the "
          "payload rate") {
  // 8 H100 on NVSwitch, ring/Simple: busbw = 2(n-1)/n x bytes / time = each GPU's NVLink rate,
  // 18 x 20.6 = 370.8 GB/s (NCCL's maintainer: "NCCL can get an effective NVLink bandwidth of
  // 370GB/s", NVIDIA/nccl-tests#212), no longer the datasheet's 450.
  const Scenario s = nccl_scenario(R"({"nodes": [{"preset": "dgx-h100"}]})",
                                   R"({"algorithm": "ring", "protocol": "simple"})");
  const std::uint64_t bytes = std::uint64_t{4} << 30;
  const double busbw =
      2.0 * 7 / 8 * static_cast<double>(bytes) / seconds(run_nccl(s, bytes).result);
  CHECK(busbw == Approx(18 * 20.6e9).epsilon(0.01));
  // A100 (NVLink 3): 12 x 20 = 240 GB/s.
  const Scenario a100 = nccl_scenario(R"({"nodes": [{"preset": "dgx-a100"}]})",
                                      R"({"algorithm": "ring", "protocol": "simple"})");
  const double a100_busbw =
      2.0 * 7 / 8 * static_cast<double>(bytes) / seconds(run_nccl(a100, bytes).result);
  CHECK(a100_busbw == Approx(12 * 20e9).epsilon(0.01));
}

TEST_CASE(
    "nvlink payload: an efficiency above 1 or not positive is refused and the error names it") {
  topo::ClusterSpec spec = nccl_scenario(R"({"nodes": [{"preset": "dgx-h100"}]})").topology;
  spec.node_groups.front().spec.nvlink_payload_efficiency = 1.5;
  CHECK_THAT(test_support::error_of([&] { (void)topo::build_topology(spec); }),
             Contains("payload efficiency") && Contains("(0, 1]"));
}
