// Small helpers shared by the collective tests.
#pragma once

#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/core/input_error.hpp"

#include <functional>
#include <string>

namespace ddlsim::coll::test {

inline CollectiveCall make_call(Op op, const std::string& algorithm, int ranks,
                                std::uint64_t elements, DataType dtype = DataType::fp32,
                                Reduction reduction = Reduction::sum) {
  CollectiveCall call;
  call.op = op;
  call.algorithm = algorithm;
  call.ranks = ranks;
  call.dtype = dtype;
  call.bytes = elements * element_size(dtype);
  call.reduction = reduction;
  return call;
}

// The message of the InputError `f` throws, or "no error".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

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
