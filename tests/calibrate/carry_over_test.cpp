// What of a calibration carries to another kind of system (calibrate/carry_over.hpp): each
// fitted part applies only where the component it measured is of the same kind, and the warning
// says which parts were left out.
#include "ddlsim/calibrate/calibration.hpp"
#include "ddlsim/calibrate/carry_over.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::calib;

namespace {

topo::NodeSpec node(const char* gpu, int gpus, topo::IntraNode intra, topo::Transport transport) {
  topo::NodeSpec n;
  n.gpu_model = gpu;
  n.gpus = gpus;
  n.nics = gpus;
  n.intra = intra;
  n.transport = transport;
  n.nvlink_bytes_per_second = 450e9;
  n.pcie_bytes_per_second = 64e9;
  n.nic_bytes_per_second = 50e9;
  return n;
}

// Fitted on 2 nodes of `from`: network 0.8, NVLink 0.5, PCIe 0.9; overheads and a slow LL.
Calibration fitted(const topo::NodeSpec& from) {
  Calibration c;
  c.link(LinkGroup::network) = {true, 40 * kPsPerUs, 10e9, 0.8};
  c.link(LinkGroup::nvlink) = {true, 700 * kPsPerNs, 200e9, 0.5};
  c.link(LinkGroup::pcie) = {true, 300 * kPsPerNs, 20e9, 0.9};
  c.launch_overhead = 5 * kPsPerUs;
  c.reduce_bytes_per_second = 500e9;
  c.protocols = {{"simple", 1.0, 80 * kPsPerUs}, {"ll", 0.25, 400 * kPsPerNs}};
  c.fitted_on = fitted_on(from, 2);
  return c;
}

topo::ClusterSpec cluster_of(const topo::NodeSpec& n, int count) {
  topo::ClusterSpec spec;
  spec.node_groups.push_back({n, count});
  return spec;
}

constexpr auto kIb = topo::Transport::ib;
constexpr auto kEfa = topo::Transport::efa;
constexpr auto kSocket = topo::Transport::socket;
constexpr auto kNvswitch = topo::IntraNode::nvswitch;
constexpr auto kPcie = topo::IntraNode::pcie_only;

} // namespace

TEST_CASE("carry over: the same kind of system takes every part of a calibration") {
  const topo::NodeSpec h100 = node("H100-SXM5-80GB", 8, kNvswitch, kIb);
  const CarriedParts parts = carried_parts(fitted_on(h100, 2), fitted_on(h100, 16));
  CHECK(parts.all());
  CHECK(parts_left_out(parts).empty());
}

TEST_CASE("carry over: another transport keeps its own network, PCIe and step costs") {
  const topo::NodeSpec ib = node("H100-SXM5-80GB", 8, kNvswitch, kIb);
  const topo::NodeSpec efa = node("H100-SXM5-80GB", 8, kNvswitch, kEfa);
  const CarriedParts parts = carried_parts(fitted_on(ib, 2), fitted_on(efa, 2));
  CHECK_FALSE(parts.network);
  CHECK_FALSE(parts.pcie);
  CHECK_FALSE(parts.steps);
  CHECK(parts.nvlink); // the same NVSwitch board of the same GPU
  CHECK(parts.reduce);

  // Applied: NVLink scaled by the fitted efficiency, the NIC at its own nominal rate and
  // latency, no per-step or launch overhead, no protocol factor; the reduction rate (the GPU's)
  // carries.
  const Calibration c = fitted(ib);
  topo::ClusterSpec spec = cluster_of(efa, 2);
  const topo::NodeSpec before = spec.node_groups[0].spec;
  const EngineCalibration engine = apply_calibration(c, spec, 1); // LL: factor 0.25
  const topo::NodeSpec& after = spec.node_groups[0].spec;
  CHECK(after.nic_bytes_per_second == before.nic_bytes_per_second);
  CHECK(after.nic_latency == before.nic_latency);
  CHECK(after.pcie_bytes_per_second == before.pcie_bytes_per_second);
  CHECK(after.nvlink_bytes_per_second == Approx(0.5 * 450e9)); // no LL factor either
  CHECK(engine.per_step_overhead == 0);
  CHECK(engine.launch_overhead == 0);
  CHECK(engine.reduce_bytes_per_second == 500e9);

  // On the system it was fitted on, every part applies (the LL factor included).
  topo::ClusterSpec home = cluster_of(ib, 2);
  const EngineCalibration at_home = apply_calibration(c, home, 1);
  CHECK(home.node_groups[0].spec.nic_bytes_per_second == Approx(0.8 * 50e9 * 0.25));
  CHECK(home.node_groups[0].spec.nic_latency == 40 * kPsPerUs);
  CHECK(at_home.per_step_overhead == 400 * kPsPerNs);
  CHECK(at_home.launch_overhead == 5 * kPsPerUs);
}

TEST_CASE("carry over: a socket cluster of one-GPU PCIe hosts lends an NVSwitch RDMA cluster "
          "nothing") {
  const topo::NodeSpec g5 = node("A10G", 1, kPcie, kSocket);
  const topo::NodeSpec a100 = node("A100-SXM4-80GB", 8, kNvswitch, kIb);
  const CarriedParts parts = carried_parts(fitted_on(g5, 2), fitted_on(a100, 2));
  CHECK_FALSE(parts.network);
  CHECK_FALSE(parts.nvlink);
  CHECK_FALSE(parts.pcie);
  CHECK_FALSE(parts.steps);
  CHECK_FALSE(parts.reduce); // another GPU model, another memory rate
  const std::vector<std::string> lines = calibration_differences(fitted(g5), cluster_of(a100, 2));
  REQUIRE(lines.size() == 1);
  CHECK_THAT(lines[0], Catch::Contains("transport socket fitted, ib here") &&
                           Catch::Contains("not applied here") &&
                           Catch::Contains("the network class (NIC efficiency and latency)") &&
                           Catch::Contains("the per-step, launch and protocol overheads") &&
                           Catch::Contains("the reduction rate"));
}

TEST_CASE("carry over: another GPU generation keeps its own NVLink and overheads") {
  const topo::NodeSpec v100 = node("V100-SXM2-16GB", 8, kNvswitch, kIb);
  const topo::NodeSpec h100 = node("H100-SXM5-80GB", 8, kNvswitch, kIb);
  const CarriedParts parts = carried_parts(fitted_on(v100, 2), fitted_on(h100, 2));
  CHECK(parts.network); // the same InfiniBand transport
  CHECK_FALSE(parts.nvlink);
  CHECK_FALSE(parts.steps);
  CHECK_FALSE(parts.pcie);
}

TEST_CASE("carry over: a one-node fit or a one-node target does not hold the transport against "
          "it") {
  const topo::NodeSpec ib = node("H100-SXM5-80GB", 8, kNvswitch, kIb);
  const topo::NodeSpec efa = node("H100-SXM5-80GB", 8, kNvswitch, kEfa);
  CHECK(carried_parts(fitted_on(ib, 1), fitted_on(efa, 2)).all());
  CHECK(carried_parts(fitted_on(ib, 2), fitted_on(efa, 1)).all());
  // A calibration that records no system (older files) applies whole.
  Calibration c = fitted(ib);
  c.fitted_on.reset();
  topo::ClusterSpec spec = cluster_of(efa, 2);
  apply_calibration(c, spec, 0);
  CHECK(spec.node_groups[0].spec.nic_bytes_per_second == Approx(0.8 * 50e9));
}
