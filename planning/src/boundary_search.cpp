#include "ddlsim/planning/boundary_search.hpp"

#include <algorithm>
#include <cmath>

namespace ddlsim::plan {
namespace {

// pass() with every answer remembered, so no point is simulated twice.
class Memo {
public:
  explicit Memo(const std::function<bool(int)>& pass) : pass_(pass) {}
  bool operator()(int n) {
    const auto it = seen_.find(n);
    if (it != seen_.end()) return it->second;
    return seen_[n] = pass_(n);
  }
  int evaluations() const { return int(seen_.size()); }

private:
  const std::function<bool(int)>& pass_;
  std::map<int, bool> seen_;
};

} // namespace

IntBoundary largest_passing(int lo, int hi, int start, const std::function<bool(int)>& pass) {
  IntBoundary out;
  if (lo > hi) return out;
  Memo memo(pass);
  int good = 0, bad = 0; // good passes, bad fails, good < bad once both are known
  bool have_good = false, have_bad = false;
  int probe = std::clamp(start, lo, hi);
  // Gallop: double the step away from the start until the answer flips or the range ends.
  for (int step = 1;; step *= 2) {
    if (memo(probe)) {
      good = probe, have_good = true;
      if (probe == hi || (have_bad && bad == probe + 1)) break;
      if (have_bad) break;
      probe = int(std::min<long long>(hi, (long long)probe + step));
    } else {
      bad = probe, have_bad = true;
      if (probe == lo) break;
      if (have_good) break;
      probe = int(std::max<long long>(lo, (long long)probe - step));
    }
  }
  out.evaluations = memo.evaluations();
  if (!have_good) return out; // pass(lo) fails
  out.found = true;
  if (!have_bad) { // passes up to hi
    out.value = good;
    out.at_limit = true;
    return out;
  }
  while (bad - good > 1) {
    const int mid = good + (bad - good) / 2;
    (memo(mid) ? good : bad) = mid;
  }
  out.value = good;
  out.evaluations = memo.evaluations();
  return out;
}

IntBoundary smallest_passing(int lo, int hi, int start, const std::function<bool(int)>& pass) {
  // Mirror the range: the smallest passing n is the largest passing -n.
  const std::function<bool(int)> mirrored = [&pass](int m) { return pass(-m); };
  IntBoundary out = largest_passing(-hi, -lo, -start, mirrored);
  out.value = -out.value;
  return out;
}

RealBoundary smallest_passing_real(double lo, double hi, double start, double tolerance,
                                   const std::function<bool(double)>& pass) {
  // On the grid x_k = lo·(1 + tolerance)^k the real search is an integer one.
  RealBoundary out;
  if (!(lo > 0) || !(hi >= lo) || !(tolerance > 0)) return out;
  const double ratio = std::log1p(tolerance);
  const int top = int(std::ceil(std::log(hi / lo) / ratio));
  const auto at = [&](int k) { return std::min(hi, lo * std::exp(ratio * k)); };
  const int first = int(std::lround(std::log(std::clamp(start, lo, hi) / lo) / ratio));
  const IntBoundary k = smallest_passing(0, top, first, [&](int i) { return pass(at(i)); });
  out.found = k.found;
  out.evaluations = k.evaluations;
  if (!k.found) return out;
  out.value = at(k.value);
  out.below = k.value > 0 ? at(k.value - 1) : lo;
  out.at_limit = k.value == 0;
  return out;
}

} // namespace ddlsim::plan
