// The Schedule side of the packet engine: one Program per (rank, channel), with the shared
// cursor that keeps rule 1 of collectives/step.hpp (coll::ProgramCursor), the timing of its
// started steps until they retire, and the sends and receives waiting for their partner (rule 2:
// the k-th send from a to b on channel c matches the k-th receive at b from a on channel c, so
// each list is searched first-in first-out).
#pragma once

#include "ddlsim/collectives/step.hpp"
#include "ddlsim/collectives/step_runner.hpp"
#include "ddlsim/core/sim_time.hpp"
#include "ddlsim/core/units.hpp"
#include "transport.hpp"

#include <cmath>
#include <cstdint>
#include <deque>
#include <vector>

namespace ddlsim::sim::packet {

// What the engine keeps of a started step until it retires: its timing-relevant fields.
struct Slot {
  std::uint64_t bytes = 0; // for a compute step: its duration in picoseconds
  Picoseconds start = 0;
  std::int32_t peer = -1;
  coll::StepKind kind = coll::StepKind::send;
  coll::Buffer dst_buffer = coll::Buffer::output;
  std::uint64_t dst_offset = 0; // a receive's position in its output buffer (by_offset)
  std::uint8_t protocol = 0;    // Step::protocol
  float memory_bound_share = 0; // a compute step's (Step; a float, as every engine keeps it)

  static Slot of(const coll::Step& step, Picoseconds start) {
    const std::uint64_t bytes = step.kind == coll::StepKind::compute
                                    ? static_cast<std::uint64_t>(checked_ps(step.param))
                                    : step.bytes;
    return Slot{bytes,           start,
                step.peer,       step.kind,
                step.dst.buffer, step.dst.offset,
                step.protocol,   static_cast<float>(step.memory_bound_share)};
  }
  bool is_send() const { return kind == coll::StepKind::send; }
  bool is_receive() const {
    return kind == coll::StepKind::recv || kind == coll::StepKind::recv_reduce;
  }
};

// A started send or receive waiting for its partner.
struct Waiting {
  std::int32_t other; // the partner's rank
  StepRef step;
  std::uint64_t bytes = 0; // a waiting receive's bytes and kind
  bool reduce = false;
};

struct Program {
  coll::ProgramCursor cursor;
  std::deque<Slot> window; // window[i] is started step base + i, kept until it retires
  std::uint32_t base = 0;  // every step before base is done
  std::int32_t rank = 0;
  std::uint16_t channel = 0;
  std::vector<Waiting> sends_in; // sends to this program that found no receive yet
  std::vector<Waiting> receives; // this program's receives that found no send yet
  // Programs of the same rank whose next step waits for a step of this one; they retry when
  // this program completes a step.
  std::vector<std::uint32_t> waiters;
  bool registered_as_waiter = false;
};

// Removes and returns the first entry whose partner is `other`.
inline bool take_waiting(std::vector<Waiting>& list, std::int32_t other, Waiting& found) {
  for (auto it = list.begin(); it != list.end(); ++it) {
    if (it->other != other) continue;
    found = *it;
    list.erase(it);
    return true;
  }
  return false;
}

} // namespace ddlsim::sim::packet
