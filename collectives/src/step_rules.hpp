// What makes a single step well-formed, shared by validate() (whole materialized schedules) and
// the reference executor (steps pulled from a stream), and how a step is written for people.
#pragma once

#include "ddlsim/collectives/call.hpp"
#include "ddlsim/collectives/step.hpp"

#include <cstdint>
#include <string>

namespace ddlsim::coll::detail {

struct RankBuffers {
  std::uint64_t input = 0, output = 0, scratch = 0;
  std::uint64_t size(Buffer buffer) const {
    return buffer == Buffer::input ? input : buffer == Buffer::output ? output : scratch;
  }
};

// Where a step is: the program (rank, channel) and its index in it.
struct StepPlace {
  int rank = 0;
  int channel = 0;
  std::uint32_t index = 0;
};

// "rank 2 ch 0 step 5"
std::string to_string(const StepPlace& place);

// Empty when `step` may appear at `place` of a schedule of `ranks` ranks whose buffers at that
// rank are `buffers`; otherwise what is wrong (without the place). Checks: kind and codec,
// channel field, peer, deps (at most kMaxStepDeps, each pointing to an earlier step), each range
// used by the kind inside its buffer, byte counts consistent, element alignment where values
// are combined, no writes to the read-only input buffer, no partial src/dst overlap.
std::string step_problem(const Step& step, const StepPlace& place, int ranks,
                         const RankBuffers& buffers, DataType dtype);

// "output[256,512)"
std::string to_string(const BufferRange& range);
// "recv_reduce from 3  input[256,512) -> output[256,512)  256 B  deps 1" (no place).
std::string describe(const Step& step);

} // namespace ddlsim::coll::detail
