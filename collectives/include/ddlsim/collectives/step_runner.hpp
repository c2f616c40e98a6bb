// The rules of step.hpp, implemented once for every executor that walks a Schedule's programs.
//
// StepRunner<Driver> owns what the rules decide: each (rank, channel) program's cursor into its
// StepStream (ProgramCursor), the checks of each pulled step, rule 1 (in-order issue once the
// deps and the cross-program wait have completed) and the completion record that rule 1 reads.
// MessageQueues implements rule 2: per (sender, receiver, channel) the k-th posted send meets the
// k-th posted receive. What a step costs and how bytes move is the executor's: the runner hands
// every step that may start to the driver, and the driver reports each completion (rule 3) back.
//
// How an executor uses them:
//   struct MyExecutor {
//     coll::StepRunner<MyExecutor> runner{*this, schedule, first_rank, rank_count};
//     coll::MessageQueues<coll::StepRef> messages{ranks, channels};
//     // Called by runner.drain() for every step that may start, in issue order.
//     void start_step(coll::StepRef ref, const coll::Step& step) {
//       if (step.is_local()) { ...; return runner.complete(ref); }
//       if (step.is_send()) {
//         if (auto receive = messages.match_send(rank, step.peer, step.channel, ref)) ...;
//       } else ...
//       // later, when the bytes are in: runner.complete(send); runner.complete(receive);
//     }
//     // A malformed step (message names the place and the problem); must throw.
//     [[noreturn]] void reject_step(const std::string& message);
//   };
//   runner.restart(); runner.drain();  // then, per completion: runner.complete(ref);
//   runner.drain(); runner.finished() tells whether every program ran to its end.
// Optional driver hook: `void stream_failed(int rank, int channel, const std::exception&)`, called
// when a program's StepStream throws (without it, the exception propagates).
// The hooks may be private when the driver befriends StepRunner<Driver>. start_step may call
// complete() at once (a step that costs nothing); drain() then goes on with what it unblocked.
//
// The cost is a few branches per step and no virtual call: the driver is a template parameter.
// The analytic engine keeps its own packed state for speed; tests check it against this one.
#pragma once

#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/collectives/step.hpp"
#include "ddlsim/collectives/step_stream.hpp"

#include <array>
#include <cstdint>
#include <deque>
#include <exception>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ddlsim::coll {

// A started step: its program's number in the runner and its index in that program.
struct StepRef {
  std::uint32_t program = 0;
  std::uint32_t index = 0;
  bool operator==(const StepRef&) const = default;
};

// The input, output and scratch bytes of `rank` (indexed by Buffer).
std::array<std::uint64_t, 3> rank_buffer_bytes(const Schedule& schedule, int rank);
// "" when `step` may stand at index `index` of program (rank, channel) of `schedule`, whose
// buffers at that rank are `buffer_bytes`; otherwise "rank R ch C step I (the step): what is
// wrong". Checks what validate() checks of one step, and that a cross-program wait names an
// existing channel.
std::string step_problem_at(const Schedule& schedule,
                            const std::array<std::uint64_t, 3>& buffer_bytes, int rank, int channel,
                            std::uint32_t index, const Step& step);
// "rank R ch C step I (the step)".
std::string step_place(int rank, int channel, std::uint32_t index, const Step& step);

// Rule 1 within one program: pulls the program's steps in order, holds the next one (pending)
// until its deps have completed, and records which started steps completed. The record forgets
// its completed prefix, so a long program costs memory only for its steps in flight. Executors
// whose programs run apart (an actor each) use it directly; StepRunner keeps one per program.
class ProgramCursor {
public:
  ProgramCursor() = default;
  explicit ProgramCursor(StepStream stream) : stream_(std::move(stream)) {}

  // Pulls the next step into pending() (when !has_next()); false once the program has no more.
  bool pull() {
    if (ended_ || !stream_.next(pending_)) {
      ended_ = true;
      return false;
    }
    has_next_ = true;
    return true;
  }
  bool has_next() const { return has_next_; }
  bool ended() const { return ended_; }
  // The pulled step that has not started (when has_next()); its index is started().
  const Step& pending() const { return pending_; }
  // Rule 1 within the program: every dep of the pending step completed.
  bool deps_done() const {
    for (std::size_t d = 0; d < pending_.dep_count; ++d)
      if (!done(pending_.deps[d])) return false;
    return true;
  }
  // The pending step starts (pending() keeps it until the next pull); returns its index.
  std::uint32_t start() {
    has_next_ = false;
    window_.push_back(0);
    ++unfinished_;
    return started_++;
  }
  // Rule 3 happened for started step `index`.
  void complete(std::uint32_t index) {
    window_[index - base_] = 1;
    --unfinished_;
    while (!window_.empty() && window_.front()) {
      window_.pop_front();
      ++base_;
    }
  }
  bool done(std::uint32_t index) const {
    return index < base_ || (index < started_ && window_[index - base_]);
  }
  std::uint32_t started() const { return started_; }
  // Ran to its end: no step left to pull or start, and every started step completed.
  bool finished() const { return ended_ && !has_next_ && unfinished_ == 0; }

private:
  StepStream stream_;
  Step pending_{};
  bool has_next_ = false, ended_ = false;
  std::deque<std::uint8_t> window_; // window_[i]: whether step base_ + i completed
  std::uint32_t base_ = 0, started_ = 0, unfinished_ = 0;
};

