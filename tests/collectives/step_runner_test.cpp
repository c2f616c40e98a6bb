// The shared step rules (step_runner.hpp) on their own: StepRunner starts exactly the steps rule 1
// allows and nothing else, MessageQueues pairs the k-th send with the k-th receive per (sender,
// receiver, channel), ProgramCursor remembers completions after it forgets its done prefix, and a
// malformed step is refused naming its place.
#include "helpers.hpp"

#include "ddlsim/collectives/step_runner.hpp"

#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

using namespace ddlsim;
using namespace ddlsim::coll;
using namespace ddlsim::coll::test;
using Catch::Matchers::Contains;

namespace {

// A driver that only records what starts; the test completes steps by hand.
struct Recorder {
  using Start = std::tuple<int, int, std::uint32_t, StepKind>; // rank, channel, index, kind
  StepRunner<Recorder>* runner = nullptr;
  std::vector<Start> started;
  std::vector<StepRef> refs;

  void start_step(StepRef ref, const Step& step) {
    const auto& program = runner->program(ref.program);
    started.emplace_back(program.rank, program.channel, ref.index, step.kind);
    refs.push_back(ref);
  }
  [[noreturn]] void reject_step(const std::string& message) { throw std::runtime_error(message); }
  // Takes what started since the last call.
  std::vector<Start> take() { return std::exchange(started, {}); }
};

Step on_channel(Step step, std::uint16_t channel, std::uint16_t wait_channel = kNoWait,
                std::uint32_t wait_step = 0) {
  step.channel = channel;
  step.wait_channel = wait_channel;
  step.wait_step = wait_step;
  return step;
}

Step compute(double picoseconds) {
  Step step;
  step.kind = StepKind::compute;
  step.param = picoseconds;
  return step;
}

MaterializedSchedule two_ranks(int channels) {
  MaterializedSchedule m;
  m.call = make_call(Op::send_recv, "hand_made", 2, 4); // 16 B
  m.call.root = 1;
  m.algorithm = "hand_made";
  m.ranks = 2;
  m.channels = channels;
  m.scratch_bytes = {32, 32};
  m.programs.assign(2, std::vector<std::vector<Step>>(std::size_t(channels)));
  return m;
}

// A program from a list of steps; throws instead of yielding step `throw_at`.
StepStream steps_of(std::vector<Step> steps, int throw_at = -1) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (int(i) == throw_at) throw std::runtime_error("generator failed");
    co_yield steps[i];
  }
}

// Two ranks of one channel whose programs come from `program` (loaded schedules are validated
// when loaded: a composite source brings malformed steps to the runner).
struct HandSource : ProgramSource {
  std::function<StepStream(int rank)> program_of;
  std::string_view name() const override { return "hand"; }
  int ranks() const override { return 2; }
  int channels() const override { return 1; }
  std::uint64_t buffer_bytes(int, Buffer buffer) const override {
    return buffer == Buffer::scratch ? 0 : 16;
  }
  StepStream program(int rank, int) const override { return program_of(rank); }
};

Schedule hand_schedule(std::function<StepStream(int rank)> program_of) {
  auto source = std::make_shared<HandSource>();
  source->program_of = std::move(program_of);
  CollectiveCall call = make_call(Op::send_recv, "hand_made", 2, 4);
  call.root = 1;
  return Schedule::composite(call, source);
}

const BufferRange kIn{Buffer::input, 0, 16}, kOut{Buffer::output, 0, 16},
    kScratch{Buffer::scratch, 0, 16}, kScratch2{Buffer::scratch, 16, 16};

} // namespace

