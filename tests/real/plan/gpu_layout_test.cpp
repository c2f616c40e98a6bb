// Host-side decisions of the GPU backends: virtual ranks over GPUs, paced copy durations.
#include "ddlsim/real/gpu_layout.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace ddlsim::real;

TEST_CASE("gpu layout: virtual ranks spread over GPUs in contiguous balanced blocks") {
  CHECK(place_virtual_ranks(8, 1) == std::vector<int>(8, 0));
  CHECK(place_virtual_ranks(8, 2) == std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1});
  CHECK(place_virtual_ranks(8, 4) == std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3});
  CHECK(place_virtual_ranks(5, 2) == std::vector<int>{0, 0, 0, 1, 1});
  // More GPUs than ranks: one rank per GPU, the first ones used.
  CHECK(place_virtual_ranks(3, 8) == std::vector<int>{0, 2, 5});
  for (int ranks : {1, 2, 3, 7, 8, 13, 64})
    for (int devices : {1, 2, 3, 4, 8}) {
      const std::vector<int> place = place_virtual_ranks(ranks, devices);
      INFO(ranks << " ranks on " << devices << " GPUs");
      REQUIRE(place.size() == std::size_t(ranks));
      CHECK(std::is_sorted(place.begin(), place.end()));
      CHECK(place.back() < devices);
      // Balanced: counts per used GPU differ by at most one.
      std::vector<int> count(std::size_t(devices), 0);
      for (int d : place) ++count[std::size_t(d)];
      int low = ranks, high = 0;
      for (int c : count)
        if (c > 0) low = std::min(low, c), high = std::max(high, c);
      CHECK(high - low <= 1);
      // Ranks on a GPU: contiguous, so a ring crosses between GPUs min(ranks, devices) times.
      int crossings = 0;
      for (int r = 0; r < ranks; ++r)
        crossings += place[std::size_t(r)] != place[std::size_t((r + 1) % ranks)] ? 1 : 0;
      CHECK(crossings == (std::min(ranks, devices) > 1 ? std::min(ranks, devices) : 0));
    }
  CHECK_THROWS(place_virtual_ranks(4, 0));
}

TEST_CASE("gpu layout: a paced copy lasts latency + bytes / rate, rounded up to ns") {
  const LinkPace ten{10, 0};
  CHECK(paced_copy_ns(ten, 0) == 0);
  CHECK(paced_copy_ns(ten, 1250) == 1000);             // 10 kbit at 10 Gbit/s: 1 us
  CHECK(paced_copy_ns(ten, 1) == 1);                   // 0.8 ns rounds up
  CHECK(paced_copy_ns({100, 0}, 64 << 20) == 5368710); // 64 MiB at 100 Gbit/s
  CHECK(paced_copy_ns({0, 2.5}, 1 << 30) == 2500);     // latency only
  CHECK(paced_copy_ns({25, 5}, 1 << 20) == 5000 + 335545);
  // Monotonic: more bytes, a slower link or more latency never make a copy shorter.
  for (std::uint64_t bytes : {1ull, 1000ull, 1ull << 20, 1ull << 30}) {
    CHECK(paced_copy_ns({10, 1}, bytes * 2) > paced_copy_ns({10, 1}, bytes));
    CHECK(paced_copy_ns({5, 1}, bytes) > paced_copy_ns({10, 1}, bytes));
    CHECK(paced_copy_ns({10, 2}, bytes) > paced_copy_ns({10, 1}, bytes));
  }
  CHECK_FALSE(LinkPace{}.active());
  CHECK(LinkPace{0, 1}.active());
}

TEST_CASE("gpu layout: bad paces are named") {
  CHECK(pace_problem({}).empty());
  CHECK(pace_problem({100, 2}).empty());
  CHECK_THAT(pace_problem({-1, 0}), Catch::Contains("rate in Gbit/s"));
  CHECK_THAT(pace_problem({1e-6, 0}), Catch::Contains("below 0.001"));
  CHECK_THAT(pace_problem({1, -3}), Catch::Contains("latency"));
}
