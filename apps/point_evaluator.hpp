// Simulates one plan point (a scenario without a sweep) and returns what the planner ranks on.
#pragma once

#include "ddlsim/planning/point_result.hpp"
#include "ddlsim/scenario/scenario.hpp"

namespace ddlsim::cli {

// Collective workloads: the collective at its largest size. Throws InputError for a scenario
// the engines cannot run.
plan::PointMetrics evaluate_point(const Scenario& scenario);

} // namespace ddlsim::cli
