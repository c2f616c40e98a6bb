// exact_outputs: the mathematical result of each collective, in double precision, against which
// the reference executor checks every generator.
#include "ddlsim/collectives/algorithm.hpp"
#include "ddlsim/core/input_error.hpp"

#include <bit>
#include <cmath>

namespace ddlsim::coll {

namespace {

using Values = std::vector<double>;

// Adasum of two vectors (Maleki et al., "Scaling Distributed Training with Adaptive Summation"):
// (1 - a.b / 2|a|^2) a + (1 - a.b / 2|b|^2) b, where a zero vector contributes nothing to the
// other's coefficient.
Values adasum_pair(const Values& a, const Values& b) {
  double dot = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    dot += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  const double ca = aa > 0 ? 1 - dot / (2 * aa) : 1, cb = bb > 0 ? 1 - dot / (2 * bb) : 1;
  Values out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = ca * a[i] + cb * b[i];
  return out;
}

// The reduction of all ranks' full inputs. Adasum is not associative: it is defined as the
// binary tree that recursive doubling computes (level k combines groups 2^k apart), so only for
// power-of-two rank counts.
Values reduce_all(const CollectiveCall& call, const std::vector<Values>& inputs) {
  const auto p = static_cast<std::size_t>(call.ranks);
  if (call.reduction == Reduction::adasum) {
    if (!std::has_single_bit(p))
      throw InputError("adasum", "adasum is defined for power-of-two rank counts only, not " +
                                     std::to_string(p));
    std::vector<Values> level(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(p));
    while (level.size() > 1) {
      std::vector<Values> next;
      for (std::size_t i = 0; i < level.size(); i += 2)
        next.push_back(adasum_pair(level[i], level[i + 1]));
      level = std::move(next);
    }
    return level[0];
  }
  Values sum(call.elements(), 0.0);
  for (std::size_t r = 0; r < p; ++r)
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += inputs[r][i];
  if (call.reduction == Reduction::avg)
    for (double& x : sum) x /= static_cast<double>(p);
  return sum;
}

Values slice(const Values& v, ElementRange r) {
  return Values(v.begin() + static_cast<std::ptrdiff_t>(r.begin),
                v.begin() + static_cast<std::ptrdiff_t>(r.end));
}

} // namespace

std::vector<Values> exact_outputs(const CollectiveCall& call, const std::vector<Values>& inputs) {
  const auto p = static_cast<std::size_t>(call.ranks);
  const std::uint64_t n = call.elements();
  if (inputs.size() < p) throw InputError("exact_outputs", "fewer input vectors than ranks");
  std::vector<Values> out(p);
  switch (call.op) {
  case Op::all_reduce: {
    const Values all = reduce_all(call, inputs);
    for (auto& o : out) o = all;
    break;
  }
  case Op::reduce_scatter: {
    const Values all = reduce_all(call, inputs);
    for (std::size_t r = 0; r < p; ++r) out[r] = slice(all, partition(n, p, r));
    break;
  }
  case Op::reduce:
    out[static_cast<std::size_t>(call.root)] = reduce_all(call, inputs);
    break;
  case Op::all_gather: {
    Values all;
    for (std::size_t r = 0; r < p; ++r) all.insert(all.end(), inputs[r].begin(), inputs[r].end());
    for (auto& o : out) o = all;
    break;
  }
  case Op::broadcast:
    for (auto& o : out) o = inputs[static_cast<std::size_t>(call.root)];
    break;
  case Op::all_to_all:
    for (std::size_t j = 0; j < p; ++j)
      for (std::size_t i = 0; i < p; ++i) {
        const Values part = slice(inputs[i], partition(n, p, j));
        out[j].insert(out[j].end(), part.begin(), part.end());
      }
    break;
  case Op::send_recv:
    out[static_cast<std::size_t>(call.root)] = inputs[0];
    break;
  }
  return out;
}

std::vector<Values> Algorithm::expected_outputs(const CollectiveCall& call,
                                                const std::vector<Values>& inputs) const {
  return exact_outputs(call, inputs);
}

} // namespace ddlsim::coll
