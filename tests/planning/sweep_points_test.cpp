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

TEST_CASE("plan section: prices and goals are validated with their JSON pointer") {
  CHECK(load(R"({"include": "cloud-v100-25g", "plan": {"price": {"per_gpu_hour": 2.5},
             "goals": {"min_scaling_efficiency": 0.8}, "prefer": "time"}})")
            .plan.price_per_gpu_hour == 2.5);
  CHECK_THROWS_WITH(load(R"({"include": "cloud-v100-25g", "plan": {"price":
                         {"per_gpu_hour": 2, "per_node_hour": 16}}})"),
                    Contains("/plan/price") && Contains("not both"));
  CHECK_THROWS_WITH(load(R"({"include": "cloud-v100-25g", "plan": {"goals":
                         {"min_scaling_eficiency": 0.8}}})"),
                    Contains("min_scaling_efficiency"));
  CHECK_THROWS_WITH(load(R"({"include": "cloud-v100-25g", "plan": {"prefer": "speed"}})"),
                    Contains("/plan/prefer"));
}
