// The Pareto front of points that minimise two objectives (time and cost).
#pragma once

#include <utility>
#include <vector>

namespace ddlsim::plan {

// front[i] is true when no other point is at least as good in both objectives and strictly
// better in one. Equal points are all on the front. O(n log n).
std::vector<bool> pareto_front(const std::vector<std::pair<double, double>>& points);

} // namespace ddlsim::plan
