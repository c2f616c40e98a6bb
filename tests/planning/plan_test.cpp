// The planner's decisions: the Pareto front, costs, goals, ranking and the recommendation.
#include "ddlsim/planning/pareto.hpp"
#include "ddlsim/planning/plan.hpp"
#include "ddlsim/planning/plan_report.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace ddlsim;
using namespace ddlsim::plan;
using Catch::Matchers::Contains;

namespace {

PointResult point(std::size_t index, int gpus, double iteration_seconds, double efficiency = -1) {
  PointResult r;
  r.index = index;
  r.settings = {{"/topology/nodes/0/count", Json(gpus / 8)}};
  r.metrics.gpus = gpus;
  r.metrics.nodes = gpus / 8;
  r.metrics.iteration_seconds = iteration_seconds;
  r.metrics.scaling_efficiency = efficiency;
  return r;
}

} // namespace

TEST_CASE("plan: the Pareto front keeps exactly the undominated points") {
  //   (time, cost): a=(1,10) b=(2,5) c=(3,6) dominated by b, d=(2,5) equal to b, e=(4,1)
  const std::vector<bool> front = pareto_front({{1, 10}, {2, 5}, {3, 6}, {2, 5}, {4, 1}});
  CHECK(front == std::vector<bool>{true, true, false, true, true});
  CHECK(pareto_front({{1, 1}, {1, 2}, {2, 1}}) == std::vector<bool>{true, false, false});
  CHECK(pareto_front({}).empty());
}

TEST_CASE("plan: without a price the cost is GPU-hours and the cheapest point is recommended") {
  // 8 GPUs take 4 s per iteration (32 GPU-s), 16 take 2.5 s (40), 32 take 1 s (32).
  const Plan plan = make_plan({point(0, 8, 4.0), point(1, 16, 2.5), point(2, 32, 1.0)}, {});
  CHECK(plan.cost_unit == "GPU-hours");
  CHECK(plan.time_axis == "iteration time");
  REQUIRE(plan.rows.size() == 3);
  // Equal cost: the faster of the two first.
  CHECK(plan.rows[0].point.index == 2);
  CHECK(plan.rows[1].point.index == 0);
  CHECK(plan.rows[2].point.index == 1);
  CHECK(plan.rows[0].cost == Approx(32.0 / 3600));
  CHECK(plan.rows[0].on_front);
  CHECK_FALSE(plan.rows[1].on_front); // same cost, slower
  CHECK_FALSE(plan.rows[2].on_front); // dominated by 32 GPUs
  REQUIRE(plan.recommended == 0u);
  CHECK_THAT(plan.reason, Contains("/topology/nodes/0/count=4"));
}

TEST_CASE("plan: goals make points infeasible and the recommendation says what the cheaper miss") {
  PlanSpec spec;
  spec.price_per_gpu_hour.all = 3.6; // 0.001 per GPU-second
  spec.min_scaling_efficiency = 0.8;
  const Plan plan =
      make_plan({point(0, 8, 4.0, 0.95), point(1, 16, 2.5, 0.85), point(2, 32, 1.0, 0.6)}, spec);
  CHECK(plan.cost_unit == "cost");
  REQUIRE(plan.recommended == 0u);
  CHECK(plan.rows[0].point.index == 0); // cheapest feasible: 8 GPUs, 0.032
  CHECK(plan.rows[0].cost == Approx(0.032));
  CHECK(plan.rows[2].point.index == 2); // infeasible last, although as cheap as the best
  REQUIRE(plan.rows[2].unmet.size() == 1);
  CHECK_THAT(plan.rows[2].unmet[0], Contains("efficiency 0.600 < 0.800"));
}

TEST_CASE("plan: preferring time picks the fastest feasible point") {
  PlanSpec spec;
  spec.prefer = "time";
  spec.max_cost = 40.0 / 3600 - 1e-12; // GPU-hours: 16 GPUs (40 GPU-s) is over budget
  const Plan plan = make_plan({point(0, 8, 4.0), point(1, 16, 2.5), point(2, 32, 1.0)}, spec);
  REQUIRE(plan.recommended == 0u);
  CHECK(plan.rows[0].point.index == 2);
  CHECK(plan.rows.back().point.index == 1);
  CHECK_THAT(plan.rows.back().unmet.at(0), Contains("cost"));
}

