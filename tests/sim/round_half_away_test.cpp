// round_half_away must equal std::llround wherever the engines use it: the dependency-order
// evaluation rounds with it and must match the event-driven one to the picosecond.
#include "round_half_away.hpp"

#include "ddlsim/core/input_error.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

using ddlsim::sim::detail::round_half_away;

TEST_CASE("round_half_away equals std::llround on values, halves and their neighbours") {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  long long mismatches = 0;
  for (int exponent = -8; exponent < 62; ++exponent)
    for (int i = 0; i < 2000; ++i) {
      const double x = std::ldexp(mantissa(random), exponent);
      const double half = std::floor(x) + 0.5;
      for (const double value : {x, half, std::nextafter(half, 0.0), std::nextafter(half, 1e300)})
        mismatches += round_half_away(value) != std::llround(value) ? 1 : 0;
    }
  CHECK(mismatches == 0);
  for (const double value : {0.0, 0.5, 1.5, 2.5, 0.49999999999999994, 4503599627370495.5,
                             9007199254740993.0, 3.9e18, 4.5e18})
    CHECK(round_half_away(value) == std::llround(value));
}

TEST_CASE("round_half_away refuses what is no duration below 2^62 ps instead of wrapping") {
  // sim_time.hpp: a simulated time past 2^62 ps (or negative, or NaN) is an InputError.
  for (const double value : {5e18, 1e300, -2.5, std::nan("")})
    CHECK_THROWS_AS(round_half_away(value), ddlsim::InputError);
}
