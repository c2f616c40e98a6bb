// The analytic engine keeps its own packed program state (program_state.hpp) and a dependency-order
// evaluation for speed instead of the shared step rules (collectives/step_runner.hpp). Here both
// evaluations are checked against the shared rules step by step: a small executor built on
// StepRunner and MessageQueues replays the engine's step records, taking each step's end from the
// engine, and requires that every step starts exactly when the shared rules let it start (rule 1),
// that the engine ran every step of the schedule once, and that a send never completes before
// its matching receive (rules 2 and 3) -- for every generator of every op and for cross-channel
// waits.
#include "two_streams.hpp"
#include "uniform_star.hpp"

#include "ddlsim/collectives/algorithm.hpp"
#include "ddlsim/collectives/step_runner.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/sim/analytic_engine.hpp"

#include "generator_schedule.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <optional>
#include <queue>
#include <sstream>
#include <tuple>

using namespace ddlsim;
using namespace ddlsim::sim;

namespace {

// Replays an engine's step records on the shared rules. The records carry no step index: a
// program's records are taken in order of start (then end), each by the first step that starts
// at that instant with the same kind, peer and bytes.
class Replay {
public:
  Replay(const coll::Schedule& schedule, const std::vector<StepRecord>& records)
      : runner_(*this, schedule, 0, schedule.ranks()),
        messages_(schedule.ranks(), schedule.channels()), channels_(schedule.channels()) {
    records_.resize(runner_.program_count());
    for (const StepRecord& record : records)
      records_[std::size_t(record.rank * channels_ + record.channel)].push_back(record);
    for (auto& program : records_)
      std::stable_sort(program.begin(), program.end(), [](const auto& a, const auto& b) {
        return std::tie(a.start, a.end) < std::tie(b.start, b.end);
      });
    used_.resize(records_.size());
    for (std::size_t p = 0; p < records_.size(); ++p) used_[p].assign(records_[p].size(), 0);
    taken_.resize(records_.size());
  }

  // "" when the engine followed the rules; else the first few departures.
  std::string run() {
    runner_.restart();
    runner_.drain();
    while (!ends_.empty() && problems_.size() < 4) {
      now_ = std::get<0>(ends_.top());
      while (!ends_.empty() && std::get<0>(ends_.top()) == now_) {
        const auto [end, program, index] = ends_.top();
        ends_.pop();
        runner_.complete({program, index});
      }
      runner_.drain();
    }
    if (problems_.empty() && !runner_.finished())
      problem("the shared rules cannot finish the schedule with the engine's step times");
    for (std::size_t p = 0; p < used_.size() && problems_.empty(); ++p)
      if (std::count(used_[p].begin(), used_[p].end(), 0) > 0)
        problem("program " + std::to_string(p) + " has step records no step of the schedule took");
    std::string text;
    for (const std::string& p : problems_) text += p + "\n";
    return text;
  }

private:
  friend class coll::StepRunner<Replay>;
  struct Taken {
    Picoseconds start = 0, end = 0;
  };

  void start_step(coll::StepRef ref, const coll::Step& step) {
    const auto& program = runner_.program(ref.program);
    const std::string where = coll::step_place(program.rank, program.channel, ref.index, step);
    const std::uint64_t bytes = step.kind == coll::StepKind::compute ? 0 : step.bytes;
    const auto& records = records_[ref.program];
    auto& used = used_[ref.program];
    std::optional<std::size_t> found, same_kind;
    for (std::size_t i = 0; i < records.size() && !found; ++i) {
      if (used[i] || records[i].kind != step.kind || records[i].peer != step.peer ||
          records[i].bytes != bytes)
        continue;
      if (!same_kind) same_kind = i;
      if (records[i].start == now_) found = i;
    }
    if (!found) {
      problem(where + " may start at " + std::to_string(now_) + " ps by the shared rules; " +
              (same_kind
                   ? "the engine started it at " + std::to_string(records[*same_kind].start) + " ps"
                   : "the engine has no record of it"));
      return; // never completes: the replay stops short
    }
    used[*found] = 1;
    const StepRecord& record = records[*found];
    if (record.end < record.start) problem(where + " ends before it starts");
    auto& taken = taken_[ref.program];
    if (taken.size() <= ref.index) taken.resize(ref.index + 1);
    taken[ref.index] = {record.start, record.end};
    ends_.emplace(record.end, ref.program, ref.index);
    if (step.is_local()) return;
    const int rank = program.rank;
    const auto partner = step.is_send()
                             ? messages_.match_send(rank, step.peer, step.channel, ref)
                             : messages_.match_receive(step.peer, rank, step.channel, ref);
    if (!partner) return;
    const coll::StepRef send = step.is_send() ? ref : *partner;
    const coll::StepRef receive = step.is_send() ? *partner : ref;
    const Taken& s = taken_[send.program][send.index];
    const Taken& r = taken_[receive.program][receive.index];
    if (r.end < std::max(s.start, r.start))
      problem(where + ": its transfer ends before both sides started");
    if (s.end < r.end) problem(where + ": the send completes before its receive");
  }
  [[noreturn]] void reject_step(const std::string& message) { throw std::logic_error(message); }

  void problem(std::string what) { problems_.push_back(std::move(what)); }

