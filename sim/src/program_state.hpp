// The analytic engine's state of one (rank, channel) program, laid out for 16k-rank schedules.
//
// Why this layout: a flat ring on 16,384 ranks runs a billion steps, and each step touches the
// state of its own program and of its peer's. Those states do not fit in the core's caches, so
// the engine's speed is the number of cache lines a step touches. Everything a step needs sits
// in ProgramState, 128 bytes (two cache lines); what is rarely needed (long lists of waiting
// sends and receives, steps done far ahead, cross-program waiters, step records) sits apart in
// ProgramOverflow. Three facts make 128 bytes enough:
//  - only the next step to start needs its deps and wait (PendingStep); a started step only
//    needs to be known done or not: one bit (done_bits);
//  - a started send or receive that waits for its partner keeps what its transfer needs in the
//    Waiting entry (16 bytes), not in a per-step slot;
//  - rank and channel follow from the program's index, and are not stored.
#pragma once

#include "ddlsim/collectives/step.hpp"
#include "ddlsim/collectives/step_stream.hpp"
#include "ddlsim/core/sim_time.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/topologies/router.hpp"
#include "peer_fifo.hpp"
#include "ring_window.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace ddlsim::sim::detail {

// Both analytic evaluations number a schedule's (rank, channel) programs rank-major; the branch
// spares the division in one-channel schedules.
struct ProgramNumbering {
  std::uint32_t channels = 1;

  std::uint32_t program_of(std::int32_t rank, std::uint16_t channel) const {
    return static_cast<std::uint32_t>(rank) * channels + channel;
  }
  std::int32_t rank_of(std::uint32_t p) const {
    return static_cast<std::int32_t>(channels == 1 ? p : p / channels);
  }
  std::uint16_t channel_of(std::uint32_t p) const {
    return static_cast<std::uint16_t>(channels == 1 ? 0 : p % channels);
  }
};

// A started send or receive waiting for its partner, kept by the receiving program. For a waiting
// send, peer is the sending rank and index its step; for a waiting receive, peer is the rank it
// receives from and index its own step.
struct Waiting {
  std::uint64_t bytes = 0; // the send's bytes (for the flow) or the receive's (for its reduction)
  std::int32_t peer = 0;
  std::uint32_t index : 31 = 0;
  std::uint32_t reduce : 1 = 0; // a waiting recv_reduce
};
static_assert(sizeof(Waiting) == 16);

// Steps of one program may number up to 2^31 (Waiting::index has 31 bits).
inline constexpr std::uint32_t kMaxProgramSteps = 0x7fffffffu;

// The next step of a program, pulled from its stream but not started: the only step whose deps
// and wait are ever checked. Its cross-program wait, rare outside training workloads, is kept in
// ProgramOverflow (pending_wait_*).
struct PendingStep {
  std::uint64_t bytes = 0; // a compute step's duration in picoseconds
  std::array<std::uint32_t, coll::kMaxStepDeps> deps{};
  std::int32_t peer = -1;
  coll::StepKind kind = coll::StepKind::send;
  std::uint8_t dep_count = 0;
  std::uint16_t wait_channel = coll::kNoWait; // rule 1's cross-program wait, if any (its step is
                                              // kept apart by each engine: it is rarely set)

  // Field by field into place: building a PendingStep and copying it in made the loads of the
  // copy wait on the stores that built it (a store-forwarding stall on every pulled step).
  void assign(const coll::Step& step) {
    bytes = step.kind == coll::StepKind::compute
                ? static_cast<std::uint64_t>(checked_ps(step.param))
                : step.bytes;
    deps = step.deps;
    peer = step.peer;
    kind = step.kind;
    dep_count = step.dep_count;
    wait_channel = step.wait_channel;
  }
  bool has_wait() const { return wait_channel != coll::kNoWait; }
};
static_assert(sizeof(PendingStep) == 32);

// What the trace records of a started step, kept only when AnalyticOptions::record_steps is set.
struct StartedStep {
  coll::StepKind kind;
  std::int32_t peer;
  std::uint64_t bytes;
  Picoseconds start;
};

