#include "ddlsim/runner/run_report.hpp"

#include "workload_reports.hpp"

namespace ddlsim::runner {

sim::CommonOptions common_options(const Scenario& scenario, const RunSettings& settings) {
  sim::CommonOptions options;
  options.seed = scenario.seed;
  options.record_steps = settings.trace;
  options.progress = settings.progress;
  return options;
}

RunReport run_scenario(const Scenario& scenario, const std::string& label,
                       const RunSettings& settings) {
  if (scenario.workload.type == "training") return training_report(scenario, label, settings);
  return collective_report(scenario, label, settings);
}

void write_trace(const RunReport& report, std::ostream& out) {
  std::vector<sim::TraceSection> sections;
  sections.reserve(report.trace.size());
  for (const TracePart& part : report.trace)
    sections.push_back({part.name, &part.steps, part.counter_names, part.counters});
  sim::write_chrome_trace(sections, out);
}

} // namespace ddlsim::runner
