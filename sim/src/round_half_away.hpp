// round_half_away: std::llround, inline, for the engines' inner loops.
#pragma once

#include "ddlsim/core/sim_time.hpp"

#include <cmath>
#include <cstdint>

namespace ddlsim::sim::detail {

// std::llround(x) (halves away from zero), inline for the non-negative values below 4e18 that
// durations in picoseconds are: the library call was 3% of a 16k-rank run. Anything else goes to
// std::llround. Exact: the conversion truncates, and below 2^53 x - trunc(x) is exact (Sterbenz;
// above 2^53 x has no fraction).
inline std::int64_t round_half_away(double x) {
  if (!(x >= 0.0 && x < 4.0e18)) [[unlikely]]
    return checked_ps(x); // past 2^62 ps (or NaN, negative): an InputError, never a wrap
  const auto whole = static_cast<std::int64_t>(x);
  return whole + (x - static_cast<double>(whole) >= 0.5 ? 1 : 0);
}

} // namespace ddlsim::sim::detail
