// A job_trace workload's run report: per job queueing delay, run time, completion time and
// slowdown against running alone; per cluster makespan, GPU utilisation and the simulations the
// contention cache ran; the timeline as a Chrome/Perfetto trace (one track per job: waiting,
// then running, its iteration time changing as the mix around it changes; a counter of busy
// GPUs).
#include "ddlsim/core/units.hpp"
#include "ddlsim/jobs/shared_cluster.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "workload_reports.hpp"

#include <cstdio>
#include <sstream>
#include <vector>

namespace ddlsim::runner {
namespace {

std::string fixed(double value, int digits) {
  return format_fixed(value, digits);
}

Json chrome_trace(const jobs::SharedClusterResult& r) {
  Json events = Json::array();
  auto us = [](double s) { return s * 1e6; };
  events.push_back(
      {{"ph", "M"}, {"pid", 1}, {"name", "process_name"}, {"args", {{"name", "shared cluster"}}}});
  for (std::size_t j = 0; j < r.jobs.size(); ++j) {
    const jobs::JobOutcome& o = r.jobs[j];
    const int tid = int(j) + 1;
    events.push_back({{"ph", "M"},
                      {"pid", 1},
                      {"tid", tid},
                      {"name", "thread_name"},
                      {"args", {{"name", o.id + " (" + std::to_string(o.gpus) + " GPUs)"}}}});
    if (o.start_s > o.arrival_s)
      events.push_back({{"ph", "X"},
                        {"pid", 1},
                        {"tid", tid},
                        {"name", "waiting"},
                        {"ts", us(o.arrival_s)},
                        {"dur", us(o.queueing_s())}});
  }
  for (const jobs::RateSegment& s : r.segments)
    events.push_back({{"ph", "X"},
                      {"pid", 1},
                      {"tid", int(s.job) + 1},
                      {"name", r.jobs[s.job].workload},
                      {"ts", us(s.from_s)},
                      {"dur", us(s.to_s - s.from_s)},
                      {"args",
                       {{"iteration_ms", s.iteration_s * 1e3},
                        {"alone_iteration_ms", r.jobs[s.job].alone_iteration_s * 1e3}}}});
  for (const auto& [t, busy] : r.busy_gpus)
    events.push_back({{"ph", "C"},
                      {"pid", 1},
                      {"name", "busy GPUs"},
                      {"ts", us(t)},
                      {"args", {{"GPUs", busy}}}});
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

} // namespace

RunReport jobs_report(const Scenario& scenario, const std::string& label,
                      const RunSettings& settings) {
  const JobTraceWorkload& w = scenario.workload.job_trace;
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  if (settings.begin)
    settings.begin("job trace (" + std::to_string(w.jobs.size()) + " jobs)", "jobs ended", -1);
  jobs::SharedClusterOptions options;
  if (settings.progress)
    options.progress = [&](std::size_t ended, std::size_t, double now, std::size_t) {
      return settings.progress(static_cast<Picoseconds>(now * double(kPsPerSecond)), ended);
    };
  const jobs::SharedClusterResult r =
      jobs::simulate_shared_cluster(scenario, topology, router, options);
  const bool go_on = settings.end ? settings.end() : true;

  RunReport report;
  std::ostringstream out;
  out << "# " << label << ": " << w.jobs.size() << " jobs on " << r.cluster_gpus << " GPUs, queue "
      << w.queue << ", placement " << w.placement << ", engine "
      << sim::engine_name(scenario.engine) << "\n";
  out << "#  id            workload          gpus nodes leaves   arrival(s)  queued(s)     run(s)  "
         "completion(s)  iter(ms)  alone(ms)  slowdown\n";
  Json rows = Json::array();
  std::vector<std::size_t> listed; // the jobs that ended (all but where the run stopped first)
  for (std::size_t j = 0; j < r.jobs.size(); ++j)
    if (r.jobs[j].ended) listed.push_back(j);
  const std::size_t shown = listed.size() <= 60 ? listed.size() : 40;
  for (std::size_t k = 0; k < listed.size(); ++k) {
    const jobs::JobOutcome& o = r.jobs[listed[k]];
    if (k < shown) {
      char line[320];
      std::snprintf(line, sizeof line,
                    "   %-13s %-16s %5d %5d %6d %12s %10s %10s %14s %9s %10s %9s\n", o.id.c_str(),
                    o.workload.c_str(), o.gpus, o.nodes, o.leaves, fixed(o.arrival_s, 1).c_str(),
                    fixed(o.queueing_s(), 1).c_str(), fixed(o.run_s(), 1).c_str(),
                    fixed(o.completion_s(), 1).c_str(), fixed(o.mean_iteration_s * 1e3, 2).c_str(),
                    fixed(o.alone_iteration_s * 1e3, 2).c_str(), fixed(o.slowdown(), 3).c_str());
      out << line;
    } else if (k == shown) {
      out << "   ... " << listed.size() - shown << " more jobs in the --json report\n";
    }
    rows.push_back({{"id", o.id},
                    {"workload", o.workload},
                    {"gpus", o.gpus},
                    {"placement", o.placement},
                    {"nodes", o.nodes},
                    {"leaves", o.leaves},
                    {"arrival_s", o.arrival_s},
                    {"start_s", o.start_s},
                    {"end_s", o.end_s},
                    {"queueing_s", o.queueing_s()},
                    {"run_s", o.run_s()},
                    {"completion_s", o.completion_s()},
                    {"iterations", o.iterations},
                    {"iteration_s", o.mean_iteration_s},
                    {"alone_iteration_s", o.alone_iteration_s},
                    {"slowdown", o.slowdown()}});
  }
  out << "# makespan " << fixed(r.makespan_s, 1) << " s, GPU utilisation "
      << fixed(r.utilisation * 100, 1) << " %, mean queueing " << fixed(r.mean_queueing_s, 1)
      << " s, mean completion " << fixed(r.mean_completion_s, 1) << " s, mean slowdown "
      << fixed(r.mean_slowdown, 3) << "\n";
  out << "# " << r.simulations
      << " simulations (one per distinct set of co-running jobs sharing links or nodes), "
      << r.events << " events\n";
  Json busy = Json::array();
  for (const auto& [t, b] : r.busy_gpus) busy.push_back({{"time_s", t}, {"busy_gpus", b}});
  report.table = out.str();
  report.json = {{"scenario", label},
                 {"engine", std::string(sim::engine_name(scenario.engine))},
                 {"seed", scenario.seed},
                 {"workload", "job_trace"},
                 {"queue", w.queue},
                 {"placement", w.placement},
                 {"cluster_gpus", r.cluster_gpus},
                 {"makespan_s", r.makespan_s},
                 {"utilisation", r.utilisation},
                 {"mean_queueing_s", r.mean_queueing_s},
                 {"mean_completion_s", r.mean_completion_s},
                 {"mean_slowdown", r.mean_slowdown},
                 {"simulations", r.simulations},
                 {"events", r.events},
                 {"busy_gpus", busy},
                 {"jobs", rows}};
  if (settings.trace) report.timeline_trace = chrome_trace(r);
  if (!r.complete || !go_on) {
    report.incomplete = "after " + std::to_string(listed.size()) + " of " +
                        std::to_string(r.jobs.size()) + " jobs ended; the figures are of those";
  }
  return report;
}

} // namespace ddlsim::runner
