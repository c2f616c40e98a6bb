// Sweep points as the planner enumerates them: the first axis varies fastest, every point carries
// its settings, and a scenario without a sweep is one point.
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/scenario/scenario.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using Catch::Matchers::Contains;

namespace {

Scenario load(const char* text) {
  return load_scenario(Json::parse(text), "test.json", ".");
}

} // namespace

TEST_CASE("sweep points: the first axis varies fastest and each point is a parsed scenario") {
  const Scenario scenario = load(R"({
    "include": "cloud-v100-25g",
    "workload": {"type": "collective", "op": "all_reduce", "algorithm": "ring", "sizes": ["1MiB"]},
    "sweep": [{"set": "/topology/nodes/0/count", "values": [2, 4, 8]},
              {"set": "/workload/algorithm", "values": ["ring", "hierarchical"]}]})");
  REQUIRE(sweep_point_count(scenario) == 6);
  const SweepPoint p4 = sweep_point(scenario, 4); // count index 1, algorithm index 1
  CHECK(p4.index == 4);
  REQUIRE(p4.settings.size() == 2);
  CHECK(p4.settings[0].second == 4);
  CHECK(p4.settings[1].second == "hierarchical");
  CHECK(p4.scenario.topology.node_groups.at(0).count == 4);
  CHECK(p4.scenario.workload.collective.algorithm == "hierarchical");
  CHECK(p4.scenario.workload.collective.ranks == 32);
  CHECK(p4.scenario.sweep.empty());
  CHECK_FALSE(p4.scenario.resolved.contains("sweep"));
  CHECK_THROWS_AS(sweep_point(scenario, 6), std::out_of_range);
}

TEST_CASE("sweep points: a scenario without a sweep is its own single point") {
  const Scenario scenario = load(R"({"include": "cloud-v100-25g"})");
  REQUIRE(sweep_point_count(scenario) == 1);
  CHECK(sweep_point(scenario, 0).settings.empty());
  CHECK(sweep_point(scenario, 0).scenario.resolved == scenario.resolved);
}

TEST_CASE("plan section: prices and power per node kind, checked against the cluster's kinds") {
  const Scenario s = load(R"({"include": "cloud-v100-25g", "plan": {
      "price": {"per_node_hour": {"cloud-8xv100-25g": 24.5}, "per_kwh": 0.12},
      "power": {"per_gpu_watts": 300, "per_node_watts": {"cloud-8xv100-25g": 900}}}})");
  CHECK(s.plan.price_per_node_hour.of("cloud-8xv100-25g") == 24.5);
  CHECK(s.plan.price_per_kwh == 0.12);
  CHECK(s.plan.power_per_gpu_watts.all == 300);
  CHECK(s.plan.power_per_node_watts.of("cloud-8xv100-25g") == 900);
  // A kind of the cluster without a figure: the table and the kind to add.
  CHECK_THROWS_WITH(load(R"({"include": "cloud-v100-25g", "plan": {"price":
                         {"per_node_hour": {"dgx-a100": 30}}}})"),
                    Contains("/plan/price/per_node_hour") &&
                        Contains("add \"cloud-8xv100-25g\": N"));
  // An energy price needs power; power alone is fine (energy without a price).
  CHECK_THROWS_WITH(load(R"({"include": "cloud-v100-25g", "plan": {"price": {"per_kwh": 0.1}}})"),
                    Contains("/plan/price/per_kwh") && Contains("power"));
  CHECK(load(R"({"include": "cloud-v100-25g", "plan": {"power": {"per_gpu_watts": 300}}})")
            .plan.power_per_gpu_watts.given());
  CHECK_THROWS_WITH(load(R"({"include": "cloud-v100-25g", "plan": {"power": {}}})"),
                    Contains("/plan/power"));
  CHECK_THROWS_WITH(load(R"({"include": "cloud-v100-25g", "plan": {"power":
                         {"per_gpu_watts": {"cloud-8xv100-25g": -3}}}})"),
                    Contains("/plan/power/per_gpu_watts/cloud-8xv100-25g"));
}

TEST_CASE("plan section: prices and goals are validated with their JSON pointer") {
  CHECK(load(R"({"include": "cloud-v100-25g", "plan": {"price": {"per_gpu_hour": 2.5},
             "goals": {"min_scaling_efficiency": 0.8}, "prefer": "time"}})")
            .plan.price_per_gpu_hour.all == 2.5);
  CHECK_THROWS_WITH(load(R"({"include": "cloud-v100-25g", "plan": {"price":
                         {"per_gpu_hour": 2, "per_node_hour": 16}}})"),
                    Contains("/plan/price") && Contains("not both"));
  CHECK_THROWS_WITH(load(R"({"include": "cloud-v100-25g", "plan": {"goals":
                         {"min_scaling_eficiency": 0.8}}})"),
                    Contains("min_scaling_efficiency"));
  CHECK_THROWS_WITH(load(R"({"include": "cloud-v100-25g", "plan": {"prefer": "speed"}})"),
                    Contains("/plan/prefer"));
}