TEST_CASE("plan: with no feasible point the closest one is named and nothing is recommended") {
  PlanSpec spec;
  spec.max_time_seconds = 0.5;
  const Plan plan = make_plan({point(0, 8, 4.0), point(1, 32, 1.0)}, spec);
  CHECK_FALSE(plan.recommended.has_value());
  CHECK_THAT(plan.reason, Contains("no point meets every goal"));
}

TEST_CASE("plan: failed points rank last and never sit on the front") {
  PointResult failed = point(0, 8, 0);
  failed.error = "no route";
  const Plan plan = make_plan({failed, point(1, 16, 2.0)}, {});
  CHECK(plan.rows[0].point.index == 1);
  CHECK_FALSE(plan.rows[1].on_front);
  std::ostringstream table;
  print_plan(plan, table);
  CHECK_THAT(table.str(), Contains("failed: no route"));
}

TEST_CASE("plan: training points are compared by time to train") {
  PointResult a = point(0, 8, 0.5, 0.9), b = point(1, 64, 0.1, 0.7);
  a.metrics.train_seconds = 3600;
  b.metrics.train_seconds = 720;
  PlanSpec cheapest;
  cheapest.prefer = "cost";
  const Plan plan = make_plan({a, b}, cheapest);
  CHECK(plan.time_axis == "time to train");
  CHECK(plan.rows[0].time_seconds == Approx(3600)); // 8 GPU-hours vs 12.8
}

TEST_CASE("plan: CSV and JSON carry every point in ranked order") {
  const Plan plan = make_plan({point(0, 8, 4.0), point(1, 32, 1.0)}, {});
  std::ostringstream csv;
  write_csv(plan, csv);
  CHECK_THAT(csv.str(), Contains("rank,index,/topology/nodes/0/count,gpus,nodes"));
  CHECK_THAT(csv.str(), Contains("\n1,1,4,32,4,"));
  const Json json = to_json(plan);
  CHECK(json["ranked"].size() == 2);
  CHECK(json["recommended"] == 1);
  CHECK(json["ranked"][0]["gpu_hours"].get<double>() == Approx(32.0 / 3600));
}

TEST_CASE("plan: without goals the knee of the time-cost front is recommended, saying why") {
  // A flat front: each doubling of GPUs costs a little more and saves less and less time. The
  // cheapest point (8 GPUs) is 8x slower than the knee for 17% less cost.
  const Plan plan = make_plan({point(0, 8, 10.0), point(1, 16, 5.2), point(2, 32, 2.7),
                               point(3, 64, 1.5), point(4, 128, 1.2)},
                              {});
  REQUIRE(plan.recommended == 0u);
  CHECK(plan.rows[0].point.index == 3);
  CHECK_THAT(plan.reason, Contains("no goals given, so the knee of the time-cost front"));
  CHECK_THAT(plan.reason, Contains("the cheapest saves"));
  CHECK_THAT(plan.reason, Contains("the fastest point saves"));
  // An explicit preference is honoured.
  PlanSpec cheapest;
  cheapest.prefer = "cost";
  const Plan by_cost = make_plan({point(0, 8, 10.0), point(1, 16, 5.2), point(2, 32, 2.7),
                                  point(3, 64, 1.5), point(4, 128, 1.2)},
                                 cheapest);
  CHECK(by_cost.rows[0].point.index == 0);
}

TEST_CASE("plan: a missed time goal is stated in the goal's unit") {
  PlanSpec spec;
  spec.max_time_seconds = 1500;
  const Plan plan = make_plan({point(0, 8, 3672.0), point(1, 16, 1000.0)}, spec);
  const PlanRow& slow = plan.rows.back();
  REQUIRE(slow.point.index == 0);
  REQUIRE(slow.unmet.size() == 1);
  CHECK(slow.unmet[0] == "time 3672.00 s > 1500.00 s");
}