// The rarely used part of a program's state.
struct ProgramOverflow {
  PostedRest<Waiting> sends_in_rest;   // waiting sends after ProgramState::sends_in_first
  PostedRest<Waiting> receives_rest;   // waiting receives after ProgramState::receives_first
  std::vector<std::uint32_t> done_far; // done steps at least 64 after base, in no order
  // Programs of the same rank whose next step waits (Step::wait_channel) for a step of this one;
  // they retry when a step of this program completes. Empty outside training workloads.
  std::vector<std::uint32_t> waiters;
  RingWindow<StartedStep> started; // steps [base, next_start), only when recording
  // The step the pending step waits for, when PendingStep::has_wait().
  std::uint32_t pending_wait_step = 0;
  // The group size of the pending step, when it is a switch step (rule 4 of step.hpp).
  std::int32_t pending_group = 0;
  // The memory-bound share of the pending step, when it is a compute step and compute_slowdown
  // is on (coll::Step; a float, as every engine keeps it).
  float pending_memory_bound_share = 0;
};

struct alignas(64) ProgramState {
  // Rule 2 of step.hpp: sends to this program that found no receive yet, and receives of this
  // program that found no send yet, each in start order. Usually zero or one entry: the first
  // is inline, the rest in the overflow.
  std::uint32_t sends_in_count = 0;
  std::uint32_t receives_count = 0;
  Waiting sends_in_first;
  Waiting receives_first;
  // Steps before base are done; steps [base, next_start) have started, and step base + i is done
  // when bit i of done_bits is set (i < 64) or it is in ProgramOverflow::done_far (i >= 64).
  std::uint32_t base = 0;
  std::uint32_t next_start = 0;
  std::uint64_t done_bits = 0;
  PendingStep pending; // step next_start, when has_pending
  coll::StepStream stream;
  // The path of the last peer this program sent to: rings and trees send to the same peer over
  // and over, and the ECMP choice is a function of (src, dst, channel), so reusing it is exact.
  const topo::Path* path = nullptr;
  Picoseconds path_latency = 0;
  std::int32_t path_peer = -1;
  std::uint8_t pending_protocol = 0; // the pending step's Step::protocol
  // One byte of flags, so that the state stays within two cache lines.
  bool path_crosses_network : 1 = false; // `path` has a NIC link (protocol_cost.hpp)
  bool has_pending : 1 = false;
  bool exhausted : 1 = false;      // the stream has ended
  bool has_done_far : 1 = false;   // ProgramOverflow::done_far is not empty
  bool waits_on_other : 1 = false; // registered in another program's waiters
  bool has_waiters : 1 = false;    // ProgramOverflow::waiters is not empty

  bool finished() const { return exhausted && !has_pending && base == next_start; }

  bool is_done(std::uint32_t index, const ProgramOverflow& overflow) const {
    if (index < base) return true;
    const std::uint32_t offset = index - base;
    if (offset < 64) return (done_bits >> offset & 1) != 0;
    return has_done_far && std::find(overflow.done_far.begin(), overflow.done_far.end(), index) !=
                               overflow.done_far.end();
  }

  // Marks started step `index` done and retires the done steps at the front. Returns how many
  // steps were retired.
  std::uint32_t mark_done(std::uint32_t index, ProgramOverflow& overflow) {
    const std::uint32_t offset = index - base;
    if (offset >= 64) {
      overflow.done_far.push_back(index);
      has_done_far = true;
      return 0;
    }
    done_bits |= std::uint64_t{1} << offset;
    const std::uint32_t old_base = base;
    while (done_bits & 1) {
      const int run = std::countr_one(done_bits);
      done_bits = run == 64 ? 0 : done_bits >> run;
      base += static_cast<std::uint32_t>(run);
      if (has_done_far) pull_done_far(overflow);
    }
    return base - old_base;
  }

private:
  // Moves the done steps that base has come within 64 of from done_far into done_bits.
  void pull_done_far(ProgramOverflow& overflow) {
    std::vector<std::uint32_t>& far = overflow.done_far;
    for (std::size_t i = 0; i < far.size();) {
      if (far[i] - base < 64) {
        done_bits |= std::uint64_t{1} << (far[i] - base);
        far[i] = far.back();
        far.pop_back();
      } else {
        ++i;
      }
    }
    has_done_far = !far.empty();
  }
};
static_assert(sizeof(ProgramState) == 128, "two cache lines: see the comment at the top");

} // namespace ddlsim::sim::detail
