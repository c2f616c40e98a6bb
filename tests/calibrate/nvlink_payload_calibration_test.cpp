// A calibration's NVLink efficiency is against the datasheet rate, so applying it replaces the
// NVLink generation's payload efficiency (models/nvlink.hpp) instead of multiplying it.
#include "ddlsim/calibrate/calibration.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/topologies/builders.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;

TEST_CASE("calibration: a calibrated NVLink class replaces the generation's payload efficiency") {
  const Json json = Json::parse(R"({"topology": {"nodes": [{"preset": "dgx-h100"}]},
    "workload": {"type": "collective", "op": "all_reduce", "sizes": ["1MiB"]}})");
  topo::ClusterSpec spec = load_scenario(json, "s.json", ".").topology;
  REQUIRE(spec.node_groups.front().spec.nvlink_payload_efficiency == Approx(20.6 / 25));
  calib::Calibration calibration;
  calib::LinkCalibration& link = calibration.link(calib::LinkGroup::nvlink);
  link.set = true;
  link.efficiency = 0.9;
  link.latency = 300 * kPsPerNs;
  calib::apply_calibration(calibration, spec);
  CHECK(spec.node_groups.front().spec.nvlink_payload_efficiency == 1.0);
  int nvlinks = 0;
  for (const topo::Link& l : topo::build_topology(spec).links())
    if (l.link_class == topo::LinkClass::nvlink) {
      CHECK(l.bandwidth_bytes_per_second == Approx(0.9 * 450e9));
      ++nvlinks;
    }
  CHECK(nvlinks == 16); // 8 GPUs to the switch plane, both directions
}