TEST_CASE("plan: prices and power per node kind give each point its cost and energy") {
  // One hour on 2 nodes (16 GPUs) of kind A and 1 node (8 GPUs) of kind B.
  PointResult mixed = point(0, 24, 3600.0);
  mixed.metrics.nodes = 3;
  mixed.metrics.kinds = {{"A", 2, 16}, {"B", 1, 8}};
  PlanSpec spec;
  spec.price_per_node_hour.by_kind = {{"A", 10.0}, {"B", 30.0}};
  spec.power_per_gpu_watts.all = 700;
  spec.power_per_node_watts.by_kind = {{"A", 1000.0}, {"B", 2000.0}};
  // 24 x 700 W + 2 x 1 kW + 2 kW = 20.8 kW for an hour.
  CHECK(hourly_price(spec, mixed.metrics) == Approx(2 * 10 + 30));
  CHECK(energy_kwh(spec, mixed.metrics, 3600) == Approx(20.8));
  Plan plan = make_plan({mixed}, spec);
  CHECK(plan.cost_unit == "cost");
  REQUIRE(plan.has_energy);
  CHECK(plan.rows[0].energy_kwh == Approx(20.8));
  CHECK(plan.rows[0].cost == Approx(50.0));
  // An energy price adds the energy's cost; energy alone is a cost too.
  spec.price_per_kwh = 0.25;
  CHECK(make_plan({mixed}, spec).rows[0].cost == Approx(50.0 + 20.8 * 0.25));
  spec.price_per_node_hour = {};
  CHECK(make_plan({mixed}, spec).rows[0].cost == Approx(20.8 * 0.25));
  // The energy shows in every report.
  std::ostringstream table, csv;
  plan = make_plan({mixed}, spec);
  print_plan(plan, table);
  write_csv(plan, csv);
  CHECK_THAT(table.str(), Contains("energy(kWh)") && Contains("20.8"));
  CHECK_THAT(csv.str(), Contains(",energy_kwh,") && Contains(",20.800000,"));
  CHECK(to_json(plan)["ranked"][0]["energy_kwh"].get<double>() == Approx(20.8));
  // A per-kind table without the point's kind names the table and the kind to add.
  spec.power_per_node_watts.where = "/plan/power/per_node_watts";
  spec.power_per_node_watts.by_kind.erase("B");
  CHECK_THROWS_WITH(make_plan({mixed}, spec),
                    Contains("/plan/power/per_node_watts") && Contains("add \"B\": N"));
}

TEST_CASE("plan: a point that sets a whole object is named by the fields that set it apart") {
  // As scenarios/papers/gradientflow-alexnet.json sweeps /workload: two whole workloads.
  const Json ring = Json::parse(R"({"type": "training", "model": "alexnet", "gpus": 512,
      "framework": {"type": "ddp", "bucket_cap": "25MiB"}, "algorithm": "ring"})");
  const Json sparse = Json::parse(R"({"type": "training", "model": "alexnet", "gpus": 512,
      "framework": {"type": "gradientflow", "lazy_threshold": "32MiB"},
      "algorithm": "coarse_sparse", "compression": {"type": "coarse", "density": 0.1}})");
  std::vector<PointResult> points = {point(0, 64, 0.09), point(1, 64, 0.04)};
  points[0].settings = {{"/workload", ring}};
  points[1].settings = {{"/workload", sparse}};
  const Plan plan = make_plan(points, PlanSpec{});
  REQUIRE(plan.recommended);
  // The sparse point is faster and no dearer: recommended, named without the fields both share.
  CHECK_THAT(plan.reason, Contains("/workload/algorithm=\"coarse_sparse\""));
  CHECK_THAT(plan.reason, Contains("/workload/framework/type=\"gradientflow\""));
  CHECK_THAT(plan.reason, Contains("/workload/compression/density=0.1"));
  CHECK_THAT(plan.reason, !Contains("alexnet"));
  CHECK_THAT(plan.reason, !Contains("{"));
  std::ostringstream table;
  print_plan(plan, table);
  CHECK_THAT(table.str(), Contains("algorithm=ring framework/bucket_cap=2"));
  CHECK_THAT(table.str(), !Contains("{\"algorithm\""));
}
