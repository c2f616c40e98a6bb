// The guide's searches: each finds a true boundary (passes at it, fails one step beyond) from
// any starting estimate, says when the range ends first, and needs few evaluations.
#include "ddlsim/planning/boundary_search.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace ddlsim::plan;

TEST_CASE("boundary search: the largest passing integer from any estimate") {
  for (int start : {1, 5, 37, 38, 39, 500, 1000}) {
    int calls = 0;
    const IntBoundary b = largest_passing(1, 1000, start, [&](int n) {
      ++calls;
      return n <= 37;
    });
    INFO(start);
    CHECK(b.found);
    CHECK(b.value == 37);
    CHECK_FALSE(b.at_limit);
    CHECK(b.evaluations == calls);
    CHECK(calls <= 24); // gallop + bisection: O(log distance), never a scan
  }
  CHECK(largest_passing(1, 1000, 500, [](int) { return true; }).at_limit);
  CHECK(largest_passing(1, 1000, 500, [](int) { return true; }).value == 1000);
  CHECK_FALSE(largest_passing(1, 1000, 500, [](int) { return false; }).found);
}

TEST_CASE("boundary search: the smallest passing integer") {
  for (int start : {1, 77, 78, 79, 4096}) {
    const IntBoundary b = smallest_passing(1, 4096, start, [](int n) { return n >= 78; });
    INFO(start);
    CHECK(b.found);
    CHECK(b.value == 78);
    CHECK_FALSE(b.at_limit);
  }
  const IntBoundary all = smallest_passing(1, 4096, 100, [](int) { return true; });
  CHECK((all.found && all.value == 1 && all.at_limit));
  CHECK_FALSE(smallest_passing(1, 4096, 100, [](int) { return false; }).found);
}

TEST_CASE("boundary search: the smallest passing real to a relative tolerance") {
  const double edge = 34.6;
  for (double start : {0.1, 10.0, 34.0, 35.0, 1e4}) {
    const RealBoundary b =
        smallest_passing_real(0.025, 25000, start, 0.01, [&](double x) { return x >= edge; });
    INFO(start);
    REQUIRE(b.found);
    CHECK(b.value >= edge);
    CHECK(b.below < edge);
    CHECK(b.value / b.below == Approx(1.01));
    CHECK(b.evaluations <= 40);
  }
  CHECK_FALSE(smallest_passing_real(1, 10, 5, 0.01, [](double) { return false; }).found);
  CHECK(smallest_passing_real(1, 10, 5, 0.01, [](double) { return true; }).at_limit);
}
