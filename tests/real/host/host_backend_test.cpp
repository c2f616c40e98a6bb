// The host backend runs every generator's Schedule over TCP with real bytes and matches the
// reference executor bit for bit; faults end the run within the timeout with errors that name
// the rank and the step; timelines are consistent.
#include "ddlsim/collectives/dump.hpp"
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/real/host_backend.hpp"
#include "error_of.hpp"
#include "make_call.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <sstream>

using namespace ddlsim;
using namespace ddlsim::coll;
using ddlsim::real::HostFault;
using ddlsim::real::HostMode;
using ddlsim::real::HostOptions;
using ddlsim::real::HostRun;
using ddlsim::real::run_host;
using ddlsim::test_support::error_of;

namespace {

using ddlsim::test_support::make_valid_call;

// The schedule of `call`, or of the same call with a two-level factorisation (algorithms that
// need group sizes), or nothing when the algorithm cannot do this rank count.
std::optional<Schedule> schedule_for(CollectiveCall call) {
  try {
    return Schedule::make(call);
  } catch (const InputError&) {}
  if (call.ranks % 2 == 0 && call.ranks > 2) {
    call.params.group_sizes = {2, call.ranks / 2};
    try {
      return Schedule::make(call);
    } catch (const InputError&) {}
  }
  return std::nullopt;
}

HostOptions quick(HostMode mode = HostMode::threads) {
  HostOptions options;
  options.mode = mode;
  options.timeout = std::chrono::milliseconds(5000);
  options.iterations = 2;
  return options;
}

std::string describe(const CollectiveCall& call) {
  std::ostringstream out;
  out << to_string(call.op) << ' ' << call.algorithm << " p=" << call.ranks
      << " elements=" << call.elements() << ' ' << to_string(call.dtype) << ' '
      << to_string(call.reduction) << " chunks=" << call.params.chunks
      << " channels=" << call.params.channels;
  return out.str();
}

} // namespace

TEST_CASE("host: every generator of every op matches the reference at 1 to 8 ranks") {
  std::size_t runs = 0;
  for (const Algorithm* algorithm : all_algorithms()) {
    std::size_t accepted = 0;
    for (int p : {1, 2, 3, 4, 5, 8}) {
      const auto schedule =
          schedule_for(make_valid_call(algorithm->op(), std::string(algorithm->name()), p, 1000));
      if (!schedule) continue;
      ++accepted;
      if (has_switch_steps(*schedule)) { // in-switch reduction (NVLS) is rejected, not emulated
        CHECK_THAT(error_of([&] { run_host(*schedule, quick()); }),
                   Catch::Contains("cannot run in-switch reduction"));
        continue;
      }
      const HostRun run = run_host(*schedule, quick());
      INFO(describe(schedule->call()) << ": " << run.error);
      CHECK(run.ok);
      CHECK(run.checked);
      CHECK(run.wrong == 0);
      ++runs;
    }
    INFO(algorithm->name());
    CHECK(accepted > 0);
  }
  CHECK(runs > 100);
}

TEST_CASE("host: dtypes, reductions, chunks and channels match the reference bit for bit") {
  struct Case {
    Op op;
    const char* algorithm;
    int ranks;
    DataType dtype;
    Reduction reduction;
    int chunks, channels;
  };
  const Case cases[] = {
      {Op::all_reduce, "ring", 5, DataType::fp16, Reduction::avg, 3, 2},
      {Op::all_reduce, "ring", 4, DataType::bf16, Reduction::sum, 1, 2},
      {Op::all_reduce, "rabenseifner", 6, DataType::fp16, Reduction::sum, 1, 1},
      {Op::all_reduce, "recursive_doubling", 4, DataType::fp32, Reduction::adasum, 1, 1},
      {Op::all_reduce, "recursive_doubling", 8, DataType::bf16, Reduction::adasum, 1, 1},
      {Op::all_reduce, "double_binary_tree", 7, DataType::fp32, Reduction::avg, 3, 2},
      {Op::reduce_scatter, "ring", 3, DataType::bf16, Reduction::avg, 1, 1},
      {Op::reduce, "rabenseifner", 5, DataType::fp16, Reduction::sum, 1, 1},
      {Op::broadcast, "pipelined_chain", 4, DataType::fp32, Reduction::sum, 3, 2},
      {Op::all_reduce, "topk", 4, DataType::fp16, Reduction::sum, 1, 1},
      {Op::all_reduce, "coarse_sparse", 4, DataType::fp32, Reduction::sum, 1, 1},
  };
  for (const Case& c : cases) {
    CollectiveCall call = make_valid_call(c.op, c.algorithm, c.ranks, 4099, c.dtype, c.reduction);
    call.params.chunks = c.chunks;
    call.params.channels = c.channels;
    if (call.algorithm == "coarse_sparse") call.params.chunk_bytes = 256;
    const HostRun run = run_host(Schedule::make(call), quick());
    INFO(describe(call) << ": " << run.error);
    CHECK(run.ok);
    CHECK(run.wrong == 0);
  }
}

