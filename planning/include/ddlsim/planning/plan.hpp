// A plan: every point's time and cost, which goals it meets, the ranking, the time-vs-cost
// Pareto front and the recommendation with its reason.
//
// The time axis is the time to train when the workload gives epochs (train_seconds > 0), else
// one iteration (or one collective). The cost axis is that time priced per GPU-hour or per
// node-hour (one price, or one per node kind) plus the energy at its price per kWh when the
// scenario's plan gives prices, else GPU-hours, so a front exists either way. With power figures
// (per GPU and per node, or per kind) every row carries its energy.
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
  double energy_kwh = 0;          // when the plan gives power figures
  std::vector<std::string> unmet; // goals the point misses, each with its figures
  bool on_front = false;

  bool feasible() const { return point.ok() && unmet.empty(); }
};

struct Plan {
  std::string time_axis;                  // "time to train" or "iteration time"
  std::string cost_unit;                  // "GPU-hours" or "cost"
  bool has_energy = false;                // the plan gives power: rows carry their energy
  std::vector<PlanRow> rows;              // ranked: feasible by preference, then the rest
  std::optional<std::size_t> recommended; // into rows
  std::string reason;                     // why the recommendation, or why there is none
};

// The plan's price of an hour of the point (its GPUs or nodes, kind by kind; 0 with an energy
// price alone; its GPU count when the plan gives no price, so the cost axis is GPU-hours), and the
// energy it uses in `seconds` (kWh, 0 without power figures). A per-kind table without the
// point's kind throws InputError naming the table.
double hourly_price(const PlanSpec& spec, const PointMetrics& metrics);
double energy_kwh(const PlanSpec& spec, const PointMetrics& metrics, double seconds);

// Ranks `results` (any order; ties break by point index, so the plan is deterministic).
Plan make_plan(std::vector<PointResult> results, const PlanSpec& spec);

} // namespace ddlsim::plan
