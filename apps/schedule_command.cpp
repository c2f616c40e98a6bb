// `ddlsim schedule`: what an algorithm does, step by step. Lists the generators, dumps the
// Schedule of one call as text (for people) or JSON (for tools and the real backends), and can
// prove it correct with the reference executor.
#include "call_flags.hpp"
#include "commands.hpp"
#include "ddlsim/collectives/dump.hpp"
#include "ddlsim/collectives/reference.hpp"
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/suggest.hpp"
#include "ddlsim/core/units.hpp"
#include "number_checks.hpp"

#include <fstream>
#include <iostream>

namespace ddlsim::cli {
namespace {

struct ScheduleOptions {
  bool list = false;
  std::string op = "all_reduce";
  std::string algorithm = "ring";
  int ranks = 4;
  std::string bytes = "1KiB";
  std::string dtype = "fp32";
  std::string reduction = "sum";
  int root = 0;
  coll::AlgorithmParams params;
  std::vector<int> nodes; // ranks per node, for hierarchical algorithms
  std::string json;
  bool dump = false;
  bool check = false;
  // Bounds on the work one command does (issue "hostile input"): a dump of 10^12 steps used to
  // stream for hours and then run out of memory.
  std::uint64_t max_steps = 2'000'000;
  std::string check_limit = "1GiB";
};

// Refuses a schedule of more than o.max_steps steps, counted by streaming (nothing is kept).
void check_step_count(const coll::Schedule& schedule, const ScheduleOptions& o) {
  std::uint64_t steps = 0;
  for (int r = 0; r < schedule.ranks(); ++r)
    for (int c = 0; c < schedule.channels(); ++c) {
      coll::StepStream stream = schedule.program(r, c);
      while (stream.next() != nullptr)
        if (++steps > o.max_steps)
          throw InputError("--max-steps",
                           "the schedule has more than " + std::to_string(o.max_steps) +
                               " steps (rank " + std::to_string(r) + " of " +
                               std::to_string(schedule.ranks()) +
                               " reached it); choose fewer ranks or chunks, or raise --max-steps");
    }
}

coll::CollectiveCall make_call(const ScheduleOptions& o) {
  coll::CollectiveCall call;
  set_call_names(call, o.op, o.dtype, o.reduction);
  call.bytes = parse_nccl_tests_size_flag("--bytes", o.bytes);
  call.ranks = o.ranks;
  call.root = o.root;
  call.algorithm = o.algorithm;
  call.params = o.params;
  if (!o.nodes.empty()) {
    for (std::size_t node = 0; node < o.nodes.size(); ++node)
      for (int i = 0; i < o.nodes[node]; ++i) call.node_of_rank.push_back(static_cast<int>(node));
    if (static_cast<int>(call.node_of_rank.size()) != call.ranks)
      throw InputError("--nodes", "the ranks per node add up to " +
                                      std::to_string(call.node_of_rank.size()) + ", not --ranks " +
                                      std::to_string(call.ranks));
  }
  return call;
}

void list_algorithms() {
  for (const coll::Algorithm* algorithm : coll::all_algorithms())
    std::cout << coll::to_string(algorithm->op()) << " " << algorithm->name() << ": "
              << algorithm->summary() << "\n";
}

void run(const ScheduleOptions& o) {
  if (o.list) return list_algorithms();
  const coll::Schedule schedule = coll::Schedule::make(make_call(o));
  check_step_count(schedule, o);
  if (o.check) {
    const std::uint64_t limit = parse_size_flag("--check-limit", o.check_limit);
    const std::uint64_t data = schedule.call().bytes * std::uint64_t(schedule.ranks());
    if (schedule.call().bytes > 0 &&
        data / schedule.call().bytes != std::uint64_t(schedule.ranks()))
      throw InputError("--check", "ranks x size overflows 64 bits; choose a smaller call");
    if (data > limit)
      throw InputError("--check",
                       "the reference executor would hold ranks x size = " + format_bytes(data) +
                           " of buffers, above --check-limit " + format_bytes(limit) +
                           "; raise --check-limit or check a "
                           "smaller call");
  }
  const coll::MaterializedSchedule programs = coll::materialize(schedule);
  if (o.dump || o.json.empty()) coll::write_text(programs, std::cout);
  if (!o.json.empty()) {
    std::ofstream out(o.json);
    if (!out) throw InputError(o.json, "cannot open the --json file for writing");
    out << coll::to_json(programs).dump(1) << "\n";
    std::cout << "# wrote " << o.json << "\n";
  }
  if (o.check) {
    const coll::ReferenceResult result = coll::run_reference(schedule);
    std::cout << "# reference executor: " << (result.ok ? "correct" : "WRONG: " + result.error)
              << " (" << result.steps_executed << " steps, " << result.bytes_sent
              << " bytes sent)\n";
    if (!result.ok) throw InputError("schedule", "the reference executor found the schedule wrong");
  }
}

} // namespace

void add_schedule_command(CLI::App& app) {
  auto o = std::make_shared<ScheduleOptions>();
  auto* cmd = app.add_subcommand(
      "schedule", "Show the Schedule an algorithm generates for one call: every rank's steps "
                  "(text), or the JSON dump the real backends load");
  cmd->add_flag("--list", o->list, "List every algorithm with its cost and source, and exit");
  cmd->add_option(
         "--op", o->op,
         "all_reduce, reduce_scatter, all_gather, broadcast, reduce, all_to_all or send_recv")
      ->capture_default_str();
  cmd->add_option("--algo,--algorithm", o->algorithm, "Generator name (see --list)")
      ->capture_default_str();
  cmd->add_option("--ranks", o->ranks, "Number of ranks")
      ->check(checks::range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--bytes", o->bytes, "Size, nccl-tests meaning (e.g. 1KiB)")
      ->capture_default_str();
  cmd->add_option("--dtype", o->dtype, "fp32, fp16 or bf16")->capture_default_str();
  cmd->add_option("--reduction", o->reduction, "sum, avg or adasum")->capture_default_str();
  cmd->add_option("--root", o->root, "Root rank (broadcast, reduce)")->capture_default_str();
  cmd->add_option("--chunks", o->params.chunks, "Pipeline chunks")
      ->check(checks::range(1, 1 << 16));
  cmd->add_option("--channels", o->params.channels, "Parallel channels")
      ->check(checks::range(1, 256));
  cmd->add_option("--group-sizes", o->params.group_sizes,
                  "Hierarchy, innermost first (e.g. 4 2 24)")
      ->expected(1, 8);
  cmd->add_option("--servers", o->params.servers, "Parameter servers");
  cmd->add_flag("--dedicated-servers", o->params.dedicated_servers, "Servers are extra ranks");
  cmd->add_option("--density", o->params.density, "Top-k density")->check(checks::range(1e-9, 1.0));
  cmd->add_option("--nodes", o->nodes, "Ranks per node, e.g. 4 4 (hierarchical algorithms)");
  cmd->add_flag("--dump", o->dump, "Print the text dump (the default unless --json is given)");
  cmd->add_option("--json", o->json, "Write the JSON dump to FILE");
  auto* check = cmd->add_flag("--check", o->check,
                              "Run the reference executor and say whether the result is right");
  cmd->add_option("--max-steps", o->max_steps, "Refuse schedules with more steps than this")
      ->check(checks::range(1, 1e12))
      ->capture_default_str();
  cmd->add_option("--check-limit", o->check_limit,
                  "--check only while ranks x size is at most this (the reference executor "
                  "holds every rank's buffers)")
      ->capture_default_str()
      ->needs(check); // without --check it limits nothing: refused, not silently ignored
  cmd->callback([o] { run(*o); });
}

} // namespace ddlsim::cli
