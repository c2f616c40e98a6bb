// `ddlsim plan SCENARIO`: what-if capacity planning. Runs every point of the scenario's sweep
// (plus --axis flags) over threads and MPI ranks, reuses cached results, and prints the ranked
// table, the time-vs-cost Pareto front and the recommendation.
#include "commands.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/planning/distributed.hpp"
#include "ddlsim/planning/plan_report.hpp"
#include "ddlsim/planning/point_runner.hpp"
#include "ddlsim/planning/result_cache.hpp"
#include "ddlsim/runner/llm_layout_search.hpp"
#include "ddlsim/runner/point_evaluator.hpp"
#include "ddlsim/scenario/layout_search.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/sim/engine_spec.hpp"
#include "number_checks.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>

namespace ddlsim::cli {
namespace {

struct PlanOptions {
  std::string scenario;
  std::vector<std::string> axes;
  unsigned threads = 0;
  std::string cache = ".ddlsim-cache";
  bool no_cache = false;
  std::string csv;
  std::string json;
  // The large-model layout search (an llm_training scenario).
  std::size_t top = 15;
  bool show_unfit = false;
  std::vector<int> micro_batches;
};

// "--axis /pointer=v1,v2": each value is JSON when it parses as JSON, else a string.
Json parse_axis(const std::string& flag) {
  const auto equals = flag.find('=');
  if (equals == std::string::npos || equals == 0 || flag[0] != '/')
    throw InputError("--axis " + flag,
                     "expected POINTER=V1,V2,... such as /topology/fabric/bandwidth_gbps=25,100");
  Json values = Json::array();
  std::string rest = flag.substr(equals + 1);
  std::size_t start = 0;
  while (start <= rest.size()) {
    const auto comma = rest.find(',', start);
    const std::string text = rest.substr(start, comma == std::string::npos ? comma : comma - start);
    if (text.empty()) throw InputError("--axis " + flag, "an empty value between commas");
    try {
      values.push_back(Json::parse(text));
    } catch (const Json::exception&) {
      values.push_back(text);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return {{"set", flag.substr(0, equals)}, {"values", values}};
}

Scenario load_with_axes(const PlanOptions& options) {
  Json json = parse_json_file(options.scenario, "a scenario");
  if (!options.axes.empty()) {
    if (!json.is_object()) return load_scenario_file(options.scenario); // reports the problem
    Json& sweep = json["sweep"];
    if (sweep.is_null()) sweep = Json::array();
    for (const std::string& axis : options.axes) sweep.push_back(parse_axis(axis));
  }
  const std::filesystem::path file(options.scenario);
  return load_scenario(json, file.string(), file.parent_path());
}

void write_file(const std::string& path, const std::function<void(std::ostream&)>& write) {
  std::ofstream out(path);
  if (!out) throw InputError(path, "cannot open the output file for writing");
  write(out);
  if (!out) throw InputError(path, "writing the output file failed (disk full?)");
}

// "plan: 37/120 points (12 cached), 8.1 s, ETA 18 s" on stderr when it is a terminal.
class PlanProgress {
public:
  explicit PlanProgress(bool enabled) : enabled_(enabled && isatty(STDERR_FILENO) == 1) {}
  void update(std::size_t done, std::size_t total, std::size_t cached) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    if (done < total && now - last_ < std::chrono::milliseconds(250)) return;
    last_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double eta = done > 0 ? elapsed * double(total - done) / double(done) : 0;
    std::fprintf(stderr, "\rplan: %zu/%zu points (%zu cached), %.1f s, ETA %.0f s\033[K", done,
                 total, cached, elapsed, eta);
    if (done == total) std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  }

private:
  bool enabled_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
};

// What the plan cache is keyed by: the version and a hash of this very binary (which embeds
// the presets and the model zoo), so a rebuilt ddlsim whose models changed never reuses results
// of the old one, even when the version string and the git describe are unchanged.
std::string build_identity() {
  std::uint64_t hash = 0xcbf29ce484222325ull; // FNV-1a
  std::ifstream self("/proc/self/exe", std::ios::binary);
  char buffer[1 << 16];
  std::size_t total = 0;
  while (self.read(buffer, sizeof buffer) || self.gcount() > 0) {
    for (std::streamsize i = 0; i < self.gcount(); ++i) {
      hash ^= static_cast<unsigned char>(buffer[i]);
      hash *= 0x100000001b3ull;
    }
    total += static_cast<std::size_t>(self.gcount());
  }
  if (total == 0)
    throw InputError("--cache", "cannot read this ddlsim binary to key the plan "
                                "cache by it; pass --no-cache");
  char text[40];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash));
  return std::string(DDLSIM_VERSION) + " build " + text;
}

// `ddlsim plan` on an llm_training scenario: the layout search (runner/llm_layout_search.hpp).
void run_layout_search(const PlanOptions& options, const Json& json) {
  if (!options.axes.empty())
    throw InputError("--axis", "the large-model layout search sets the layout itself; remove "
                               "--axis (or plan a training or collective scenario)");
  if (!options.csv.empty() || !options.json.empty())
    throw InputError(options.csv.empty() ? "--json" : "--csv",
                     "the large-model layout search prints a table only; remove the flag");
  const std::filesystem::path file(options.scenario);
  const Scenario scenario =
      load_scenario_for_layout_search(json, file.string(), file.parent_path());
  runner::LayoutSearchOptions search_options;
  if (!options.micro_batches.empty()) search_options.micro_batches = options.micro_batches;
  search_options.threads = options.threads;
  // The printed rows (and the runner-up the winner's reason compares with) are ranked exactly;
  // layouts that cannot reach them are not simulated.
  search_options.keep = std::max<std::size_t>(options.top, 2);
  const bool terminal = isatty(STDERR_FILENO) == 1;
  const auto start = std::chrono::steady_clock::now();
  auto last = start;
  search_options.progress = [&](std::size_t done, std::size_t total) {
    const auto now = std::chrono::steady_clock::now();
    // On a terminal one line rewritten 4 times a second; into a file or pipe a line every 10 s.
    if (done < total && now - last < std::chrono::milliseconds(terminal ? 250 : 10000)) return;
    last = now;
    if (!terminal) {
      if (done < total)
        std::fprintf(stderr, "plan: %zu/%zu layouts done, %.1f s\n", done, total,
                     std::chrono::duration<double>(now - start).count());
      return;
    }
    std::fprintf(stderr, "\rplan: %zu/%zu layouts done, %.1f s\033[K", done, total,
                 std::chrono::duration<double>(now - start).count());
    if (done == total) std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
  };
  const runner::LayoutSearch search = runner::search_layouts(scenario, search_options);
  std::cout << "# " << (scenario.name.empty() ? options.scenario : scenario.name) << "\n";
  runner::print_layout_search(search, scenario, options.top, options.show_unfit, std::cout);
  if (search.ranked.empty())
    throw InputError("plan", "no layout of this model fits in the cluster's GPU memory and "
                             "runs; add GPUs, lower global_batch or seq_len, or use a GPU with "
                             "more memory");
}

void run(const PlanOptions& options) {
  {
    const Json json =
        resolve_includes(parse_json_file(options.scenario, "a scenario"), options.scenario,
                         std::filesystem::path(options.scenario).parent_path());
    if (json.is_object() && json.contains("workload") && json["workload"].is_object() &&
        json["workload"].value("type", "") == "llm_training")
      return run_layout_search(options, json);
  }
  if (options.show_unfit || !options.micro_batches.empty())
    throw InputError(options.show_unfit ? "--show-unfit" : "--micro-batches",
                     "only for the layout search of an llm_training scenario; remove the flag");
  const Scenario scenario = load_with_axes(options);
  const plan::Distributed mpi;
  if (plan::Distributed::launched_by_mpi() && !plan::Distributed::built_with_mpi())
    std::cerr << "ddlsim plan: warning: started by an MPI launcher, but this ddlsim was built "
                 "without MPI: every process runs every point\n";
  const std::size_t count = sweep_point_count(scenario);
  std::vector<std::size_t> mine;
  for (std::size_t i = std::size_t(mpi.rank()); i < count; i += std::size_t(mpi.size()))
    mine.push_back(i);

  std::optional<plan::ResultCache> cache;
  if (!options.no_cache) cache.emplace(options.cache, build_identity());
  // A point that ran but could not be cached keeps its result; the first reason is reported.
  std::mutex cache_failure_mutex;
  std::string cache_failure;
  std::size_t cache_failures = 0;
  std::atomic<std::size_t> cached{0};
  PlanProgress progress(mpi.rank() == 0);
  const auto evaluate = [&](std::size_t index) {
    SweepPoint point = sweep_point(scenario, index);
    plan::PointResult result;
    result.index = index;
    result.settings = point.settings;
    if (cache) {
      if (auto hit = cache->find(point.scenario.resolved)) {
        result.metrics = *hit;
        result.from_cache = true;
        ++cached;
        return result;
      }
    }
    try {
      result.metrics = runner::evaluate_point(point.scenario);
    } catch (const std::exception& error) {
      result.error = error.what();
      return result;
    }
    if (cache) try {
        cache->store(point.scenario.resolved, result.metrics);
      } catch (const std::exception& error) {
        const std::lock_guard lock(cache_failure_mutex);
        if (cache_failures++ == 0) cache_failure = error.what();
      }
    return result;
  };
  // Forking from several threads at once is not safe, so points whose engine forks a child per
  // simulation run one at a time (as do sweeps over the engine, which may pick one that forks).
  const bool forks =
      sim::runs_in_child_process(scenario.engine) ||
      std::any_of(scenario.sweep.begin(), scenario.sweep.end(),
                  [](const SweepAxis& axis) { return axis.pointer.starts_with("/engine"); });
  const std::vector<plan::PointResult> results = plan::run_points(
      mine, evaluate, forks ? 1u : options.threads,
      [&](std::size_t done, std::size_t total) { progress.update(done, total, cached); });

  // Gather on rank 0 as JSON text; every rank's share is complete before any prints.
  Json shared = Json::array();
  for (const plan::PointResult& result : results) shared.push_back(plan::to_json(result));
  const std::vector<std::string> parts = mpi.gather(shared.dump());
  if (mpi.rank() != 0) return;
  std::vector<plan::PointResult> all;
  for (std::size_t r = 0; r < parts.size(); ++r)
    for (const Json& j : Json::parse(parts[r]))
      all.push_back(plan::point_result_from_json(j, "rank " + std::to_string(r) + " result"));

  if (cache_failures > 0)
    std::cerr << "ddlsim plan: warning: " << cache_failures
              << " point(s) ran but could not be cached (the first: " << cache_failure
              << "); their results are used but will be recomputed next time\n";
  const std::size_t failed = static_cast<std::size_t>(
      std::count_if(all.begin(), all.end(), [](const plan::PointResult& r) { return !r.ok(); }));
  const plan::Plan plan = plan::make_plan(std::move(all), scenario.plan);
  std::cout << "# " << (scenario.name.empty() ? options.scenario : scenario.name) << ": " << count
            << " points on " << mpi.size() << (mpi.size() == 1 ? " process" : " MPI ranks") << "\n";
  plan::print_plan(plan, std::cout);
  if (!options.csv.empty()) {
    write_file(options.csv, [&](std::ostream& out) { plan::write_csv(plan, out); });
    std::cout << "# wrote " << options.csv << "\n";
  }
  if (!options.json.empty()) {
    write_file(options.json, [&](std::ostream& out) {
      Json report = plan::to_json(plan);
      report["scenario"] = scenario.name.empty() ? options.scenario : scenario.name;
      out << report.dump(2) << "\n";
    });
    std::cout << "# wrote " << options.json << "\n";
  }
  // A plan with failed points is not a success, even when the others give a recommendation.
  if (failed > 0)
    throw InputError("plan", std::to_string(failed) + " of " + std::to_string(count) +
                                 " points failed (their \"failed:\" lines above say why); fix "
                                 "or remove those settings");
}

} // namespace

