// What the Python module runs a scenario with: the library entries behind `ddlsim run` and the
// evaluation of one `ddlsim plan` point. Kept apart from the bindings so the bindings do not
// depend on where these entries live.
#pragma once

#include "ddlsim/core/json_reader.hpp"
#include "ddlsim/planning/point_result.hpp"
#include "ddlsim/scenario/scenario.hpp"

#include <string>

namespace ddlsim::python {

// The report `ddlsim run SCENARIO --json FILE` writes; `label` names the scenario in it.
// Throws InputError for what the engines cannot run, or when the run stops before its end.
Json run_report(const Scenario& scenario, const std::string& label);

// One plan point (a scenario without a sweep), as `ddlsim plan` evaluates it.
plan::PointMetrics evaluate_plan_point(const Scenario& scenario);

// The name of the scenario's engine ("analytic", "flow", "packet").
std::string engine_name(const Scenario& scenario);

// Whether its engine forks a child process per simulation (points then run one at a time).
bool runs_in_child_process(const Scenario& scenario);

} // namespace ddlsim::python
