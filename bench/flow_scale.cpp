// Times one all-reduce on a k=32 fat tree with the flow engine (SimGrid) and, next to it, the
// analytic engine, and prints wall seconds (SimGrid's startup and platform creation included),
// peak RSS and simulated time of each. The flow simulation runs in its own child process (see
// sim/flow), so its peak RSS is the child's own; the analytic figures are this process's.
// scripts/bench runs the table.
//
//   bench_flow_scale ALGORITHM RANKS [BYTES] [MODEL] [MAX_WALL_SECONDS] [STEPS_FILE]
//   e.g. bench_flow_scale hierarchical 16384 268435456 lv08 600
//
// MODEL is lv08 (default) or cm02, SimGrid's models with their defaults, or lv08-nocross /
// cm02-nocross, the same with network/crosstraffic off (no 5% reverse traffic for TCP acks),
// which shows what the reverse traffic costs the solver. With MAX_WALL_SECONDS (0: no limit) the
// flow run stops there and prints how far it got. With STEPS_FILE it writes every step of the flow
// run there, one line each (rank, channel, kind, peer, bytes, start and end in picoseconds),
// sorted, so that two builds of the engine can be compared step by step with cmp.
#include "bench_support.hpp"
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/sim/analytic_engine.hpp"
#include "ddlsim/sim/flow/flow_engine.hpp"
#include "ddlsim/topologies/builders.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

using namespace ddlsim;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One line per step, sorted (the engine records them in completion order).
void write_steps(std::vector<sim::StepRecord> steps, const char* path) {
  std::sort(steps.begin(), steps.end(), [](const sim::StepRecord& a, const sim::StepRecord& b) {
    return std::tie(a.rank, a.channel, a.start, a.end, a.kind, a.peer, a.bytes) <
           std::tie(b.rank, b.channel, b.start, b.end, b.kind, b.peer, b.bytes);
  });
  std::FILE* out = std::fopen(path, "w");
  if (!out) throw InputError("STEPS_FILE", std::string("cannot write ") + path);
  for (const sim::StepRecord& step : steps)
    std::fprintf(out, "%d %u %s %d %llu %lld %lld\n", step.rank, step.channel,
                 std::string(coll::to_string(step.kind)).c_str(), step.peer,
                 static_cast<unsigned long long>(step.bytes), static_cast<long long>(step.start),
                 static_cast<long long>(step.end));
  std::fclose(out);
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s ALGORITHM RANKS [BYTES] [lv08|cm02] [MAX_WALL_SECONDS]\n",
                 argv[0]);
    return 2;
  }
  const std::string algorithm = argv[1];
  const int ranks = std::atoi(argv[2]);
  const std::uint64_t bytes = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 256ull << 20;
  const std::string model = argc > 4 ? argv[4] : "lv08";
  const double max_wall = argc > 5 ? std::atof(argv[5]) : 0;
  const char* steps_file = argc > 6 ? argv[6] : nullptr;
  const bool nocross = model.ends_with("-nocross");
  const std::string base_model = nocross ? model.substr(0, 4) : model;
  if (ranks < 8 || ranks % 8 != 0 || (base_model != "lv08" && base_model != "cm02")) {
    std::fprintf(stderr, "RANKS must be a multiple of 8 and MODEL lv08, cm02, lv08-nocross or "
                         "cm02-nocross\n");
    return 2;
  }
  try {
    // The cluster of bench_analytic_scale.
    const topo::Topology topology = topo::build_topology(bench::scale_cluster(ranks));

    coll::CollectiveCall call;
    call.op = coll::Op::all_reduce;
    call.ranks = ranks;
    call.bytes = bytes;
    call.algorithm = algorithm;
    for (int r = 0; r < ranks; ++r) call.node_of_rank.push_back(r / 8);
    if (algorithm == "blueconnect" || algorithm == "torus2d")
      call.params.group_sizes = {8, ranks / 8};

    // Flow first, so that the child it forks does not inherit the analytic run's memory.
    sim::flow::FlowOptions options;
    options.model.network_model =
        base_model == "cm02" ? sim::flow::NetworkModel::cm02 : sim::flow::NetworkModel::lv08;
    if (nocross) options.model.crosstraffic = false;
    const auto flow_start = std::chrono::steady_clock::now();
    if (max_wall > 0)
      options.progress = [&](Picoseconds, std::uint64_t) {
        return seconds_since(flow_start) < max_wall;
      };
    options.record_steps = steps_file != nullptr;
    topo::Router flow_router(topology);
    const sim::CollectiveTiming flow =
        sim::flow::simulate_flow(topology, flow_router, coll::Schedule::make(call), options);
    const double flow_wall = seconds_since(flow_start);
    const double flow_rss = bench::peak_rss_mib(RUSAGE_CHILDREN);
    const double flow_cpu = bench::cpu_seconds(RUSAGE_CHILDREN);
    if (steps_file) write_steps(flow.steps_recorded, steps_file);

    const auto analytic_start = std::chrono::steady_clock::now();
    const double analytic_cpu_start = bench::cpu_seconds(RUSAGE_SELF);
    topo::Router router(topology);
    const sim::CollectiveTiming analytic = sim::simulate_analytic(
        topology, router, coll::Schedule::make(call), sim::AnalyticOptions{});
    const double analytic_wall = seconds_since(analytic_start);
    const double analytic_cpu = bench::cpu_seconds(RUSAGE_SELF) - analytic_cpu_start;

    std::printf(
        "%-13s ranks %6d  flow %s: steps %11llu  wall %7.2f s  cpu %7.2f s  peak RSS "
        "%7.1f MiB  simulated %8.3f ms (%lld ps)%s | analytic: wall %6.2f s  cpu %6.2f s  peak RSS "
        "%6.1f MiB  simulated %8.3f ms\n",
        algorithm.c_str(), ranks, model.c_str(), static_cast<unsigned long long>(flow.steps),
        flow_wall, flow_cpu, flow_rss, ps_to_seconds(flow.time) * 1e3,
        static_cast<long long>(flow.time), flow.complete ? "" : " (stopped: time reached so far)",
        analytic_wall, analytic_cpu, bench::peak_rss_mib(RUSAGE_SELF),
        ps_to_seconds(analytic.time) * 1e3);
  } catch (const InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