  coll::StepRunner<Replay> runner_;
  coll::MessageQueues<coll::StepRef> messages_;
  int channels_ = 1;
  std::vector<std::vector<StepRecord>> records_; // per program, by start
  std::vector<std::vector<std::uint8_t>> used_;
  std::vector<std::vector<Taken>> taken_; // per program, per step index
  using End = std::tuple<Picoseconds, std::uint32_t, std::uint32_t>;
  std::priority_queue<End, std::vector<End>, std::greater<>> ends_;
  Picoseconds now_ = 0;
  std::vector<std::string> problems_;
};

// p GPUs on one switch, links whose latencies differ from rank to rank, so that transfers of
// one round do not all end at the same instant.
topo::Topology uneven_star(int p) {
  topo::Topology t;
  const topo::VertexId hub = t.add_vertex({topo::VertexKind::network_switch, "switch", -1, 0, 0});
  for (int r = 0; r < p; ++r) test::add_gpu_node(t, r, hub, 1e10, 300'000 + 1'000 * r);
  return t;
}

std::optional<coll::Schedule> make_schedule(coll::Op op, const coll::Algorithm& algorithm,
                                            int ranks, std::uint64_t bytes, int chunks,
                                            int channels) {
  coll::CollectiveCall call =
      test_support::generator_call(op, algorithm, ranks, bytes, chunks, channels);
  return test_support::schedule_with_needed_params(call);
}

// Both evaluations of `schedule` replayed on the shared rules; returns how many evaluations ran.
int check_both(const coll::Schedule& schedule, const std::string& what) {
  const topo::Topology topology = uneven_star(schedule.ranks());
  int evaluated = 0;
  for (bool dependency_order : {false, true}) {
    topo::Router router(topology);
    AnalyticOptions options;
    options.record_steps = true;
    options.per_step_overhead = 1'000;
    const std::optional<CollectiveTiming> timing =
        dependency_order ? simulate_dependency_order(topology, router, schedule, options)
                         : std::optional(simulate_analytic(topology, router, schedule, [&] {
                             AnalyticOptions events_only = options;
                             events_only.try_dependency_order = false;
                             return events_only;
                           }()));
    if (!timing) continue; // dependency order gave up (the other evaluation is checked)
    ++evaluated;
    INFO(what << (dependency_order ? " (dependency order)" : " (event driven)"));
    CHECK(timing->steps_recorded.size() == timing->steps);
    CHECK(Replay(schedule, timing->steps_recorded).run() == "");
  }
  return evaluated;
}

} // namespace

TEST_CASE("analytic vs shared step rules: every generator, both evaluations, step by step") {
  int evaluated = 0;
  for (coll::Op op :
       {coll::Op::all_reduce, coll::Op::reduce_scatter, coll::Op::all_gather, coll::Op::broadcast,
        coll::Op::reduce, coll::Op::all_to_all, coll::Op::send_recv})
    for (const coll::Algorithm* algorithm : coll::algorithms_for(op))
      for (int ranks : {2, 3, 4, 5, 8})
        for (int chunks : {1, 3})
          for (int channels : {1, 2}) {
            const std::uint64_t bytes = 4 * 1000 * std::uint64_t(ranks);
            const auto schedule = make_schedule(op, *algorithm, ranks, bytes, chunks, channels);
            // Switch steps need an NVLS switch, which this star lacks (and the replay has no
            // group rule): tests/sim/nvls_test.cpp times them.
            if (!schedule || coll::has_switch_steps(*schedule)) continue;
            std::ostringstream what;
            what << to_string(op) << ' ' << algorithm->name() << " p=" << ranks
                 << " chunks=" << chunks << " channels=" << channels;
            evaluated += check_both(*schedule, what.str());
          }
  CHECK(evaluated > 300);
}

TEST_CASE("analytic vs shared step rules: cross-channel waits") {
  for (bool send_waits : {false, true})
    for (std::uint64_t bytes : {std::uint64_t(0), std::uint64_t(1) << 20}) {
      const coll::Schedule schedule = test::two_streams_schedule(send_waits, bytes);
      CHECK(check_both(schedule, "two streams") >= 1);
    }
}

TEST_CASE("analytic vs shared step rules: the replay catches a step started off its time") {
  coll::CollectiveCall call = test::make_call(coll::Op::all_reduce, "ring", 4, 4 * 4000);
  const coll::Schedule schedule = coll::Schedule::make(call);
  const topo::Topology topology = uneven_star(4);
  topo::Router router(topology);
  AnalyticOptions options;
  options.record_steps = true;
  const CollectiveTiming timing = simulate_analytic(topology, router, schedule, options);
  REQUIRE(Replay(schedule, timing.steps_recorded).run() == "");
  for (std::size_t victim : {std::size_t(0), timing.steps_recorded.size() / 2}) {
    for (Picoseconds shift : {Picoseconds(1), Picoseconds(-1)}) {
      std::vector<StepRecord> records = timing.steps_recorded;
      StepRecord& record = records[victim];
      if (record.start + shift < 0) continue;
      record.start += shift;
      record.end += shift;
      INFO("record " << victim << " shifted by " << shift << " ps");
      CHECK_THAT(Replay(schedule, records).run(),
                 Catch::Contains("by the shared rules") || Catch::Contains("completes before"));
    }
  }
  std::vector<StepRecord> missing = timing.steps_recorded;
  missing.pop_back();
  CHECK_THAT(Replay(schedule, missing).run(), Catch::Contains("no record"));
}
