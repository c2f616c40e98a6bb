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
  bool deadlock = false; // no program could progress while steps were left (see error)
  std::string error;     // first mismatch, hazard or deadlock, naming rank, channel, step
  std::size_t steps_executed = 0;
  std::uint64_t bytes_sent = 0; // sum over sends
};

struct ReferenceOptions {
  // Input values: small integers (exact sums in any dtype for up to 256 ranks), or random reals
  // in [-1, 1] checked within a tolerance scaled to the dtype.
  bool integer_inputs = true;
  std::uint64_t seed = 1;
};

// Executes and checks. Buffers hold the call's dtype encoding (fp32, fp16 or bf16 bits, round to
// nearest even on every store), arithmetic is done in float (adasum's dot products in double).
// Sends and receives are matched by (src, dst, channel, sequence); a schedule that stops with
// steps left is reported as a deadlock naming the stuck steps. The executor is strict about
// races, because a real executor may move bytes at any moment until a transfer completes: a
// local step or a send that touches bytes an unfinished send of the same rank reads, or a
// posted receive will write (writes conflict with both, reads with writes), is an error, and so
// is a receive whose bytes arrive while an unfinished send of that rank still reads them. The check
// compares with the algorithm's expected_outputs: exactly for data movement and for integer inputs
// whose sums are exact in the dtype (inputs in [-3, 3], fewer when ranks are many), else within
// a bound of (ranks + 2) roundings of the dtype (for adasum, relative to the vectors' scale).
ReferenceResult run_reference(const Schedule& schedule, const ReferenceOptions& options = {});

// The inputs run_reference uses: [rank][element], already rounded to the call's dtype, one
// vector per rank < call.ranks sized by input_bytes.
std::vector<std::vector<double>> reference_inputs(const CollectiveCall& call,
                                                  const ReferenceOptions& options);

// Executes without checking against the collective: the output buffers of ranks < call.ranks
// as values, for codec tests and for real backends that compare their own numbers.
struct ReferenceRun {
  ReferenceResult status; // ok unless the execution itself failed (hazard, deadlock, bad step)
  std::vector<std::vector<double>> outputs;
};
ReferenceRun execute_reference(const Schedule& schedule,
                               const std::vector<std::vector<double>>& inputs);

// What a real backend's output buffers must hold, element for element, for the reference inputs
// of `options`: the reference run of the same schedule where its result agrees with the
// collective's definition (within run_reference's tolerance), so that a correct backend matches
// it bit for bit whatever order the schedule sums in; and the definition itself where the
// schedule's own result does not agree, so that a wrong schedule (a corrupted dump, a buggy
// generator) shows up as wrong elements instead of being reproduced faithfully.
struct RealRunExpectation {
  ReferenceResult status; // ok unless the execution itself failed, or no definition exists
  std::vector<std::vector<double>> inputs, outputs;
  std::string schedule_error; // where the schedule's own result departs from the definition
};
RealRunExpectation expected_real_outputs(const Schedule& schedule,
                                         const ReferenceOptions& options = {});

} // namespace ddlsim::coll
