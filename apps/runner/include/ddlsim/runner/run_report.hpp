// `ddlsim run` without the command line: a loaded Scenario simulated on its engine, and the
// report the command prints (the table on stdout), writes with --json (the JSON object) and
// with --trace (a Chrome/Perfetto trace). The `ddlsim` command and language bindings call it.
//
// A collective workload gives one nccl-tests-style row per size (with the engine's summary
// lines under the table, and its figures in the JSON rows); a training workload gives per job
// and per GPU compute, communication, exposed and idle time, samples/s, scaling efficiency and
// time to train.
//
//   const Scenario scenario = load_scenario_file("scenarios/dgx-a100.json");
//   const runner::RunReport report = runner::run_scenario(scenario, scenario.name);
//   std::cout << report.table;
//   std::cout << report.json.dump(2);
#pragma once

#include "ddlsim/core/json_reader.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/sim/engine.hpp"
#include "ddlsim/sim/trace.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace ddlsim::runner {

struct RunSettings {
  bool trace = false; // keep what a trace needs (step records, the engine's counters)
  // A collective workload: compute each size's per-link load (sim/link_load.hpp) into
  // RunReport::links, and print the busiest links of the largest size under the table.
  bool links = false;
  // Called before each simulation with what it simulates (e.g. "all_reduce 64 MiB ring (3/14)"
  // or "training iteration"), what its progress counts ("steps" or "events") and the share of
  // the run's work done before it (the bytes of the sizes finished over all sizes' bytes; < 0
  // where unknown), for an ETA.
  std::function<void(const std::string& what, std::string_view unit, double work_done)> begin;
  // Called every so often during a simulation; returning false stops the run.
  std::function<bool(Picoseconds simulated, std::uint64_t done)> progress;
  // Called after each simulation; returning false stops the run there (e.g. a wall-time limit
  // passed after the engine last asked `progress`).
  std::function<bool()> end;
};

// One simulation's part of the trace: one trace process with a track per rank and channel.
struct TracePart {
  std::string name; // e.g. "all_reduce 64 MiB ring", "training iteration"
  std::vector<sim::StepRecord> steps;
  std::vector<std::string> counter_names; // e.g. the packet engine's switch queue depths
  std::vector<sim::TraceCounterPoint> counters;
  // A training iteration: per global rank, when each iteration of its job ended (for
  // --trace-level iterations); empty otherwise.
  std::vector<std::vector<Picoseconds>> iteration_ends{};
};

struct RunReport {
  std::string table;            // what `ddlsim run` prints before the files it writes
  Json json;                    // the --json report; null when nothing finished (see incomplete)
  std::vector<TracePart> trace; // with RunSettings::trace: one part per simulation that finished
  // With RunSettings::trace: per global rank, the GPU it runs on ("node1/gpu1, V100-SXM2-16GB"),
  // which names the trace's tracks.
  std::vector<std::string> rank_gpus;
  // With RunSettings::trace, a job_trace workload: its timeline as a whole Chrome trace (jobs
  // waiting and running over hours, not steps), which write_trace writes instead of `trace`.
  Json timeline_trace;
  // With RunSettings::links: {"sizes": [{"bytes", "time_us", "switch_bytes", "links": [{"src",
  // "dst", "class", "capacity_gbps", "bytes", "transfers", "busy_us", "load_us",
  // "utilisation"}, ...] by utilisation}, ...]} in size order (`ddlsim run --links FILE`).
  Json links;
  // Empty when the run finished; else where it stopped and what is complete, e.g. "while
  // simulating 64 MiB; the sizes above it are complete". `table` and `json` hold what finished.
  std::string incomplete;
  // A training workload: the simulated jobs, in the scenario's order (print_sweep_points reuses
  // them for the sweep point that is the scenario itself).
  std::vector<models::JobIteration> jobs;
};

// NCCL's tuner for a collective workload whose algorithm is "nccl" (the scenario's NCCL view of
// the cluster and its forced keys), else null: what sim::CommonOptions::nccl takes.
std::shared_ptr<const models::NcclTuner> nccl_tuner(const Scenario& scenario);

// Simulates the scenario's workload on its engine; `label` names the scenario in the report
// (its name, or its file). Throws InputError for what the engine cannot run.
RunReport run_scenario(const Scenario& scenario, const std::string& label,
                       const RunSettings& settings = {});

// The Chrome trace (open in https://ui.perfetto.dev) of a report made with RunSettings::trace,
// at `level` (a job_trace workload's timeline is the same at every level).
void write_trace(const RunReport& report, std::ostream& out,
                 sim::TraceLevel level = sim::TraceLevel::steps);

// Every point of a training scenario's sweep, one row each, in sweep order (the first axis
// fastest): what `ddlsim plan` ranks, as a plain table. `ddlsim run` prints it after the files
// it writes (a collective's report only notes that the sweep was not run). `as_run`, where not
// null, is run_scenario's report of this very scenario (no seed or algorithm override): a point
// whose JSON is the scenario's own without its sweep (often the first or the largest) takes its
// row from those jobs instead of simulating the same thing twice. The key is the one `ddlsim
// plan`'s cache uses (the point's resolved JSON), and a simulation is deterministic, so the row
// is the one the point's own simulation prints.
void print_sweep_points(const Scenario& scenario, std::ostream& out,
                        const RunReport* as_run = nullptr);

} // namespace ddlsim::runner
