#include "ddlsim/planning/pareto.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace ddlsim::plan {

std::vector<bool> pareto_front(const std::vector<std::pair<double, double>>& points) {
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return points[a] < points[b]; });
  // Sweep by the first objective: a point is dominated iff an earlier point (no worse first
  // objective) has a strictly smaller second one, or an equal second one and a strictly smaller
  // first one.
  std::vector<bool> front(points.size(), false);
  double best_second = std::numeric_limits<double>::infinity();
  double best_second_first = std::numeric_limits<double>::infinity();
  for (std::size_t i : order) {
    const auto [first, second] = points[i];
    const bool dominated =
        second > best_second || (second == best_second && first > best_second_first);
    front[i] = !dominated;
    if (second < best_second) {
      best_second = second;
      best_second_first = first;
    }
  }
  return front;
}

} // namespace ddlsim::plan
