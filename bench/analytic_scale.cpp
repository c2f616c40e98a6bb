// Generates and analytically evaluates one all-reduce on a k=32 fat tree and prints ranks, steps,
// steps per second, wall seconds, peak RSS and the simulated time (also in exact picoseconds, to
// check that a speed change left it unchanged). One configuration per process so that peak RSS
// is that configuration's own; scripts/bench runs the whole table. It also names the evaluation
// that produced the timing (dependency order, or events); `events` forces the event-driven one.
//
//   bench_analytic_scale ALGORITHM RANKS [BYTES [events]]     e.g. bench_analytic_scale ring 4096
#include "bench_support.hpp"
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/sim/analytic_engine.hpp"
#include "ddlsim/topologies/builders.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace ddlsim;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s ALGORITHM RANKS [BYTES [events]]\n", argv[0]);
    return 2;
  }
  const std::string algorithm = argv[1];
  const int ranks = std::atoi(argv[2]);
  const std::uint64_t bytes = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 256ull << 20;
  sim::AnalyticOptions options;
  options.try_dependency_order = !(argc > 4 && std::string(argv[4]) == "events");
  if (ranks < 8 || ranks % 8 != 0) {
    std::fprintf(stderr, "RANKS must be a multiple of 8\n");
    return 2;
  }
  try {
    const auto start = std::chrono::steady_clock::now();
    const topo::Topology topology = topo::build_topology(bench::scale_cluster(ranks));
    topo::Router router(topology);
    const auto built = std::chrono::steady_clock::now();

    coll::CollectiveCall call;
    call.op = coll::Op::all_reduce;
    call.ranks = ranks;
    call.bytes = bytes;
    call.algorithm = algorithm;
    for (int r = 0; r < ranks; ++r) call.node_of_rank.push_back(r / 8);
    if (algorithm == "blueconnect" || algorithm == "torus2d")
      call.params.group_sizes = {8, ranks / 8};
    const sim::CollectiveTiming timing =
        sim::simulate_analytic(topology, router, coll::Schedule::make(call), options);
    const auto done = std::chrono::steady_clock::now();

    const double wall = std::chrono::duration<double>(done - start).count();
    const double simulate = std::chrono::duration<double>(done - built).count();
    std::printf("%-14s ranks %6d  steps %12llu  steps/s %10.3g  build %6.2f s  simulate %7.2f s  "
                "wall %7.2f s  peak RSS %7.1f MiB  simulated %.3f ms (%lld ps)  %s\n",
                algorithm.c_str(), ranks, static_cast<unsigned long long>(timing.steps),
                static_cast<double>(timing.steps) / simulate,
                std::chrono::duration<double>(built - start).count(), simulate, wall,
                bench::peak_rss_mib(), ps_to_seconds(timing.time) * 1e3,
                static_cast<long long>(timing.time),
                timing.evaluated_in_dependency_order ? "dependency order" : "events");
  } catch (const InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
