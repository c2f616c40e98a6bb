// Step helpers shared by the composite schedules that models/ builds (the data-parallel iteration
// in iteration_schedule.cpp and the LLM iteration in llm_schedule.cpp): one definition of the
// "no step" index, the zero-or-timed compute step and the dependency append, so both follow
// step.hpp's rules the same way.
#pragma once

#include "ddlsim/collectives/step.hpp"
#include "ddlsim/core/units.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace ddlsim::models::detail {

// No step (before a channel's first step): add_dep and the waits skip it.
inline constexpr std::uint32_t kNone = UINT32_MAX;

// A compute step of `duration` on `channel`: a kernel on the stream, or with 0 a marker that
// only orders or joins other steps.
inline coll::Step compute_step(Picoseconds duration, int channel) {
  coll::Step step;
  step.kind = coll::StepKind::compute;
  step.channel = static_cast<std::uint16_t>(channel);
  step.param = static_cast<double>(duration);
  return step;
}

// Adds `dep` (an index into the step's program) to the step's deps, once; kNone adds nothing.
inline void add_dep(coll::Step& step, std::uint32_t dep) {
  if (dep == kNone) return;
  for (std::uint8_t d = 0; d < step.dep_count; ++d)
    if (step.deps[d] == dep) return;
  if (step.dep_count == coll::kMaxStepDeps)
    throw std::logic_error("schedule: a step already has its " +
                           std::to_string(coll::kMaxStepDeps) + " deps");
  step.deps[step.dep_count++] = dep;
}

} // namespace ddlsim::models::detail
