// The dependency-order evaluation's state of a program and of a link, laid out for 16k-rank
// schedules (see dependency_order.cpp for the evaluation itself): what every visit touches sits
// in Program, three cache lines; what a transfer needs now and then in ProgramOverflow; what
// waits, recording and long-lived ends need in ProgramRare.
#pragma once

#include "ddlsim/collectives/step_stream.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/topologies/router.hpp"
#include "peer_fifo.hpp"
#include "program_state.hpp"
#include "ring_window.hpp"

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace ddlsim::sim::detail::dependency_order {

using coll::StepKind;

constexpr Picoseconds kUnknown = -1; // an end time not known yet
constexpr Picoseconds kRetired = -2; // an end no later step needs: at or before last_start
constexpr std::uint32_t kNotBlocked = 0xffffffffu;

// A started send or receive that has not met its partner yet, kept by the receiving program (as
// in the event-driven engine, plus the start time the transfer needs).
struct Posted {
  std::uint64_t bytes = 0;
  Picoseconds start = 0;
  std::int32_t peer = 0;        // the sending rank (a send) or the rank received from (a receive)
  std::uint32_t index : 31 = 0; // the send's step in its program, or the receive's in its own
  std::uint32_t reduce : 1 = 0; // a recv_reduce
};

// Rule 2's matching (peer_fifo.hpp): the first entry inline, the rest in ProgramOverflow.
struct PostedList {
  std::uint32_t count = 0;
  Posted first;

  void put(const Posted& posted, detail::PostedRest<Posted>& rest) {
    detail::put_posted(count, first, rest, posted);
  }
  bool take(std::int32_t peer, Posted& found, detail::PostedRest<Posted>& rest) {
    return detail::take_posted(count, first, rest, peer, found);
  }
};

// What a program needs now and then: the posted sends and receives beyond the first of each
// (48 bytes per program, beside nothing else, so that a ring touching them stays in cache).
struct ProgramOverflow {
  detail::PostedRest<Posted> sends_in;
  detail::PostedRest<Posted> receives;
};

// What a program seldom needs.
struct ProgramRare {
  // Programs of its rank whose next step waits (rule 1) for one of its steps to end.
  std::vector<std::uint32_t> waiters;
  RingWindow<detail::StartedStep> started; // steps [base, ..), only when recording
  // Steps before Program::base whose end is unknown or after last_start, as (index, end), and
  // the least end among them that is known (they are dropped once last_start reaches it).
  std::vector<std::pair<std::uint32_t, Picoseconds>> far;
  Picoseconds far_least_end = std::numeric_limits<Picoseconds>::max();
  // Program::base when the first cross-program wait appeared: ends before it were forgotten
  // without the rank's floor (dependency_order.cpp, retire()).
  std::uint32_t floorless_base = 0;
};

// A program's state during the evaluation, laid out for 16k-rank schedules: one visit touches
// it all, and each cache line of it is a miss there.
struct alignas(64) Program {
  coll::StepStream stream;
  detail::PendingStep pending;  // step base + ends.size(), when has_pending
  Picoseconds last_start = 0;   // start of the latest started step
  RingWindow<Picoseconds> ends; // end times of steps [base, base + size), kUnknown until known
  std::uint32_t base = 0;       // steps before base ended by last_start: no later step waits
  std::uint32_t blocked_on = kNotBlocked; // the step whose end the pending step needs
  PostedList sends_in;                    // sends to this program that found no receive yet
  PostedList receives;                    // receives of this program that found no send yet
  // The path to the last peer sent to (rings send to one peer over and over).
  const topo::Path* path = nullptr;
  Picoseconds path_latency = 0;
  double path_rate = 0;              // bottleneck bandwidth, bytes per second
  std::uint8_t path_classes = 0;     // bit per LinkClass of its links
  std::uint8_t pending_protocol = 0; // the pending step's Step::protocol
  std::int32_t path_peer = -1;
  std::uint32_t pending_wait_step = 0; // with PendingStep::wait_channel
  // One byte of flags, so that the state stays within three cache lines.
  bool has_pending : 1 = false;
  bool exhausted : 1 = false;
  bool queued : 1 = false;
  bool has_waiters : 1 = false; // ProgramRare::waiters is not empty
  bool has_far : 1 = false;     // ProgramRare::far is not empty
  bool recorded : 1 = false;    // its steps are recorded (ProgramRare::started)

  std::uint32_t next_index() const { return base + static_cast<std::uint32_t>(ends.size()); }
};

// Three cache lines: a visit touches the first two, and a transfer the third.
static_assert(sizeof(Program) == 192);

// The end of started step `index` of `program` (`rare` its ProgramRare): its time, kUnknown (not
// ended, or not started), or kRetired (ended at or before last_start, forgotten).
inline Picoseconds end_of(const Program& program, const ProgramRare& rare, std::uint32_t index) {
  if (index >= program.base) {
    const std::size_t offset = index - program.base;
    return offset < program.ends.size() ? program.ends[offset] : kUnknown;
  }
  if (program.has_far)
    for (const auto& [far_index, far_end] : rare.far)
      if (far_index == index) return far_end;
  return kRetired;
}

// The latest byte interval a link carried: [.., until], and whether one of zero length sits at
// `until` (the event-driven engine has it on the link while it starts others at that instant).
struct LinkUse {
  Picoseconds until = std::numeric_limits<Picoseconds>::min();
  bool zero_length_at_until = false;
};

} // namespace ddlsim::sim::detail::dependency_order