template <class Driver> class StepRunner {
public:
  struct Program {
    int rank = 0, channel = 0;
    ProgramCursor cursor;
    bool queued = false; // in the ready queue
  };

  // Runs the programs of ranks [first_rank, first_rank + rank_count) of `schedule`, numbered
  // (rank - first_rank) * channels + channel.
  StepRunner(Driver& driver, const Schedule& schedule, int first_rank, int rank_count)
      : driver_(driver), schedule_(schedule), first_rank_(first_rank),
        channels_(schedule.channels()) {
    programs_.resize(std::size_t(rank_count) * std::size_t(channels_));
    buffer_bytes_.reserve(std::size_t(rank_count));
    for (int r = 0; r < rank_count; ++r)
      buffer_bytes_.push_back(rank_buffer_bytes(schedule, first_rank + r));
  }

  // Opens every program at its first step and queues it (drain() then starts what may start).
  void restart() {
    ready_.clear();
    for (std::uint32_t id = 0; id < programs_.size(); ++id) {
      Program& program = programs_[id];
      program.rank = first_rank_ + int(id) / channels_;
      program.channel = int(id) % channels_;
      program.cursor = ProgramCursor(schedule_.program(program.rank, program.channel));
      program.queued = true;
      ready_.push_back(id);
    }
  }

  // Starts, in order, every step that rule 1 allows now: driver.start_step(ref, step) for each.
  // Bounded: every pass starts a step or takes a program off the queue, and steps are finite.
  void drain() {
    while (!ready_.empty()) {
      const std::uint32_t id = ready_.front();
      ready_.pop_front();
      programs_[id].queued = false;
      advance(id);
    }
  }

  // Rule 3 happened for `ref`: records it and queues the programs it may unblock (its own, and
  // those of the same rank whose next step waits for this channel). Call drain() afterwards.
  void complete(StepRef ref) {
    Program& program = programs_[ref.program];
    program.cursor.complete(ref.index);
    enqueue(ref.program);
    const std::uint32_t first = ref.program - std::uint32_t(program.channel);
    for (std::uint32_t other = first; other < first + std::uint32_t(channels_); ++other) {
      const ProgramCursor& waiter = programs_[other].cursor;
      if (waiter.has_next() && waiter.pending().has_wait() &&
          waiter.pending().wait_channel == std::uint32_t(program.channel))
        enqueue(other);
    }
  }

  // Every program ran to its end and every started step completed.
  bool finished() const {
    for (const Program& program : programs_)
      if (!program.cursor.finished()) return false;
    return true;
  }

  std::uint32_t program_count() const { return std::uint32_t(programs_.size()); }
  const Program& program(std::uint32_t id) const { return programs_[id]; }
  std::uint32_t program_id(int rank, int channel) const {
    return std::uint32_t((rank - first_rank_) * channels_ + channel);
  }
  std::uint64_t steps_started() const { return steps_started_; }

  // Whether step `index` of program `id` completed.
  bool step_done(std::uint32_t id, std::uint32_t index) const {
    return programs_[id].cursor.done(index);
  }
  // Whether a pending step waits for started step `ref` to complete: a dep of its own program's
  // pending step, or the cross-program wait of a pending step of the same rank.
  bool awaited(StepRef ref) const {
    const Program& program = programs_[ref.program];
    if (program.cursor.has_next()) {
      const Step& next = program.cursor.pending();
      for (std::size_t d = 0; d < next.dep_count; ++d)
        if (next.deps[d] == ref.index) return true;
    }
    const std::uint32_t first = ref.program - std::uint32_t(program.channel);
    for (std::uint32_t other = first; other < first + std::uint32_t(channels_); ++other) {
      const ProgramCursor& waiter = programs_[other].cursor;
      if (waiter.has_next() && waiter.pending().has_wait() &&
          waiter.pending().wait_channel == std::uint32_t(program.channel) &&
          waiter.pending().wait_step == ref.index)
        return true;
    }
    return false;
  }
  // Why the pending step of program `id` cannot start: "steps 1,2", "channel 1 step 3",
  // "steps 1 and channel 1 step 3", or "" when nothing holds it (or there is none).
  std::string blockers(std::uint32_t id) const {
    const Program& program = programs_[id];
    if (!program.cursor.has_next()) return {};
    const Step& next = program.cursor.pending();
    std::string deps;
    for (std::size_t d = 0; d < next.dep_count; ++d)
      if (!program.cursor.done(next.deps[d]))
        deps += (deps.empty() ? "steps " : ",") + std::to_string(next.deps[d]);
    if (next.has_wait() && !wait_done(program.rank, next))
      deps += std::string(deps.empty() ? "" : " and ") + "channel " +
              std::to_string(next.wait_channel) + " step " + std::to_string(next.wait_step);
    return deps;
  }
  // "rank R ch C step I (the step) waits for <blockers>" for the pending step of program `id`.
  std::string describe_pending(std::uint32_t id) const {
    const Program& program = programs_[id];
    return step_place(program.rank, program.channel, program.cursor.started(),
                      program.cursor.pending()) +
           " waits for " + blockers(id);
  }

private:
  void advance(std::uint32_t id) {
    Program& program = programs_[id];
    ProgramCursor& cursor = program.cursor;
    for (;;) {
      if (!cursor.has_next()) {
        if (!pull(program)) return;
        if (std::string problem =
                step_problem_at(schedule_, buffer_bytes_[std::size_t(program.rank - first_rank_)],
                                program.rank, program.channel, cursor.started(), cursor.pending());
            !problem.empty())
          driver_.reject_step(problem);
      }
      if (!cursor.deps_done()) return; // queued again when a dep completes
      if (cursor.pending().has_wait() && !wait_done(program.rank, cursor.pending()))
        return; // likewise
      const std::uint32_t index = cursor.start();
      ++steps_started_;
      driver_.start_step(StepRef{id, index}, cursor.pending());
    }
  }

  bool pull(Program& program) {
    if constexpr (requires(Driver & d, const std::exception& e) { d.stream_failed(0, 0, e); }) {
      try {
        return program.cursor.pull();
      } catch (const std::exception& error) {
        driver_.stream_failed(program.rank, program.channel, error);
        throw;
      }
    } else {
      return program.cursor.pull();
    }
  }

  // Rule 1's cross-program wait (the channel was checked when the step was pulled).
  bool wait_done(int rank, const Step& step) const {
    return step_done(program_id(rank, step.wait_channel), step.wait_step);
  }

  void enqueue(std::uint32_t id) {
    if (programs_[id].queued) return;
    programs_[id].queued = true;
    ready_.push_back(id);
  }

  Driver& driver_;
  const Schedule& schedule_;
  int first_rank_ = 0, channels_ = 1;
  std::vector<Program> programs_;
  std::vector<std::array<std::uint64_t, 3>> buffer_bytes_; // per rank run
  std::deque<std::uint32_t> ready_;
  std::uint64_t steps_started_ = 0;
};

