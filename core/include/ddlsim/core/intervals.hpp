// Intervals on a time line.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace ddlsim {

// The total length of the union of [start, end) intervals, in any order and overlapping.
inline std::int64_t union_length(std::vector<std::pair<std::int64_t, std::int64_t>> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::int64_t total = 0, end = 0;
  bool any = false;
  for (const auto& [start, stop] : intervals) {
    if (!any || start > end) {
      total += stop - start;
      end = stop;
      any = true;
    } else if (stop > end) {
      total += stop - end;
      end = stop;
    }
  }
  return total;
}

} // namespace ddlsim
