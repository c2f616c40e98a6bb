// A plan: every point's time and cost, which goals it meets, the ranking, the time-vs-cost
// Pareto front and the recommendation with its reason.
//
// The time axis is the time to train when the workload gives epochs (train_seconds > 0), else
// one iteration (or one collective). The cost axis is that time priced per GPU-hour or per
// node-hour when the scenario's plan gives a price, else GPU-hours, so a front exists either way.
#pragma once

#include "ddlsim/planning/point_result.hpp"
#include "ddlsim/scenario/scenario.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ddlsim::plan {

struct PlanRow {
  PointResult point;
  double time_seconds = 0;
  double cost = 0;
  std::vector<std::string> unmet; // goals the point misses, each with its figures
  bool on_front = false;

  bool feasible() const { return point.ok() && unmet.empty(); }
};

struct Plan {
  std::string time_axis;                  // "time to train" or "iteration time"
  std::string cost_unit;                  // "GPU-hours" or "cost"
  std::vector<PlanRow> rows;              // ranked: feasible by preference, then the rest
  std::optional<std::size_t> recommended; // into rows
  std::string reason;                     // why the recommendation, or why there is none
};

// Ranks `results` (any order; ties break by point index, so the plan is deterministic).
Plan make_plan(std::vector<PointResult> results, const PlanSpec& spec);

} // namespace ddlsim::plan
