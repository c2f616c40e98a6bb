// engine.type = "flow" in a scenario: the flow keys are read strictly, errors name the JSON
// pointer, and a loaded scenario's flow settings reach the engine's spec.
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/scenario/scenario.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using Catch::Matchers::Contains;

namespace {

Json scenario_with(const std::string& engine) {
  Json json = Json::parse(R"({
    "topology": {"nodes": [{"preset": "dgx-a100", "count": 2}],
                 "fabric": {"type": "single_switch", "bandwidth_gbps": 200}},
    "workload": {"type": "collective", "op": "all_reduce", "algorithm": "ring", "sizes": ["1MiB"]}
  })");
  json["engine"] = Json::parse(engine);
  return json;
}

std::string load_error(const std::string& engine) {
  try {
    load_scenario(scenario_with(engine), "s.json", ".");
  } catch (const InputError& e) {
    return e.what();
  }
  return "loaded without error";
}

} // namespace

TEST_CASE("flow engine settings load into the engine spec") {
  const Scenario defaults = load_scenario(scenario_with(R"({"type": "flow"})"), "s.json", ".");
  CHECK(sim::engine_name(defaults.engine) == "flow");
  const auto& defaults_flow = std::get<sim::flow::FlowEngineSpec>(defaults.engine.kind);
  CHECK(defaults_flow == sim::flow::FlowEngineSpec{});
  CHECK(defaults_flow.network_model == sim::flow::NetworkModel::lv08);
  const Scenario set = load_scenario(
      scenario_with(R"({"type": "flow", "network_model": "cm02", "tcp_gamma_bytes": 1e12,
                        "crosstraffic": false, "context_factory": "ucontext", "simgrid_log": true,
                        "per_step_overhead_ns": 100})"),
      "s.json", ".");
  const auto& flow = std::get<sim::flow::FlowEngineSpec>(set.engine.kind);
  CHECK(flow.network_model == sim::flow::NetworkModel::cm02);
  CHECK(flow.tcp_gamma_bytes == 1e12);
  CHECK(flow.crosstraffic == false);
  CHECK(flow.context_factory == sim::flow::ContextFactory::ucontext);
  CHECK(flow.simgrid_log);
  CHECK(set.engine.per_step_overhead == 100'000);
}

TEST_CASE("flow engine keys are checked and named by JSON pointer") {
  CHECK_THAT(load_error(R"({"type": "flow", "network_model": "lv07"})"),
             Contains("/engine/network_model") && Contains("did you mean \"lv08\"?"));
  CHECK_THAT(load_error(R"({"type": "flow", "network_model": "ns3"})"),
             Contains("/engine/network_model") && Contains("ns-3"));
  CHECK_THAT(load_error(R"({"type": "flow", "tcp_gamma_bytes": 0})"),
             Contains("/engine/tcp_gamma_bytes"));
  CHECK_THAT(load_error(R"({"type": "flow", "crosstraffic": "no"})"),
             Contains("/engine/crosstraffic"));
  CHECK_THAT(load_error(R"({"type": "flow", "context_factory": "fibers"})"),
             Contains("/engine/context_factory"));
  CHECK_THAT(load_error(R"({"type": "flow", "network_modle": "cm02"})"),
             Contains("/engine/network_modle") && Contains("did you mean \"network_model\"?"));
  // Flow settings on another engine are unknown keys, not silently ignored.
  CHECK_THAT(load_error(R"({"type": "analytic", "network_model": "cm02"})"),
             Contains("/engine/network_model"));
}