// Rule 2: per (sender, receiver, channel), posted sends and posted receives wait in order until
// their partner is posted. `Posted` is whatever the executor needs of a started step.
template <class Posted> class MessageQueues {
public:
  struct Queue {
    std::deque<Posted> sends, receives;
  };

  MessageQueues(int ranks, int channels) : ranks_(ranks), channels_(channels) {}

  // A send from `from` to `to` on `channel` was posted: returns the oldest unmatched receive it
  // meets, or queues it and returns nothing.
  std::optional<Posted> match_send(int from, int to, int channel, const Posted& send) {
    Queue& queue = queues_[key(from, to, channel)];
    return match(queue.receives, queue.sends, send);
  }
  // A receive at `to` from `from` on `channel` was posted: likewise with the oldest send.
  std::optional<Posted> match_receive(int from, int to, int channel, const Posted& receive) {
    Queue& queue = queues_[key(from, to, channel)];
    return match(queue.sends, queue.receives, receive);
  }

  bool empty() const {
    for (const auto& [k, queue] : queues_)
      if (!queue.sends.empty() || !queue.receives.empty()) return false;
    return true;
  }
  void clear() { queues_.clear(); }
  // f(const Posted&, bool is_send) for every posted send and receive still without a partner,
  // in no particular order across queues.
  template <class F> void for_each_unmatched(F&& f) const {
    for (const auto& [k, queue] : queues_) {
      for (const Posted& send : queue.sends) f(send, true);
      for (const Posted& receive : queue.receives) f(receive, false);
    }
  }

private:
  static std::optional<Posted> match(std::deque<Posted>& partners, std::deque<Posted>& same,
                                     const Posted& posted) {
    if (partners.empty()) {
      same.push_back(posted);
      return std::nullopt;
    }
    Posted partner = std::move(partners.front());
    partners.pop_front();
    return partner;
  }
  std::uint64_t key(int from, int to, int channel) const {
    return (std::uint64_t(from) * std::uint64_t(ranks_) + std::uint64_t(to)) *
               std::uint64_t(channels_) +
           std::uint64_t(channel);
  }

  int ranks_ = 0, channels_ = 1;
  std::unordered_map<std::uint64_t, Queue> queues_;
};

} // namespace ddlsim::coll
