// An iterative workload's run report: each step's distinct sizes are simulated once (as a
// collective workload of those sizes, on the scenario's engine), and every iteration's time is
// its compute time plus its steps' times, one after another.
//
// Why one after another: the iterative solvers this describes (e.g. a parallel SVM's SMO
// iteration) need the reduced vector before they go on, so an iteration's collectives neither
// overlap its compute nor each other, and ranks compute alike (no load imbalance is modelled).
// So a collective's time inside the run is its time alone, and a size met in many iterations is
// simulated once: a run costs one simulation per distinct (step, size), not per iteration.
#include "ddlsim/core/sim_time.hpp"
#include "ddlsim/core/units.hpp"
#include "workload_reports.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace ddlsim::runner {
namespace {

// The rows printed: every iteration up to 40, else about 20 spread over the run (the first and
// the last included) plus every iteration whose steps differ from the one before in which steps
// run (a periodic reconstruction shows up).
std::vector<int> printed_iterations(const IterativeWorkload& w) {
  const int n = w.iterations;
  std::vector<int> rows;
  if (n <= 40) {
    for (int i = 0; i < n; ++i) rows.push_back(i);
    return rows;
  }
  const int stride = (n + 19) / 20;
  for (int i = 0; i < n; i += stride) rows.push_back(i);
  rows.push_back(n - 1);
  for (const IterativeWorkload::Step& step : w.steps) {
    int shown = 0;
    for (int i = 1; i < n && shown < 5; ++i)
      if ((step.bytes[std::size_t(i)] > 0) != (step.bytes[std::size_t(i - 1)] > 0)) {
        rows.push_back(step.bytes[std::size_t(i)] > 0 ? i : i - 1);
        ++shown;
      }
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

} // namespace

RunReport iterative_report(const Scenario& scenario, const std::string& label,
                           const RunSettings& settings) {
  const IterativeWorkload& w = scenario.workload.iterative;
  RunReport report;
  // Each step alone: a collective workload of its distinct sizes.
  std::vector<std::map<std::uint64_t, Picoseconds>> times(w.steps.size());
  std::size_t simulations = 0;
  for (std::size_t s = 0; s < w.steps.size(); ++s) {
    Scenario alone = scenario;
    alone.workload.type = "collective";
    alone.workload.collective = w.steps[s].collective;
    alone.sweep.clear();
    RunReport part = collective_report(alone, label + ", step " + w.steps[s].name, settings);
    for (TracePart& trace : part.trace) {
      trace.name = w.steps[s].name + ": " + trace.name;
      report.trace.push_back(std::move(trace));
    }
    if (!part.incomplete.empty()) {
      report.incomplete = "in step \"" + w.steps[s].name + "\", " + part.incomplete +
                          "; no iteration time is complete";
      report.json = nullptr;
      return report;
    }
    for (const Json& row : part.json.at("results")) {
      times[s][row.at("bytes").get<std::uint64_t>()] = row.at("time_ps").get<Picoseconds>();
      ++simulations;
    }
  }

  Json iterations = Json::array();
  std::vector<Picoseconds> totals(std::size_t(w.iterations), 0);
  std::vector<Picoseconds> step_totals(w.steps.size(), 0);
  Picoseconds compute_total = 0, total = 0;
  for (int i = 0; i < w.iterations; ++i) {
    const Picoseconds compute = checked_ps(w.compute_seconds[std::size_t(i)] * 1e12);
    Picoseconds t = compute;
    Json steps = Json::array();
    for (std::size_t s = 0; s < w.steps.size(); ++s) {
      const std::uint64_t bytes = w.steps[s].bytes[std::size_t(i)];
      const Picoseconds step_time = bytes > 0 ? times[s].at(bytes) : 0;
      t = checked_later(t, step_time);
      step_totals[s] = checked_later(step_totals[s], step_time);
      steps.push_back(
          {{"name", w.steps[s].name}, {"bytes", bytes}, {"time_us", ps_to_us(step_time)}});
    }
    totals[std::size_t(i)] = t;
    compute_total = checked_later(compute_total, compute);
    total = checked_later(total, t);
    iterations.push_back({{"iteration", i + 1},
                          {"compute_us", ps_to_us(compute)},
                          {"steps", std::move(steps)},
                          {"time_us", ps_to_us(t)}});
  }
  const Picoseconds communication = total - compute_total;

  std::ostringstream text;
  const std::string engine(sim::engine_name(scenario.engine));
  text << "# " << label << ": iterative workload, " << w.iterations << " iterations, "
       << w.steps.size() << " collective step" << (w.steps.size() == 1 ? "" : "s") << ", " << engine
       << " engine (" << simulations << " distinct collectives simulated)\n";
  text << "# iteration  compute(ms)";
  for (const IterativeWorkload::Step& step : w.steps) text << "  " << step.name << ": bytes, ms";
  text << "  iteration(ms)\n";
  for (int i : printed_iterations(w)) {
    char cells[64];
    std::snprintf(cells, sizeof cells, "%11d %12.3f", i + 1,
                  w.compute_seconds[std::size_t(i)] * 1e3);
    text << cells;
    for (std::size_t s = 0; s < w.steps.size(); ++s) {
      const std::uint64_t bytes = w.steps[s].bytes[std::size_t(i)];
      if (bytes == 0)
        text << "  -"; // the step does not run in this iteration
      else
        text << "  " << format_bytes(bytes) << ", "
             << format_fixed(ps_to_seconds(times[s].at(bytes)) * 1e3, 3);
    }
    std::snprintf(cells, sizeof cells, " %14.3f", ps_to_seconds(totals[std::size_t(i)]) * 1e3);
    text << cells << "\n";
  }
  text << "total " << format_fixed(ps_to_seconds(total), 6) << " s: compute "
       << format_fixed(ps_to_seconds(compute_total), 6) << " s, communication "
       << format_fixed(ps_to_seconds(communication), 6) << " s ("
       << format_fixed(total > 0 ? 100.0 * double(communication) / double(total) : 0.0, 1)
       << "%)\n";
  for (std::size_t s = 0; s < w.steps.size(); ++s)
    text << "  " << w.steps[s].name << ": " << format_fixed(ps_to_seconds(step_totals[s]), 6)
         << " s\n";
  text << "first iteration " << format_fixed(ps_to_seconds(totals.front()) * 1e3, 3) << " ms, last "
       << format_fixed(ps_to_seconds(totals.back()) * 1e3, 3) << " ms\n";
  report.table = text.str();

  Json step_json = Json::array();
  for (std::size_t s = 0; s < w.steps.size(); ++s)
    step_json.push_back({{"name", w.steps[s].name},
                         {"op", std::string(coll::to_string(w.steps[s].collective.op))},
                         {"algorithm", w.steps[s].collective.algorithm},
                         {"distinct_sizes", times[s].size()},
                         {"seconds", ps_to_seconds(step_totals[s])}});
  report.json = {{"scenario", label},
                 {"engine", engine},
                 {"seed", scenario.seed},
                 {"workload", "iterative"},
                 {"total_seconds", ps_to_seconds(total)},
                 {"compute_seconds", ps_to_seconds(compute_total)},
                 {"communication_seconds", ps_to_seconds(communication)},
                 {"simulations", simulations},
                 {"steps", std::move(step_json)},
                 {"iterations", std::move(iterations)}};
  return report;
}

} // namespace ddlsim::runner
