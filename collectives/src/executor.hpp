// The engine of the reference executor: runs every program of a Schedule on real buffers,
// following the rules of step.hpp, and reports bad steps, races and deadlocks.
//
// The rules are StepRunner's and MessageQueues' (step_runner.hpp). Local steps run and complete
// at once. A send or receive waits in the queue of its (src, dst, channel) until its partner
// arrives; then the bytes move and both complete. When no program can go on with steps left,
// nothing can ever progress: a deadlock, reported with the stuck steps.
#pragma once

#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/collectives/step_runner.hpp"
#include "ddlsim/collectives/switch_groups.hpp"

#include "step_rules.hpp"

#include <array>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <vector>

namespace ddlsim::coll::detail {

struct ExecutionError : std::runtime_error {
  ExecutionError(const std::string& what, bool is_deadlock)
      : std::runtime_error(what), deadlock(is_deadlock) {}
  bool deadlock;
};

class Executor {
public:
  explicit Executor(const Schedule& schedule);

  // Stores `values` (rounded to the dtype) into the input buffer of `rank`.
  void set_input(int rank, const std::vector<double>& values);
  // Runs to the end; throws ExecutionError for a bad step, a race or a deadlock.
  void run();
  std::vector<double> output(int rank) const;

  std::size_t steps_executed() const { return runner_.steps_started(); }
  std::uint64_t bytes_sent() const { return bytes_sent_; }

private:
  friend class StepRunner<Executor>;
  // A started step: program id, index, and the step.
  struct Started {
    std::uint32_t program = 0, index = 0;
    Step step;
  };
  // Bytes an unfinished send or receive may still read or write.
  struct Access {
    BufferRange range;
    bool write = false;
    std::uint32_t program = 0, index = 0;
    Step step; // for messages
  };

  // StepRunner's driver.
  void start_step(StepRef ref, const Step& step);
  [[noreturn]] void reject_step(const std::string& message) const;

  void execute_local(const Started& s);
  void transfer(const Started& send, const Started& receive);
  // Rule 4: the switch's work for a complete group (reduce or multicast), then completions.
  void run_switch(const SwitchGroups<Started>::Instance& instance);
  void complete(std::uint32_t id, std::uint32_t index);
  int rank_of(std::uint32_t id) const { return runner_.program(id).rank; }
  void check_access(const Started& s, const BufferRange& range, bool write) const;
  void forget_accesses(int rank, std::uint32_t id, std::uint32_t index);
  [[noreturn]] void report_deadlock() const;
  [[noreturn]] void fail(const Started& s, const std::string& what) const;
  std::string where(std::uint32_t id, std::uint32_t index, const Step& step) const;

  std::span<std::byte> bytes(int rank, const BufferRange& range);

  CollectiveCall call_;
  int ranks_, channels_;
  std::vector<RankBuffers> sizes_;
  std::vector<std::array<std::vector<std::byte>, 3>> buffers_; // [rank][Buffer]
  StepRunner<Executor> runner_; // programs numbered rank * channels + channel
  MessageQueues<Started> messages_;
  SwitchGroups<Started> groups_;
  std::vector<std::vector<Access>> in_flight_; // per rank
  std::uint64_t bytes_sent_ = 0;
};

} // namespace ddlsim::coll::detail