TEST_CASE("host: receives larger than the reduce window match the reference bit for bit") {
  // A recv_reduce of several hundred KiB is reduced through a staging window of 256 KiB, and TCP
  // splits it anywhere, partial elements included; adasum keeps the whole operand.
  struct Case {
    const char* algorithm;
    int ranks;
    DataType dtype;
    Reduction reduction;
    std::uint64_t elements;
  };
  const Case cases[] = {
      {"ring", 2, DataType::fp32, Reduction::sum, 400001},
      {"ring", 3, DataType::fp16, Reduction::avg, 900007},
      {"rabenseifner", 4, DataType::bf16, Reduction::sum, 700003},
      {"recursive_doubling", 2, DataType::fp32, Reduction::adasum, 200003},
  };
  for (const Case& c : cases) {
    const CollectiveCall call =
        make_valid_call(Op::all_reduce, c.algorithm, c.ranks, c.elements, c.dtype, c.reduction);
    const HostRun run = run_host(Schedule::make(call), quick(HostMode::processes));
    INFO(describe(call) << ": " << run.error);
    CHECK(run.ok);
    CHECK(run.checked);
    CHECK(run.wrong == 0);
  }
}

TEST_CASE("host: ranks as processes give the same checked results as threads") {
  for (const char* algorithm : {"ring", "rabenseifner", "hierarchical"}) {
    CollectiveCall call = make_valid_call(Op::all_reduce, algorithm, 4, 50000);
    call.node_of_rank = {0, 0, 1, 1};
    const Schedule schedule = Schedule::make(call);
    const HostRun run = run_host(schedule, quick(HostMode::processes));
    INFO(describe(call) << ": " << run.error);
    CHECK(run.ok);
    CHECK(run.checked);
    CHECK(run.wrong == 0);
    CHECK(run.seconds > 0);
    // Every rank sent what the schedule says: ring sends 2(p-1)/p of the buffer per rank.
    if (call.algorithm == "ring") CHECK(run.bytes_sent == 4 * 2 * 3 * call.bytes / 4);
  }
}

TEST_CASE("host: a schedule loaded from its JSON dump runs and checks") {
  const Schedule made = Schedule::make(make_valid_call(Op::all_gather, "bruck", 5, 1000));
  const Json dump = to_json(materialize(made));
  const Schedule loaded = Schedule::from_materialized(schedule_from_json(JsonValue(dump, "")));
  const HostRun run = run_host(loaded, quick());
  INFO(run.error);
  CHECK(run.ok);
  CHECK(run.checked);
}

TEST_CASE("host: above the check limit the run is reported unchecked, not wrong") {
  HostOptions options = quick();
  options.check_limit_bytes = 0;
  const HostRun run =
      run_host(Schedule::make(make_valid_call(Op::all_reduce, "ring", 3, 1000)), options);
  INFO(run.error);
  CHECK(run.ok);
  CHECK_FALSE(run.checked);
}

TEST_CASE("host: the timeline has every step of the last iteration, each ending after it starts") {
  const Schedule schedule = Schedule::make(make_valid_call(Op::all_reduce, "ring", 4, 4000));
  const HostRun run = run_host(schedule, quick());
  REQUIRE(run.ok);
  REQUIRE(run.ranks.size() == 4);
  for (const auto& rank : run.ranks) {
    CHECK(rank.timeline.size() == 2 * 2 * 3); // a send and a receive per step, 2(p-1) steps
    for (const auto& step : rank.timeline) {
      CHECK(step.start_ns >= 0);
      CHECK(step.end_ns >= step.start_ns);
    }
  }
  // Steps are recorded in program order: rank 0's first step is its send to rank 1.
  const auto& sender = run.ranks[0].timeline.front();
  REQUIRE(sender.kind == StepKind::send);
  CHECK(sender.peer == 1);
}

TEST_CASE("host: a rank that crashes ends the run with errors naming it, in both modes") {
  for (HostMode mode : {HostMode::processes, HostMode::threads}) {
    HostOptions options = quick(mode);
    options.timeout = std::chrono::milliseconds(1500);
    options.fault = {HostFault::Kind::crash, 2, 3};
    const HostRun run =
        run_host(Schedule::make(make_valid_call(Op::all_reduce, "ring", 4, 100000)), options);
    INFO(run.error);
    CHECK_FALSE(run.ok);
    CHECK_THAT(run.error, Catch::Contains("rank 2 ") &&
                              (Catch::Contains("died") || Catch::Contains("vanished")));
    // The survivors report what they were doing: their steps and the peer.
    CHECK_THAT(run.error, Catch::Contains("step") && Catch::Contains("rank 2"));
    bool partial = false;
    for (const auto& rank : run.ranks)
      if (rank.rank != 2 && !rank.error.empty()) partial = true;
    CHECK(partial);
  }
}

TEST_CASE("host: a rank that stalls makes its peers time out naming the waiting steps") {
  HostOptions options = quick(HostMode::processes);
  options.timeout = std::chrono::milliseconds(500);
  options.fault = {HostFault::Kind::stall, 1, 2};
  const HostRun run =
      run_host(Schedule::make(make_valid_call(Op::all_reduce, "ring", 3, 3000)), options);
  INFO(run.error);
  CHECK_FALSE(run.ok);
  CHECK_THAT(run.error, Catch::Contains("no progress for 500 ms") && Catch::Contains("step") &&
                            Catch::Contains("rank 1"));
  // A rank ddlsim had to stop is reported as stalled, not as a crash ("killed by signal 9").
  CHECK_THAT(run.error, !Catch::Contains("killed by signal"));
}

TEST_CASE("host: a bad place list is an input error") {
  HostOptions options = quick();
  options.places.resize(2);
  CHECK_THROWS_AS(run_host(Schedule::make(make_valid_call(Op::all_reduce, "ring", 3, 30)), options),
                  InputError);
}
