// The reference executor: runs a Schedule on real arrays in one process, following the execution
// rules of step.hpp, and checks the result against the mathematical collective. It proves every
// generator correct; the simulator's engines then only have to get the timing right.
#pragma once

#include "ddlsim/collectives/schedule.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ddlsim::coll {

struct ReferenceResult {
  bool ok = false;
  std::string error;  // first mismatch or deadlock, naming rank and element
  std::size_t steps_executed = 0;
  std::uint64_t bytes_sent = 0;  // sum over sends
};

struct ReferenceOptions {
  // Input values: small integers (exact sums in any dtype up to the rank counts tested), or
  // random reals checked within a tolerance scaled to the dtype.
  bool integer_inputs = true;
  std::uint64_t seed = 1;
};

// Executes and checks. Values are held as float internally and rounded to the call's dtype
// whenever they are stored (fp16 / bf16 rounding is modelled). For compression (top-k, chunk
// select) the check is against the dense reference of the elements the codec selected.
ReferenceResult run_reference(const Schedule& schedule, const ReferenceOptions& options = {});

} // namespace ddlsim::coll
