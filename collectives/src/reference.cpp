// run_reference: inputs, execution (executor.cpp) and the check against the collective.
#include "ddlsim/collectives/reference.hpp"

#include "dtype.hpp"
#include "executor.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

namespace ddlsim::coll {

namespace {

bool reduces(Op op) {
  return op == Op::all_reduce || op == Op::reduce_scatter || op == Op::reduce;
}

// Largest integer magnitude up to which every integer is exact in the dtype.
double exact_integer_limit(DataType type) {
  return type == DataType::fp32 ? 16777216.0 : type == DataType::fp16 ? 2048.0 : 256.0;
}

// Integer inputs lie in [-amplitude, amplitude], small enough that any partial sum over the
// ranks stays exact in the dtype (0 when even amplitude 1 would not be).
int integer_amplitude(const CollectiveCall& call) {
  return static_cast<int>(std::min(3.0, std::floor(exact_integer_limit(call.dtype) / call.ranks)));
}

std::string describe_call(const Schedule& schedule) {
  const CollectiveCall& call = schedule.call();
  std::ostringstream out;
  out << to_string(call.op) << ' ' << schedule.algorithm_name() << ", " << call.ranks << " ranks, "
      << call.elements() << ' ' << to_string(call.dtype) << " elements, "
      << to_string(call.reduction) << ", chunks " << call.params.chunks << ", channels "
      << call.params.channels;
  return out.str();
}

double rms(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x * x;
  return v.empty() ? 0 : std::sqrt(sum / double(v.size()));
}

// Per output element of `rank` of a reduction, how far a correct schedule may be off.
// Sum / avg: each of at most p + 2 roundings (partial sums, scale) errs by at most eps/2 of a
// value bounded by the sum of the input magnitudes at that element, so (p + 2)·eps·Σ|x| bounds
// the error whatever the order of the sum. (It is loose for bf16 and many ranks: integer inputs,
// checked exactly in every dtype, carry the burden of catching small errors.)
// Adasum: each of lg p levels rounds a combination whose coefficients depend on whole vectors,
// so the bound is relative to the vectors' scale, 2(lg p + 2)·eps·(|want| + rms(want) + largest
// rms(input)): about 3x the worst error measured over the adasum sweep of the tests.
std::vector<double> tolerances(const CollectiveCall& call, int rank,
                               const std::vector<std::vector<double>>& inputs,
                               const std::vector<double>& want) {
  const double eps = detail::epsilon(call.dtype), p = call.ranks;
  std::vector<double> out(want.size(), 0.0);
  if (call.reduction == Reduction::adasum) {
    const double scale = rms(want);
    double widest = 0;
    for (const auto& input : inputs) widest = std::max(widest, rms(input));
    const double levels = std::ceil(std::log2(p));
    for (std::size_t i = 0; i < want.size(); ++i)
      out[i] = 2 * (levels + 2) * eps * (std::fabs(want[i]) + scale + widest) + 1e-6;
    return out;
  }
  const ElementRange range =
      call.op == Op::reduce_scatter
          ? partition(call.elements(), std::uint64_t(call.ranks), std::uint64_t(rank))
          : ElementRange{0, call.elements()};
  for (const auto& input : inputs)
    for (std::uint64_t i = 0; i < range.size() && i < out.size(); ++i)
      out[i] += std::fabs(input[range.begin + i]);
  for (double& t : out) t = (p + 2) * eps * (call.reduction == Reduction::avg ? t / p : t) + 1e-6;
  return out;
}

std::string compare(const Schedule& schedule, bool exact,
                    const std::vector<std::vector<double>>& inputs,
                    const std::vector<std::vector<double>>& outputs,
                    const std::vector<std::vector<double>>& expected) {
  const CollectiveCall& call = schedule.call();
  for (int r = 0; r < call.ranks; ++r) {
    const auto& got = outputs[std::size_t(r)];
    const auto& want = expected[std::size_t(r)];
    if (want.empty() && output_bytes(call, r) == 0) continue;
    if (got.size() != want.size())
      return "rank " + std::to_string(r) + ": the output holds " + std::to_string(got.size()) +
             " elements, the expected result " + std::to_string(want.size());
    const std::vector<double> tolerance =
        exact ? std::vector<double>(got.size(), 0.0) : tolerances(call, r, inputs, want);
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (!(std::fabs(got[i] - want[i]) <= tolerance[i])) {
        std::ostringstream out;
        out << "rank " << r << " element " << i << ": got " << got[i] << ", expected " << want[i];
        if (!exact) out << " (tolerance " << tolerance[i] << ")";
        return out.str();
      }
    }
  }
  return {};
}

} // namespace

