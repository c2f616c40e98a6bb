// Boundary searches for `ddlsim guide`: where a monotone yes/no question about a simulated
// cluster changes its answer (the largest GPU count that keeps an efficiency target, the
// smallest NIC rate that reaches it, ...). Each search starts from an estimate (the closed-form
// rule's answer), gallops away from it until the answer flips, then bisects, so a good estimate
// costs a handful of simulations. What it returns is checked, not assumed: the boundary's own
// evaluation passes and its neighbour's fails (or the boundary is the end of the range).
//
// The predicate is assumed monotone over the range; where it is not (a simulated efficiency
// that wiggles with the node count), the result is still a true boundary between a passing and
// a failing neighbour, the one nearest the estimate.
#pragma once

#include <functional>
#include <map>

namespace ddlsim::plan {

struct IntBoundary {
  bool found = false;    // some value in the range passes
  int value = 0;         // the boundary (passes)
  bool at_limit = false; // the boundary is the end of the range: the next step was not tried
  int evaluations = 0;
};

// The largest n in [lo, hi] with pass(n), where pass holds below some n and fails above it:
// pass(n) and (n == hi or !pass(n + 1)). `start` is the first guess (clamped into the range).
IntBoundary largest_passing(int lo, int hi, int start, const std::function<bool(int)>& pass);

// The smallest n in [lo, hi] with pass(n), where pass fails below some n and holds above it:
// pass(n) and (n == lo or !pass(n - 1)).
IntBoundary smallest_passing(int lo, int hi, int start, const std::function<bool(int)>& pass);

struct RealBoundary {
  bool found = false;
  double value = 0;      // passes
  double below = 0;      // value / (1 + tolerance): fails (unless at_limit)
  bool at_limit = false; // value is lo
  int evaluations = 0;
};

// The smallest x in [lo, hi] (lo > 0) with pass(x), to a relative `tolerance`: pass(value) and
// (value == lo or !pass(value / (1 + tolerance))), searched on a log scale from `start`.
RealBoundary smallest_passing_real(double lo, double hi, double start, double tolerance,
                                   const std::function<bool(double)>& pass);

} // namespace ddlsim::plan