void add_plan_command(CLI::App& app) {
  auto options = std::make_shared<PlanOptions>();
  auto* cmd = app.add_subcommand(
      "plan", "What-if capacity planning: simulate every point of the scenario's sweep (and "
              "--axis flags), rank them by the scenario's plan goals and prices, and print the "
              "Pareto front of time vs cost and a recommendation. Under `mpirun -np K` the points "
              "are split over the ranks.");
  cmd->add_option("scenario", options->scenario, "Scenario JSON file")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--axis", options->axes,
                  "Add a sweep axis: POINTER=V1,V2,... e.g. /topology/fabric/bandwidth_gbps=25,100 "
                  "(repeatable)");
  cmd->add_option("--threads", options->threads, "Worker threads (default: one per core)")
      ->check(checks::range(1u, 1024u));
  cmd->add_option("--cache", options->cache,
                  "Directory of cached point results (default .ddlsim-cache)");
  cmd->add_flag("--no-cache", options->no_cache, "Neither read nor write cached results");
  cmd->add_option("--csv", options->csv, "Write the ranked points as CSV to FILE");
  cmd->add_option("--json", options->json, "Write the plan as JSON to FILE");
  cmd->add_option("--top", options->top,
                  "llm_training: rows of the ranked layout table to print (default 15)")
      ->check(checks::range(std::size_t{1}, std::size_t{100000}));
  cmd->add_flag("--show-unfit", options->show_unfit,
                "llm_training: also list the layouts that do not fit in memory, and by how much");
  cmd->add_option("--micro-batches", options->micro_batches,
                  "llm_training: micro-batch sizes to try (default 1,2,4)")
      ->delimiter(',')
      ->check(checks::range(1, 65536));
  cmd->callback([options] { run(*options); });
}

} // namespace ddlsim::cli
