// The entries through the engine layer: `ddlsim run`'s report and `ddlsim plan`'s point
// evaluation as the runner library (apps/runner) makes them, for every workload and engine.
#include "engine_entry.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/runner/point_evaluator.hpp"
#include "ddlsim/runner/run_report.hpp"
#include "ddlsim/sim/engine_spec.hpp"

namespace ddlsim::python {

Json run_report(const Scenario& scenario, const std::string& label) {
  runner::RunReport report = runner::run_scenario(scenario, label);
  // Without a progress callback a run only stops early on an engine's own limit.
  if (!report.incomplete.empty()) throw InputError(label, "the run stopped " + report.incomplete);
  return std::move(report.json);
}

plan::PointMetrics evaluate_plan_point(const Scenario& scenario) {
  return runner::evaluate_point(scenario);
}

std::string engine_name(const Scenario& scenario) {
  return std::string(sim::engine_name(scenario.engine));
}

bool runs_in_child_process(const Scenario& scenario) {
  return sim::runs_in_child_process(scenario.engine);
}

} // namespace ddlsim::python
