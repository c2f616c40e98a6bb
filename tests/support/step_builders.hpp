// Single steps built from a few fields, for the suites that write small schedules by hand.
#pragma once

#include "ddlsim/collectives/step.hpp"
#include "ddlsim/core/units.hpp"

#include <cstdint>

namespace ddlsim::test_support {

// A send of `bytes` from the input buffer, or a receive (recv / recv_reduce) of `bytes` into the
// output buffer, with `peer`.
inline coll::Step transfer_step(coll::StepKind kind, int peer, std::uint64_t bytes) {
  coll::Step step;
  step.kind = kind;
  step.peer = peer;
  step.bytes = bytes;
  const bool send = kind == coll::StepKind::send;
  (send ? step.src : step.dst) =
      coll::BufferRange{send ? coll::Buffer::input : coll::Buffer::output, 0, bytes};
  return step;
}

// A compute step of `duration`.
inline coll::Step compute_step(Picoseconds duration) {
  coll::Step step;
  step.kind = coll::StepKind::compute;
  step.param = static_cast<double>(duration);
  return step;
}

} // namespace ddlsim::test_support
