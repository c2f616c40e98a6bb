// Calibration files: JSON round trip, strict reading, applying to a cluster spec, a scenario
// referencing one, validation summaries and the cross-validation flag, and report reading.
#include "ddlsim/calibrate/calibration.hpp"
#include "ddlsim/calibrate/real_report.hpp"
#include "ddlsim/calibrate/validation.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/topologies/presets.hpp"
#include "error_of.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace ddlsim;
using namespace ddlsim::calib;

namespace {

using ddlsim::test_support::error_of;

Calibration sample() {
  Calibration c;
  c.link(LinkGroup::network) = {true, 5 * kPsPerUs, 10e9, 0.8};
  c.link(LinkGroup::nvlink) = {true, 700 * kPsPerNs, 200e9, 0.5};
  c.launch_overhead = 3 * kPsPerUs;
  c.reduce_bytes_per_second = 500e9;
  c.protocols = {{"simple", 1.0, 2 * kPsPerUs}, {"ll", 0.25, 400 * kPsPerNs}};
  c.source = {{"note", "test"}};
  return c;
}

} // namespace

TEST_CASE("a calibration survives its JSON round trip") {
  const Calibration c = calibration_from_json(to_json(sample()), "c.json");
  CHECK(c.link(LinkGroup::network).set);
  CHECK_FALSE(c.link(LinkGroup::pcie).set);
  CHECK(c.link(LinkGroup::network).latency == 5 * kPsPerUs);
  CHECK(c.link(LinkGroup::network).bytes_per_second == Approx(10e9));
  CHECK(c.link(LinkGroup::nvlink).efficiency == Approx(0.5));
  CHECK(c.launch_overhead == 3 * kPsPerUs);
  CHECK(c.reduce_bytes_per_second == Approx(500e9));
  REQUIRE(c.protocols.size() == 2);
  CHECK(c.protocols[1].name == "ll");
  CHECK(c.protocols[1].bandwidth_factor == Approx(0.25));
  CHECK(c.protocols[1].per_step_overhead == 400 * kPsPerNs);
  CHECK(c.source["note"] == "test");
}

TEST_CASE("calibration files are read strictly") {
  Json j = to_json(sample());
  j["links"]["network"]["latncy_ns"] = 1;
  CHECK_THAT(error_of([&] { calibration_from_json(j, "c.json"); }),
             Catch::Contains("c.json: /links/network/latncy_ns") && Catch::Contains("latency_ns"));
  Json k = to_json(sample());
  k["format"] = "something";
  CHECK_THAT(error_of([&] { calibration_from_json(k, "c.json"); }),
             Catch::Contains("/format") && Catch::Contains("ddlsim-calibration-1"));
  Json m = to_json(sample());
  m["links"]["pcie"] = {{"latency_ns", 1}};
  CHECK_THAT(error_of([&] { calibration_from_json(m, "c.json"); }),
             Catch::Contains("/links/pcie") && Catch::Contains("efficiency"));
}

TEST_CASE("applying a calibration sets the calibrated classes and leaves the others") {
  topo::ClusterSpec spec;
  topo::NodeSpec node;
  node.gpus = 8;
  node.intra = topo::IntraNode::nvswitch;
  node.nvlink_bytes_per_second = 300e9;
  node.pcie_bytes_per_second = 25e9;
  node.nic_bytes_per_second = 25e9;
  spec.node_groups.push_back({node, 2});
  spec.fabric.link_bytes_per_second = 50e9;
  const topo::ClusterSpec nominal = spec;
  const EngineCalibration engine = apply_calibration(sample(), spec, 1);
  const topo::NodeSpec& out = spec.node_groups[0].spec;
  // This node's nominal rate x the efficiency (0.8) x the ll protocol's factor.
  CHECK(out.nic_bytes_per_second == Approx(25e9 * 0.8 * 0.25));
  CHECK(out.nic_latency == 5 * kPsPerUs);
  CHECK(out.nvlink_bytes_per_second == Approx(300e9 * 0.5 * 0.25));
  CHECK(out.pcie_bytes_per_second == 25e9);      // not calibrated
  CHECK(spec.fabric.link_bytes_per_second == 0); // single switch: the port follows the NIC
  CHECK(engine.per_step_overhead == 400 * kPsPerNs);
  CHECK(engine.launch_overhead == 3 * kPsPerUs);
  topo::ClusterSpec plain = nominal;
  apply_calibration(sample(), plain, 0);
  CHECK(plain.node_groups[0].spec.nic_bytes_per_second == Approx(25e9 * 0.8));
}

