// A send_recv traffic workload's run report: per-flow completion times against the ideal.
#include "ddlsim/core/units.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "workload_reports.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace ddlsim::runner {
namespace {

// Nearest-rank percentile of sorted values: the smallest value with at least p% of them at or
// below it (p = 50 is the median, the lower middle value for an even count).
Picoseconds percentile(const std::vector<Picoseconds>& sorted, double p) {
  const auto n = static_cast<double>(sorted.size());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * n));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

// The time no engine can beat: every rank sends and receives its flows through its own links, so
// the busiest endpoint needs, for each of its flows, the flow's bytes over the slowest link of
// its path (the host link on a fat tree), added up over its flows, in and out apart.
double ideal_seconds(const std::vector<coll::Flow>& flows, int ranks,
                     const topo::Topology& topology, topo::Router& router, std::uint64_t seed) {
  std::vector<double> out(static_cast<std::size_t>(ranks), 0), in(out);
  for (const coll::Flow& f : flows) {
    double slowest = std::numeric_limits<double>::infinity();
    for (const topo::LinkId link : router.ecmp_path(seed, f.src, f.dst, 0))
      slowest = std::min(slowest, topology.link(link).bandwidth_bytes_per_second);
    const double seconds = static_cast<double>(f.bytes) / slowest;
    out[static_cast<std::size_t>(f.src)] += seconds;
    in[static_cast<std::size_t>(f.dst)] += seconds;
    if (router.cached_pairs() > 65536) router.clear_cache(); // an all_to_all_v matrix
  }
  double ideal = 0;
  for (std::size_t r = 0; r < out.size(); ++r) ideal = std::max({ideal, out[r], in[r]});
  return ideal;
}

std::string describe(const TrafficSpec& t, std::size_t flows) {
  if (t.pattern == "permutation")
    return "permutation (seed " + std::to_string(t.seed) + "), " + format_bytes(t.bytes) +
           " per flow";
  if (t.pattern == "incast")
    return "incast of " + std::to_string(flows) + " senders into rank " +
           std::to_string(t.receiver) + ", " + format_bytes(t.bytes) + " each";
  if (t.pattern == "all_to_all_v") return "all_to_all_v from " + t.matrix_file;
  return "flows";
}

} // namespace

RunReport traffic_report(const Scenario& scenario, const std::string& label,
                         const RunSettings& settings) {
  const CollectiveWorkload& workload = scenario.workload.collective;
  const TrafficSpec& traffic = *workload.traffic;
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  const std::string engine(sim::engine_name(scenario.engine));
  sim::CommonOptions options = common_options(scenario, settings);
  options.record_counters = settings.trace;
  const std::string what = "send_recv " + describe(traffic, traffic.flows.size());
  if (settings.begin) settings.begin(what, sim::progress_unit(scenario.engine), 0.0);
  sim::EngineResult result =
      sim::simulate(sim::Traffic{traffic.flows, workload.ranks, workload.dtype}, topology, router,
                    scenario.engine, options);
  const bool go_on = !settings.end || settings.end();
  RunReport report;
  if (!result.complete || !go_on) {
    report.incomplete = "while simulating the traffic; nothing is complete";
    report.table = "# " + label + ": " + what + " on the " + engine + " engine: incomplete\n";
    return report;
  }
  std::vector<Picoseconds> sorted = result.flow_times;
  std::sort(sorted.begin(), sorted.end());
  std::uint64_t total = 0;
  for (const coll::Flow& f : traffic.flows) total += f.bytes;
  const double ideal =
      ideal_seconds(traffic.flows, workload.ranks, topology, router, scenario.seed);
  const double min_us = ps_to_us(sorted.front()), median_us = ps_to_us(percentile(sorted, 50)),
               p99_us = ps_to_us(percentile(sorted, 99)), max_us = ps_to_us(sorted.back()),
               ideal_us = ideal * 1e6;
  std::ostringstream text;
  text << "# " << label << ": " << what << ", " << traffic.flows.size() << " flows on "
       << workload.ranks << " ranks, " << engine << " engine\n"
       << "#  flows        bytes     min_us  median_us     p99_us     max_us   ideal_us  "
          "max/ideal\n";
  char row[256];
  std::snprintf(row, sizeof row, "%8zu %12llu %10.2f %10.2f %10.2f %10.2f %10.2f %10.3f\n",
                traffic.flows.size(), static_cast<unsigned long long>(total), min_us, median_us,
                p99_us, max_us, ideal_us, ideal > 0 ? max_us / ideal_us : 0.0);
  text << row;
  if (!result.details.summary.empty())
    text << "# " << engine << " engine:\n" << result.details.summary;
  report.table = text.str();
  report.json = {{"scenario", label},
                 {"engine", engine},
                 {"op", "send_recv"},
                 {"pattern", traffic.pattern},
                 {"ranks", workload.ranks},
                 {"seed", scenario.seed},
                 {"flows", traffic.flows.size()},
                 {"bytes", total},
                 {"time_us", ps_to_us(result.time)},
                 {"ideal_us", ideal_us},
                 {"flow_completion_us",
                  {{"min", min_us}, {"median", median_us}, {"p99", p99_us}, {"max", max_us}}},
                 {"steps", result.steps},
                 {"transfers", result.transfers},
                 {"bytes_sent", result.bytes_sent}};
  if (!result.details.json.is_null()) report.json[engine] = std::move(result.details.json);
  if (settings.trace)
    report.trace.push_back({what, std::move(result.steps_recorded),
                            std::move(result.details.counter_names),
                            std::move(result.details.counters)});
  return report;
}

} // namespace ddlsim::runner
