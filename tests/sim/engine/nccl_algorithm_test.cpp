// "algorithm": "nccl" through the engine layer: NCCL's choice (models/nccl_model.hpp) resolved per
// size into a generator, its channels and protocol, with NCCL's base latency per call.
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/sim/engine.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "error_of.hpp"
#include "nccl_run.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using Catch::Matchers::Contains;
using Run = ddlsim::test_support::NcclRun;
using ddlsim::test_support::error_of;
using ddlsim::test_support::run_nccl;

namespace {

Json base_json() {
  return Json::parse(R"({
    "topology": {"nodes": [{"preset": "dgx-h100", "count": 2}],
                 "fabric": {"type": "single_switch"}},
    "workload": {"type": "collective", "op": "all_reduce", "algorithm": "nccl",
                 "sizes": ["4KiB", "1MiB", "1GiB"]}
  })");
}

Scenario scenario_with(const std::string& patch) {
  Json json = base_json();
  json.merge_patch(Json::parse(patch));
  return load_scenario(json, "s.json", ".");
}

} // namespace

TEST_CASE("nccl algorithm: each size runs NCCL's choice and the result says which") {
  const Scenario scenario = scenario_with("{}");
  REQUIRE(scenario.workload.collective.nccl_system);
  for (std::uint64_t bytes : {std::uint64_t{4} << 10, std::uint64_t{1} << 20}) {
    const Run r = run_nccl(scenario, bytes);
    CHECK(r.result.algorithm == r.choice.generator);
    CHECK(r.result.nccl_choice == r.choice.describe());
    CHECK(r.result.nccl_model_seconds == Approx(r.choice.model_seconds));
    // NCCL's base latency is charged once per call when no calibration sets an overhead.
    CHECK(r.result.time > models::nccl_call_overhead(r.choice.algorithm, r.choice.protocol));
  }
  // Larger calls take longer and launch at least as many channels.
  const Run small = run_nccl(scenario, 4 << 10), large = run_nccl(scenario, 1 << 30);
  CHECK(large.result.time > small.result.time);
  CHECK(large.choice.channels >= small.choice.channels);
  CHECK(large.choice.channels == scenario.workload.collective.nccl_system->channels);
}

TEST_CASE("nccl algorithm: a calibrated launch overhead replaces NCCL's base latency") {
  Scenario scenario = scenario_with("{}");
  const Run plain = run_nccl(scenario, 1 << 20);
  scenario.engine.launch_overhead = 1; // 1 ps
  const Run calibrated = run_nccl(scenario, 1 << 20);
  CHECK(plain.result.time - calibrated.result.time ==
        models::nccl_call_overhead(plain.choice.algorithm, plain.choice.protocol) - 1);
}

TEST_CASE("nccl algorithm: the scenario's forced keys are honoured") {
  const Scenario scenario =
      scenario_with(R"({"workload": {"nccl": {"protocol": "Simple", "channels": 4}}})");
  const Run r = run_nccl(scenario, 1 << 30);
  CHECK_THAT(r.result.nccl_choice, Contains("/Simple, 4 channels"));
  const Scenario ring = scenario_with(
      R"({"workload": {"nccl": {"algorithm": "ring", "protocol": "Simple", "channels": 4}}})");
  CHECK(run_nccl(ring, 1 << 30).result.nccl_choice == "ring/Simple, 4 channels");
  const Scenario ll = scenario_with(R"({"workload": {"nccl": {"protocol": "ll"}}})");
  CHECK_THAT(run_nccl(ll, 1 << 30).result.nccl_choice, Contains("/LL,"));
}

TEST_CASE("nccl algorithm: bad keys are rejected with their JSON pointer") {
  auto error = [](const std::string& patch) { return error_of([&] { scenario_with(patch); }); };
  CHECK_THAT(error(R"({"workload": {"nccl": {"algoritm": "ring"}}})"),
             Contains("/workload/nccl/algoritm") && Contains("did you mean \"algorithm\""));
  CHECK_THAT(error(R"({"workload": {"nccl": {"protocol": "LL64"}}})"),
             Contains("/workload/nccl/protocol") && Contains("ll128"));
  CHECK_THAT(error(R"({"workload": {"nccl": {"channels": 65}}})"),
             Contains("/workload/nccl/channels"));
  CHECK_THAT(error(R"({"workload": {"algorithm": "ring", "nccl": {"protocol": "ll"}}})"),
             Contains("/workload/nccl") && Contains("\"algorithm\": \"nccl\""));
  // A forced algorithm ddlsim has no generator for.
  CHECK_THAT(error(R"({"workload": {"nccl": {"algorithm": "collnet_chain"}}})"),
             Contains("/workload/nccl") && Contains("collnet_chain"));
  // NCCL does not tune all-to-all, and runs only on NVIDIA GPUs.
  CHECK_THAT(error(R"({"workload": {"op": "all_to_all"}})"), Contains("/workload/op"));
  CHECK_THAT(error(R"({"topology": {"nodes": [{"preset": "dgx-h100", "count": 2,
                                               "gpu_model": "MI300X"}]}})"),
             Contains("/topology/nodes/0/gpu_model"));
}

TEST_CASE("nccl algorithm: without NCCL's description the engine says what is missing") {
  const Scenario scenario = scenario_with("{}");
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  const coll::CollectiveCall call =
      make_collective_call(scenario.workload.collective, scenario.topology, 1 << 20);
  CHECK_THAT(error_of([&] { sim::simulate(call, topology, router, scenario.engine, {}); }),
             Contains("/workload/algorithm") && Contains("nccl"));
}