TEST_CASE("a calibration fitted on system X scales system Y's nominal rates, not X's") {
  // Fitted on a node with 100 GB/s NVLink and 12.5 GB/s NICs; applied to one with 450 GB/s
  // NVLink and 50 GB/s NICs.
  Calibration c = sample(); // network efficiency 0.8, NVLink 0.5
  topo::ClusterSpec y;
  topo::NodeSpec node;
  node.gpus = 8;
  node.intra = topo::IntraNode::nvswitch;
  node.nvlink_bytes_per_second = 450e9;
  node.pcie_bytes_per_second = 64e9;
  node.nic_bytes_per_second = 50e9;
  y.node_groups.push_back({node, 2});
  apply_calibration(c, y, 0);
  CHECK(y.node_groups[0].spec.nic_bytes_per_second == Approx(0.8 * 50e9));
  CHECK(y.node_groups[0].spec.nvlink_bytes_per_second == Approx(0.5 * 450e9));
  // Doubling Y's nominal NIC rate doubles the calibrated one (a response, not a replacement).
  topo::ClusterSpec faster = y;
  faster.node_groups[0].spec = node;
  faster.node_groups[0].spec.nic_bytes_per_second = 100e9;
  apply_calibration(c, faster, 0);
  CHECK(faster.node_groups[0].spec.nic_bytes_per_second == Approx(0.8 * 100e9));

  // A format-1 file (absolute rates) is still read, and applies its rates as before.
  Json old = to_json(c);
  old["format"] = "ddlsim-calibration-1";
  for (auto& [group, link] : old["links"].items()) {
    link["bandwidth_gbps"] = link["fitted_bandwidth_gbps"];
    link.erase("fitted_bandwidth_gbps");
  }
  old.erase("fitted_on");
  const Calibration absolute = calibration_from_json(old, "old.json");
  CHECK_FALSE(absolute.relative);
  topo::ClusterSpec z = y;
  z.node_groups[0].spec = node;
  apply_calibration(absolute, z, 0);
  CHECK(z.node_groups[0].spec.nic_bytes_per_second == Approx(10e9)); // the fitted rate itself
  CHECK(to_json(absolute)["format"] == "ddlsim-calibration-1");
  REQUIRE(calibration_differences(absolute, z).size() == 1);
  CHECK_THAT(calibration_differences(absolute, z)[0],
             Catch::Contains("format-1") && Catch::Contains("refit"));
}

TEST_CASE("a calibration records what it was fitted on and says what differs elsewhere") {
  topo::NodeSpec h100;
  h100.gpu_model = "H100-SXM5-80GB";
  h100.gpus = 8;
  h100.nics = 8;
  h100.intra = topo::IntraNode::nvswitch;
  h100.transport = topo::Transport::ib;
  Calibration c = sample();
  c.fitted_on = fitted_on(h100, 2);
  c.fitted_on->nccl_version = "NCCL 2.18.5+cuda12.2";
  CHECK(c.fitted_on->compute_capability == 90);
  const Calibration read = calibration_from_json(to_json(c), "c.json");
  REQUIRE(read.fitted_on);
  CHECK(read.fitted_on->gpu_model == "H100-SXM5-80GB");
  CHECK(read.fitted_on->transport == "ib");
  CHECK(read.fitted_on->nics_per_node == 8);
  CHECK(read.fitted_on->nccl_version == "NCCL 2.18.5+cuda12.2");

  topo::ClusterSpec same;
  same.node_groups.push_back({h100, 4});
  CHECK(calibration_differences(read, same).empty()); // more nodes of the same kind: no warning

  topo::NodeSpec a100 = h100;
  a100.gpu_model = "A100-SXM4-80GB";
  a100.nics = 4;
  a100.transport = topo::Transport::efa;
  topo::ClusterSpec other;
  other.node_groups.push_back({a100, 2});
  const std::vector<std::string> lines = calibration_differences(read, other);
  REQUIRE(lines.size() == 1);
  CHECK_THAT(lines[0], Catch::StartsWith("/topology/nodes/0: ") &&
                           Catch::Contains("\"H100-SXM5-80GB\" (sm_90) fitted") &&
                           Catch::Contains("\"A100-SXM4-80GB\" (sm_80) here") &&
                           Catch::Contains("another GPU generation") &&
                           Catch::Contains("NICs per node 8 fitted, 4 here") &&
                           Catch::Contains("transport ib fitted, efa here"));
  CHECK_THAT(lines[0], !Catch::Contains("GPUs per node"));
}