TEST_CASE("step runner: a step starts once the previous one started and its deps completed") {
  MaterializedSchedule m = two_ranks(1);
  // Rank 0: two sends with no deps (both start at once: in-order issue does not wait for
  // completion), then a copy that needs the second send's completion.
  m.programs[0][0] = {step_of(StepKind::send, 1, kIn, {}, 16),
                      step_of(StepKind::send, 1, kIn, {}, 16),
                      with_dep(step_of(StepKind::copy, -1, kIn, kScratch, 16), 1)};
  m.programs[1][0] = {step_of(StepKind::recv, 0, {}, kScratch, 16),
                      step_of(StepKind::recv, 0, {}, kScratch2, 16),
                      with_dep(with_dep(step_of(StepKind::copy, -1, kScratch, kOut, 16), 0), 1)};
  const Schedule schedule = Schedule::from_materialized(m);
  Recorder recorder;
  StepRunner<Recorder> runner(recorder, schedule, 0, 2);
  recorder.runner = &runner;
  runner.restart();
  runner.drain();
  using S = Recorder::Start;
  CHECK(recorder.take() == std::vector<S>{{0, 0, 0, StepKind::send},
                                          {0, 0, 1, StepKind::send},
                                          {1, 0, 0, StepKind::recv},
                                          {1, 0, 1, StepKind::recv}});
  CHECK(runner.blockers(0) == "steps 1");
  CHECK(runner.awaited({0, 1}));
  CHECK_FALSE(runner.awaited({0, 0})); // rank 0's copy needs only the second send
  CHECK(runner.describe_pending(1) ==
        "rank 1 ch 0 step 2 (copy  scratch[0,16) -> output[0,16)  16 B  deps 0,1) waits for "
        "steps 0,1");
  runner.complete({0, 0}); // the first send: the copy still waits for the second
  runner.complete({1, 0});
  runner.drain();
  CHECK(recorder.take().empty());
  CHECK(runner.blockers(1) == "steps 1");
  runner.complete({0, 1});
  runner.complete({1, 1});
  runner.drain();
  CHECK(recorder.take() == std::vector<S>{{0, 0, 2, StepKind::copy}, {1, 0, 2, StepKind::copy}});
  CHECK_FALSE(runner.finished());
  runner.complete({0, 2});
  runner.complete({1, 2});
  runner.drain();
  CHECK(runner.finished());
  CHECK(runner.steps_started() == 6);
}

TEST_CASE("step runner: a cross-channel wait holds a step until that step of the rank completed") {
  MaterializedSchedule m = two_ranks(2);
  // Channel 0 computes; channel 1's send waits for it. Rank 1 computes after its receive.
  m.programs[0][0] = {compute(1e6)};
  m.programs[0][1] = {on_channel(step_of(StepKind::send, 1, kIn, {}, 16), 1, 0, 0)};
  m.programs[1][0] = {on_channel(compute(2e6), 0, 1, 0)};
  m.programs[1][1] = {on_channel(step_of(StepKind::recv, 0, {}, kOut, 16), 1)};
  const Schedule schedule = Schedule::from_materialized(m);
  Recorder recorder;
  StepRunner<Recorder> runner(recorder, schedule, 0, 2);
  recorder.runner = &runner;
  runner.restart();
  runner.drain();
  using S = Recorder::Start;
  CHECK(recorder.take() == std::vector<S>{{0, 0, 0, StepKind::compute}, {1, 1, 0, StepKind::recv}});
  CHECK(runner.blockers(runner.program_id(0, 1)) == "channel 0 step 0");
  CHECK(runner.awaited({runner.program_id(0, 0), 0}));
  CHECK_FALSE(runner.awaited({runner.program_id(1, 1), 1}));
  CHECK(runner.blockers(runner.program_id(1, 0)) == "channel 1 step 0");
  runner.complete({runner.program_id(0, 0), 0});
  runner.drain();
  CHECK(recorder.take() == std::vector<S>{{0, 1, 0, StepKind::send}});
  runner.complete({runner.program_id(0, 1), 0});
  runner.complete({runner.program_id(1, 1), 0});
  runner.drain();
  CHECK(recorder.take() == std::vector<S>{{1, 0, 0, StepKind::compute}});
  runner.complete({runner.program_id(1, 0), 0});
  runner.drain();
  CHECK(runner.finished());
}

TEST_CASE("step runner: runs a subset of ranks, numbered from the first") {
  MaterializedSchedule m = two_ranks(2);
  m.programs[1][0] = {compute(5)};
  m.programs[1][1] = {on_channel(compute(7), 1, 0, 0)};
  const Schedule schedule = Schedule::from_materialized(m);
  Recorder recorder;
  StepRunner<Recorder> runner(recorder, schedule, 1, 1);
  recorder.runner = &runner;
  REQUIRE(runner.program_count() == 2);
  CHECK(runner.program_id(1, 1) == 1);
  runner.restart();
  runner.drain();
  CHECK(recorder.take() == std::vector<Recorder::Start>{{1, 0, 0, StepKind::compute}});
  runner.complete({0, 0});
  runner.drain();
  CHECK(recorder.take() == std::vector<Recorder::Start>{{1, 1, 0, StepKind::compute}});
}

