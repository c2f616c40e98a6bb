// RankEngine: one rank of the host backend, the step interpreter. It runs every channel program
// of its rank on the collectives' step rules (StepRunner): local steps on the rank's buffers,
// compute steps as timed waits, sends and receives through PeerLinks (the sockets and the wire
// protocol), in one event loop.
#pragma once

#include "ddlsim/real/host_backend.hpp"

#include "ddlsim/collectives/step_runner.hpp"

#include "peer_links.hpp"
#include "transport.hpp"

#include <array>
#include <atomic>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddlsim::real::host {

// A failure of this rank: the message names the rank, the step and the peer.
struct RankFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Thrown by an injected crash in thread mode: the rank vanishes without reporting.
struct InjectedCrash {};

// input, output and scratch of one rank, in the call's dtype encoding.
struct RankBuffers {
  std::array<std::vector<std::byte>, 3> data;
  std::span<std::byte> bytes(const coll::BufferRange& range) {
    if (range.bytes == 0) return {};
    return {data[std::size_t(range.buffer)].data() + range.offset, range.bytes};
  }
};

struct EngineOptions {
  std::chrono::milliseconds timeout{10000};
  HostFault fault;                          // applies when fault.rank is this rank
  bool in_process = true;                   // crash = _exit (process) or InjectedCrash (thread)
  const std::atomic<bool>* abort = nullptr; // set by the coordinator to stop a thread rank
  // How long to poll without sleeping before a blocking wait. A sleeping rank pays a wake-up
  // per message; spinning pays only where each rank has a core of its own, so the runner sets
  // it then and leaves it 0 when ranks outnumber cores (Open MPI likewise busy-polls unless
  // oversubscribed).
  std::chrono::microseconds spin{0};
};

class RankEngine final : private LinkEvents {
public:
  // Takes ownership of `sockets` (one per rank, -1 for itself).
  RankEngine(const coll::Schedule& schedule, int rank, std::vector<int> sockets,
             RankBuffers& buffers, const EngineOptions& options);
  RankEngine(const RankEngine&) = delete;
  RankEngine& operator=(const RankEngine&) = delete;

  // Runs the rank's programs once; fills `timeline` (when not null) with every step's start and
  // end relative to the iteration's start. Throws RankFailure.
  void run_once(std::vector<StepTiming>* timeline);
  // Flushes what peers still need, then closes every connection in order (half-close, read to
  // end of stream), bounded by the timeout. Throws RankFailure.
  void finish() { links_.finish(); }
  // Closes every socket at once (an injected crash of a thread rank).
  void drop_connections() { links_.drop_connections(); }

  std::uint64_t steps_completed() const { return steps_completed_; }
  std::uint64_t bytes_sent() const { return links_.bytes_sent(); }

private:
  friend class coll::StepRunner<RankEngine>;
  // What this iteration started, per program (= channel): for timelines and messages.
  struct Started {
    std::vector<coll::Step> steps;
    std::vector<std::int64_t> start_ns, end_ns;
  };

  // StepRunner's driver.
  void start_step(coll::StepRef ref, const coll::Step& step);
  [[noreturn]] void reject_step(const std::string& message) const { fail(message); }
  [[noreturn]] void stream_failed(int rank, int channel, const std::exception& error) const;
  // LinkEvents.
  void transfer_done(coll::StepRef ref) override { complete(ref); }
  bool blocks(coll::StepRef ref) const override;
  std::string where(coll::StepRef ref) const override;
  std::string stuck() const override;
  [[noreturn]] void fail(const std::string& what) const override;

  void complete(coll::StepRef ref);
  void inject_fault(coll::StepRef at);
  // Completes the compute steps whose time is up; the earliest pending end, or max().
  Clock::time_point finish_computes();
  std::int64_t now_ns() const;

  coll::CollectiveCall call_;
  int rank_ = 0;
  RankBuffers& buffers_;
  EngineOptions options_;
  coll::StepRunner<RankEngine> runner_; // program number = channel
  PeerLinks links_;
  std::vector<Started> started_; // per channel
  // Compute steps in progress: they end at a time, while the loop keeps moving bytes (a GPU
  // computes while the NIC transfers).
  std::vector<std::pair<Clock::time_point, coll::StepRef>> computing_;
  Clock::time_point iteration_start_;
  std::uint64_t steps_started_ = 0, steps_completed_ = 0;
};

} // namespace ddlsim::real::host