TEST_CASE("a calibration targets node groups by preset or pointer, and several combine") {
  const auto dir = std::filesystem::temp_directory_path() / "ddlsim_calibration_groups_test";
  std::filesystem::create_directories(dir);
  Calibration old_nodes = sample(); // NIC 10 GB/s, 5 us; per step 2 us; launch 3 us; 500 GB/s
  Calibration new_nodes;
  new_nodes.link(LinkGroup::network) = {true, 2 * kPsPerUs, 40e9, 0.9};
  new_nodes.launch_overhead = 4 * kPsPerUs;
  new_nodes.reduce_bytes_per_second = 300e9;
  new_nodes.protocols = {{"simple", 1.0, 1 * kPsPerUs}};
  new_nodes.node_groups = {"dgx-a100"}; // the file's own target (calibrate --node-groups)
  write_calibration_file(old_nodes, dir / "old.json");
  write_calibration_file(new_nodes, dir / "new.json");
  CHECK(read_calibration_file(dir / "new.json").node_groups ==
        std::vector<std::string>{"dgx-a100"});
  const Json nodes = {{{"preset", "dgx1-v100"}, {"count", 2}},
                      {{"preset", "dgx-a100"}, {"count", 2}},
                      {{"preset", "dgx1-v100"}, {"count", 1}}};
  Json scenario = {{"topology", {{"nodes", nodes}}},
                   {"workload", {{"type", "collective"}, {"op", "all_reduce"}, {"sizes", {1024}}}},
                   {"calibration",
                    {{{"file", "old.json"}, {"node_groups", {"/topology/nodes/0"}}}, "new.json"}}};
  const Scenario s = load_scenario(scenario, "s.json", dir);
  const auto& groups = s.topology.node_groups;
  CHECK(groups[0].spec.nic_bytes_per_second == Approx(10e9)); // nodes/0: old.json
  CHECK(groups[0].spec.nic_latency == 5 * kPsPerUs);
  // preset dgx-a100: new.json, its efficiency (0.9) times the preset's NIC rate
  CHECK(groups[1].spec.nic_bytes_per_second ==
        Approx(0.9 * topo::find_node_preset("dgx-a100")->nic_bytes_per_second));
  CHECK(groups[1].spec.nic_latency == 2 * kPsPerUs);
  // The second dgx1-v100 group is in neither: it keeps its preset's NIC (100 Gb/s).
  CHECK(groups[2].spec.nic_bytes_per_second == Approx(12.5e9));
  // Engine-wide: the slowest participant's values.
  CHECK(s.engine.per_step_overhead == 2 * kPsPerUs);
  CHECK(s.engine.launch_overhead == 4 * kPsPerUs);
  CHECK(s.engine.reduce_bytes_per_second == Approx(300e9));

  // Errors: a selector that matches nothing, and two calibrations on one group.
  Json unknown = scenario;
  unknown["calibration"] = {{{"file", "old.json"}, {"node_groups", {"dgx-a10"}}}};
  CHECK_THAT(error_of([&] { load_scenario(unknown, "s.json", dir); }),
             Catch::Contains("/calibration") && Catch::Contains("\"dgx-a10\"") &&
                 Catch::Contains("/topology/nodes/1 (preset \"dgx-a100\""));
  Json overlap = scenario;
  overlap["calibration"] = {"old.json", "new.json"}; // old.json targets every group
  CHECK_THAT(error_of([&] { load_scenario(overlap, "s.json", dir); }),
             Catch::Contains("node group 1 is targeted by calibration 1 and calibration 2"));
  Json bad_key = scenario;
  bad_key["calibration"] = {{{"file", "old.json"}, {"groups", {"dgx-a100"}}}};
  CHECK_THAT(error_of([&] { load_scenario(bad_key, "s.json", dir); }),
             Catch::Contains("/calibration/0") && Catch::Contains("groups"));
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "a scenario's \"calibration\" applies to its topology and engine, relative to its folder") {
  const auto dir = std::filesystem::temp_directory_path() / "ddlsim_calibration_test";
  std::filesystem::create_directories(dir / "cal");
  write_calibration_file(sample(), dir / "cal" / "c.json");
  const Json scenario = {
      {"topology", {{"nodes", {{{"preset", "dgx-a100"}, {"count", 2}}}}}},
      {"workload", {{"type", "collective"}, {"op", "all_reduce"}, {"sizes", {1024}}}},
      {"calibration", "cal/c.json"}};
  const Scenario s = load_scenario(scenario, "s.json", dir);
  CHECK(s.topology.node_groups[0].spec.nic_bytes_per_second ==
        Approx(0.8 * topo::find_node_preset("dgx-a100")->nic_bytes_per_second));
  CHECK(s.topology.node_groups[0].spec.nic_latency == 5 * kPsPerUs);
  CHECK(s.engine.per_step_overhead == 2 * kPsPerUs);
  CHECK(s.engine.launch_overhead == 3 * kPsPerUs);
  CHECK(s.engine.reduce_bytes_per_second == Approx(500e9));
  CHECK(s.calibrations.at(0).file == (dir / "cal" / "c.json").string());
  // Sweep points (ddlsim plan) inherit it too.
  Json swept = scenario;
  swept["sweep"] = {{{"set", "/topology/nodes/0/count"}, {"values", {1, 2}}}};
  const Scenario base = load_scenario(swept, (dir / "s.json").string(), dir);
  const SweepPoint point = sweep_point(base, 0);
  CHECK(point.scenario.topology.node_groups[0].count == 1);
  CHECK(point.scenario.topology.node_groups[0].spec.nic_latency == 5 * kPsPerUs);
  CHECK(point.scenario.engine.launch_overhead == 3 * kPsPerUs);
  Json missing = scenario;
  missing["calibration"] = "nope.json";
  CHECK_THAT(error_of([&] { load_scenario(missing, "s.json", dir); }),
             Catch::Contains("s.json: /calibration") && Catch::Contains("nope.json"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("error summaries give median and p90 (nearest rank) and max of |error| above a size") {
  std::vector<ValidationRow> rows;
  const double errors[] = {1, -2, 3, -4, 5, 6, -7, 8, 9, -10, 50};
  for (int i = 0; i < 11; ++i) {
    ValidationRow r;
    r.point.bytes = i < 10 ? 1 << 20 : 8;
    r.error_percent = errors[i];
    rows.push_back(r);
  }
  const ErrorSummary large = summarize(rows, 1 << 16);
  CHECK(large.points == 10);
  CHECK(large.median == Approx(5.5));
  CHECK(large.p90 == Approx(9));
  CHECK(large.max == Approx(10));
  CHECK(summarize(rows, 0).max == Approx(50));
  rows[0].predicted = false; // a point the fit saw does not count
  CHECK(summarize(rows, 1 << 16).points == 9);
}

TEST_CASE("cross-validation modes parse and bad ones say what is expected") {
  CHECK(parse_cross_validation("kfold:5").folds == 5);
  const CrossValidation sizes = parse_cross_validation("sizes:64KiB,256MiB");
  CHECK(sizes.sizes == std::vector<std::uint64_t>{65536, 268435456});
  CHECK(parse_cross_validation("ranks:8").ranks == 8);
  CHECK_THAT(error_of([] { parse_cross_validation("kfold:1"); }),
             Catch::Contains("--cross-validate kfold:1") && Catch::Contains("K must be"));
  CHECK_THAT(error_of([] { parse_cross_validation("halves"); }), Catch::Contains("unknown mode"));
  CHECK_THAT(error_of([] { parse_cross_validation("sizes:64 apples"); }),
             Catch::Contains("\"64 apples\" is not a byte size"));
}

TEST_CASE("ddlsim reports read as measurements and bad rows name file and pointer") {
  const Json report = {{"scenario", "x"},
                       {"engine", "analytic"},
                       {"backend", "host"},
                       {"op", "all_reduce"},
                       {"ranks", 4},
                       {"results",
                        {{{"bytes", 1024}, {"algorithm", "ring"}, {"time_ps", 5000000}},
                         {{"bytes", 4096}, {"algorithm", "ring"}, {"time_us", 7.5}}}},
                       {"timelines", Json::array()}};
  const MeasuredSet set = read_real_report(report, "r.json");
  REQUIRE(set.points.size() == 2);
  CHECK(set.points[0].seconds == Approx(5e-6));
  CHECK(set.points[1].seconds == Approx(7.5e-6));
  CHECK(set.points[1].algorithm == "ring");
  CHECK(set.points[1].ranks == 4);
  CHECK(set.system.transport == "host");
  Json bad = report;
  bad["results"][1].erase("time_us");
  CHECK_THAT(error_of([&] { read_real_report(bad, "r.json"); }),
             Catch::Contains("r.json: /results/1") && Catch::Contains("time_ps"));
  Json op = report;
  op["op"] = "allreduce";
  CHECK_THAT(error_of([&] { read_real_report(op, "r.json"); }),
             Catch::Contains("/op") && Catch::Contains("all_reduce"));
}
