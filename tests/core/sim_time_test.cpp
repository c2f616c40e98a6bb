// Simulated time that cannot wrap (sim_time.hpp): durations and clock values at or past
// kMaxSimulatedPs, NaN, negative or from a zero rate are an InputError, never a wrapped number.
#include "ddlsim/core/sim_time.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace ddlsim;

TEST_CASE("sim_time: a duration rounds like llround below the bound") {
  CHECK(checked_transfer_ps(1e6, 1e10) == 100'000'000); // 1 MB at 10 GB/s = 100 us
  CHECK(checked_ps(2.5) == 3);
  CHECK(checked_ps(0.0) == 0);
  CHECK(checked_ps(4.0e18) == std::llround(4.0e18));
  CHECK(checked_later(kMaxSimulatedPs - 2, 1) == kMaxSimulatedPs - 1);
}

TEST_CASE("sim_time: a duration past 2^62 ps, NaN, negative or unbounded throws") {
  // 1 MiB over 1e-9 Gb/s (0.125 B/s) is 97 days: the wrap that made such runs look fast.
  CHECK_THROWS_AS(checked_transfer_ps(1048576.0, 1e-9 * 1e9 / 8), InputError);
  CHECK_THROWS_WITH(checked_transfer_ps(1048576.0, 1e-11 * 1e9 / 8),
                    Catch::Contains("simulated time") && Catch::Contains("days) an engine can "
                                                                         "count"));
  CHECK_THROWS_AS(checked_transfer_ps(1.0, 0.0), InputError);
  CHECK_THROWS_WITH(checked_transfer_ps(1.0, 0.0), Catch::Contains("an unbounded time"));
  CHECK_THROWS_AS(checked_ps(std::nan("")), InputError);
  CHECK_THROWS_AS(checked_ps(-1.0), InputError);
  CHECK_THROWS_AS(checked_ps(static_cast<double>(kMaxSimulatedPs)), InputError);
  CHECK_THROWS_AS(checked_ps(std::numeric_limits<double>::infinity()), InputError);
}

TEST_CASE("sim_time: a clock at or past the bound throws, below it passes") {
  CHECK(checked_time(kMaxSimulatedPs - 1) == kMaxSimulatedPs - 1);
  CHECK_THROWS_AS(checked_time(kMaxSimulatedPs), InputError);
  CHECK_THROWS_AS(checked_later(kMaxSimulatedPs - 1, 1), InputError);
  CHECK_THROWS_AS(checked_later(kMaxSimulatedPs - 1, kMaxSimulatedPs - 1), InputError);
  CHECK_THROWS_AS(checked_time(-5), InputError);
}