TEST_CASE("step runner: a malformed step is refused naming its place") {
  // Rank 1 waits for channel 3 of a one-channel schedule.
  const Schedule bad = hand_schedule([](int rank) {
    return steps_of({rank == 1 ? on_channel(compute(1), 0, 3, 0) : compute(1)});
  });
  Recorder recorder;
  StepRunner<Recorder> runner(recorder, bad, 0, 2);
  recorder.runner = &runner;
  runner.restart();
  CHECK_THROWS_WITH(runner.drain(),
                    Contains("rank 1 ch 0 step 0 (compute 1 ps") &&
                        Contains("waits for channel 3 but the schedule has 1 channels"));
}

namespace {
// A driver that hears of a failing generator.
struct HearsFailures {
  std::string heard;
  void start_step(StepRef, const Step&) {}
  [[noreturn]] void reject_step(const std::string& message) { throw std::runtime_error(message); }
  void stream_failed(int rank, int channel, const std::exception& error) {
    heard = std::to_string(rank) + "/" + std::to_string(channel) + ": " + error.what();
  }
};
} // namespace

TEST_CASE("step runner: a failing generator reaches the driver's hook, then the caller") {
  const Schedule failing = hand_schedule([](int rank) {
    return steps_of({compute(1), compute(2)}, rank == 1 ? 1 : -1);
  });
  HearsFailures driver;
  StepRunner<HearsFailures> runner(driver, failing, 0, 2);
  runner.restart();
  CHECK_THROWS_WITH(runner.drain(), "generator failed");
  CHECK(driver.heard == "1/0: generator failed");
}

TEST_CASE("message queues: the k-th send meets the k-th receive of its sender, receiver and "
          "channel") {
  MessageQueues<int> queues(3, 2);
  CHECK(queues.empty());
  CHECK_FALSE(queues.match_send(0, 1, 0, 10));
  CHECK_FALSE(queues.match_send(0, 1, 0, 11));
  CHECK_FALSE(queues.match_send(0, 1, 1, 12));    // another channel
  CHECK_FALSE(queues.match_receive(2, 1, 0, 13)); // another sender
  CHECK(queues.match_receive(0, 1, 0, 20) == 10);
  CHECK(queues.match_receive(0, 1, 0, 21) == 11);
  CHECK_FALSE(queues.match_receive(0, 1, 0, 22)); // waits for a third send
  CHECK(queues.match_send(0, 1, 0, 14) == 22);
  CHECK(queues.match_receive(0, 1, 1, 23) == 12);
  std::vector<std::pair<int, bool>> left;
  queues.for_each_unmatched([&](int posted, bool is_send) { left.emplace_back(posted, is_send); });
  CHECK(left == std::vector<std::pair<int, bool>>{{13, false}});
  CHECK_FALSE(queues.empty());
  queues.clear();
  CHECK(queues.empty());
}

TEST_CASE("program cursor: completions out of order, and a forgotten done prefix") {
  MaterializedSchedule m = two_ranks(1);
  m.programs[0][0] = {compute(1), compute(2), with_dep(compute(3), 0)};
  m.programs[1][0] = {compute(1)};
  const Schedule schedule = Schedule::from_materialized(m);
  ProgramCursor cursor(schedule.program(0, 0));
  REQUIRE(cursor.pull());
  CHECK(cursor.deps_done());
  CHECK(cursor.start() == 0);
  REQUIRE(cursor.pull());
  CHECK(cursor.start() == 1);
  REQUIRE(cursor.pull());
  CHECK_FALSE(cursor.deps_done());
  cursor.complete(1);
  CHECK(cursor.done(1));
  CHECK_FALSE(cursor.done(0));
  CHECK_FALSE(cursor.deps_done());
  cursor.complete(0); // forgets 0 and 1, still knows they completed
  CHECK(cursor.done(0));
  CHECK(cursor.done(1));
  CHECK_FALSE(cursor.done(2));
  CHECK(cursor.deps_done());
  CHECK(cursor.start() == 2);
  CHECK_FALSE(cursor.pull());
  CHECK_FALSE(cursor.finished());
  cursor.complete(2);
  CHECK(cursor.finished());
}