std::vector<std::vector<double>> reference_inputs(const CollectiveCall& call,
                                                  const ReferenceOptions& options) {
  const std::size_t e = element_size(call.dtype);
  const int amplitude = std::max(1, integer_amplitude(call));
  std::vector<std::vector<double>> inputs(std::size_t(call.ranks));
  for (int r = 0; r < call.ranks; ++r) {
    std::mt19937_64 random(options.seed * 0x9e3779b97f4a7c15ULL + std::uint64_t(r));
    std::uniform_int_distribution<int> integer(-amplitude, amplitude);
    std::uniform_real_distribution<double> real(-1.0, 1.0);
    auto& values = inputs[std::size_t(r)];
    values.resize(input_bytes(call, r) / e);
    for (double& v : values) {
      const double raw = options.integer_inputs ? integer(random) : real(random);
      v = detail::round_to(call.dtype, static_cast<float>(raw));
    }
  }
  return inputs;
}

ReferenceRun execute_reference(const Schedule& schedule,
                               const std::vector<std::vector<double>>& inputs) {
  ReferenceRun run;
  try {
    detail::Executor executor(schedule);
    for (int r = 0; r < schedule.call().ranks && std::size_t(r) < inputs.size(); ++r)
      executor.set_input(r, inputs[std::size_t(r)]);
    try {
      executor.run();
    } catch (const detail::ExecutionError& error) {
      run.status.deadlock = error.deadlock;
      run.status.error = error.what();
    }
    run.status.steps_executed = executor.steps_executed();
    run.status.bytes_sent = executor.bytes_sent();
    if (!run.status.error.empty()) return run;
    for (int r = 0; r < schedule.call().ranks; ++r) run.outputs.push_back(executor.output(r));
    run.status.ok = true;
  } catch (const std::exception& error) { // a generator that throws is a bug worth reporting
    run.status.error = std::string("the schedule's generator failed: ") + error.what();
  }
  return run;
}

namespace {

// The collective's definition for these inputs (the algorithm's expected_outputs: exact for
// dense collectives, the defined approximation for lossy ones); throws when there is none.
std::vector<std::vector<double>> definition(const Schedule& schedule,
                                            const std::vector<std::vector<double>>& inputs) {
  const CollectiveCall& call = schedule.call();
  const Algorithm* algorithm = schedule.algorithm();
  if (!algorithm) algorithm = find_algorithm(call.op, schedule.algorithm_name());
  return algorithm ? algorithm->expected_outputs(call, inputs) : exact_outputs(call, inputs);
}

bool exact_check(const CollectiveCall& call, const ReferenceOptions& options) {
  return !reduces(call.op) || (call.reduction == Reduction::sum && options.integer_inputs &&
                               integer_amplitude(call) >= 1);
}

} // namespace

ReferenceResult run_reference(const Schedule& schedule, const ReferenceOptions& options) {
  const CollectiveCall& call = schedule.call();
  const auto inputs = reference_inputs(call, options);
  ReferenceRun run = execute_reference(schedule, inputs);
  ReferenceResult result = run.status;
  if (!result.ok) {
    result.error = describe_call(schedule) + ": " + result.error;
    return result;
  }
  std::vector<std::vector<double>> expected;
  try {
    expected = definition(schedule, inputs);
  } catch (const std::exception& error) {
    result.ok = false;
    result.error = describe_call(schedule) + ": no expected result: " + error.what();
    return result;
  }
  const std::string mismatch =
      compare(schedule, exact_check(call, options), inputs, run.outputs, expected);
  if (!mismatch.empty()) {
    result.ok = false;
    result.error = describe_call(schedule) + ": " + mismatch;
  }
  return result;
}

RealRunExpectation expected_real_outputs(const Schedule& schedule,
                                         const ReferenceOptions& options) {
  const CollectiveCall& call = schedule.call();
  RealRunExpectation out;
  out.inputs = reference_inputs(call, options);
  ReferenceRun run = execute_reference(schedule, out.inputs);
  out.status = run.status;
  if (!out.status.ok) return out;
  std::vector<std::vector<double>> defined;
  try {
    defined = definition(schedule, out.inputs);
  } catch (const std::exception& error) {
    out.status.ok = false;
    out.status.error = describe_call(schedule) + ": no expected result: " + error.what();
    return out;
  }
  const bool exact = exact_check(call, options);
  out.schedule_error = compare(schedule, exact, out.inputs, run.outputs, defined);
  if (!out.schedule_error.empty())
    out.schedule_error = describe_call(schedule) + ": " + out.schedule_error;
  out.outputs = std::move(run.outputs);
  for (int r = 0; r < call.ranks && std::size_t(r) < defined.size(); ++r) {
    auto& got = out.outputs[std::size_t(r)];
    const auto& want = defined[std::size_t(r)];
    if (got.size() != want.size()) {
      got = want;
      continue;
    }
    const std::vector<double> tolerance =
        exact ? std::vector<double>(got.size(), 0.0) : tolerances(call, r, out.inputs, want);
    for (std::size_t i = 0; i < got.size(); ++i)
      if (!(std::fabs(got[i] - want[i]) <= tolerance[i])) got[i] = want[i];
  }
  return out;
}

} // namespace ddlsim::coll
