// Small helpers shared by the collective tests.
#pragma once

#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/core/input_error.hpp"
#include "error_of.hpp"
#include "make_call.hpp"

#include <functional>
#include <string>

namespace ddlsim::coll::test {

using ddlsim::test_support::error_of;
using ddlsim::test_support::make_call;

// A step built field by field, for hand-made schedules.
inline Step step_of(StepKind kind, int peer, BufferRange src, BufferRange dst,
                    std::uint64_t bytes) {
  Step step;
  step.kind = kind;
  step.peer = peer;
  step.src = src;
  step.dst = dst;
  step.bytes = bytes;
  return step;
}

inline Step with_dep(Step step, std::uint32_t dep) {
  step.deps[step.dep_count++] = dep;
  return step;
}

} // namespace ddlsim::coll::test
