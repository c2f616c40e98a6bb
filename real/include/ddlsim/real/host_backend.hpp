// The host backend: runs a coll::Schedule with real bytes between ranks that are processes (or
// threads) connected by TCP sockets, over loopback or inside network namespaces that emulate a
// cluster (see netns.hpp), and checks every rank's output against the reference executor.
//
// Each rank runs all its channel programs in one event loop over non-blocking sockets, following
// the execution rules of collectives/step.hpp. The wire protocol per pair of ranks is a
// rendezvous: a posted receive sends a clear-to-send (CTS) for its channel, the k-th send on that
// channel waits for the k-th CTS and then streams its bytes straight from the source buffer, and
// the receiver answers with an ACK once the bytes have arrived (and been reduced), which completes
// the send (rule 3). No byte is buffered for a receive that is not posted yet.
//
// Every wait is bounded: a rank that makes no progress for `timeout` fails with an error naming
// its stuck steps and their peers; the coordinator kills whatever is left once a rank failed or
// died, and keeps what the survivors recorded (their timelines and errors).
#pragma once

#include "ddlsim/collectives/schedule.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace ddlsim::real {

enum class HostMode : std::uint8_t { processes, threads };

// A deliberate failure, for tests and demonstrations: rank `rank`, when it is about to start its
// `step`-th step (counted over all its programs and iterations, from 0), dies at once (crash:
// _exit in a process, closing every socket in a thread) or stops moving bytes while staying
// connected (stall).
struct HostFault {
  enum class Kind : std::uint8_t { none, crash, stall };
  Kind kind = Kind::none;
  int rank = 0;
  std::uint64_t step = 0;
};

// Where a rank lives: a network namespace (a path such as /run/netns/NAME; empty = the caller's)
// and the IPv4 address it listens on there. Empty placement: every rank on 127.0.0.1.
struct RankPlace {
  std::string netns_path;
  std::string address = "127.0.0.1";
};

struct HostOptions {
  HostMode mode = HostMode::processes;
  int warmup = 0;     // untimed iterations first
  int iterations = 1; // timed iterations (back to back, as nccl-tests does)
  // A rank that makes no progress (no byte moved, no step completed) for this long fails.
  std::chrono::milliseconds timeout{10000};
  // The outputs are checked against the reference executor when ranks x bytes is at most this
  // (the reference holds every rank's buffers in one process); above it the row says unchecked.
  std::uint64_t check_limit_bytes = 256ull << 20;
  bool record_timeline = true; // per-step start and end of the last timed iteration
  HostFault fault;
  std::vector<RankPlace> places; // empty or one per rank of the schedule
};

// One step of the last timed iteration, in the simulator's StepRecord terms; times are
// nanoseconds of the monotonic clock since the rank's iteration began (all ranks start together
// after a barrier, so the timelines of different ranks line up to within the barrier's skew).
struct StepTiming {
  std::uint16_t channel = 0;
  std::uint32_t index = 0;
  coll::StepKind kind = coll::StepKind::send;
  std::int32_t peer = -1;
  std::uint64_t bytes = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

struct RankOutcome {
  int rank = 0;
  bool finished = false;   // ran every iteration to the end
  std::string error;       // why not (names the step and the peer)
  double seconds = 0;      // mean time of one timed iteration on this rank
  std::uint64_t wrong = 0; // output elements that differ from the reference
  std::uint64_t steps = 0; // steps completed, all iterations
  std::uint64_t bytes_sent = 0;
  std::vector<StepTiming> timeline;
};

struct HostRun {
  bool ok = false;      // every rank finished and (when checked) nothing was wrong
  std::string error;    // the failures, most fundamental first (a dead rank before its peers)
  bool checked = false; // compared with the reference executor
  double seconds = 0;   // slowest rank's mean iteration time
  std::uint64_t wrong = 0;
  std::uint64_t steps = 0;      // per iteration, all ranks
  std::uint64_t bytes_sent = 0; // per iteration, all ranks
  std::vector<RankOutcome> ranks;
};

// Runs `schedule` on the host. Throws InputError for options that cannot work (a bad place list);
// failures of the run itself are reported in the result, never thrown, and never hang.
HostRun run_host(const coll::Schedule& schedule, const HostOptions& options);

} // namespace ddlsim::real
