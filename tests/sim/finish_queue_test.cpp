// The finish queue of the fluid model: one finish per flow, earliest first, a re-timed flow gone
// from its old time (nothing is reported or woken at a time no flow finishes at any more).
#include "ddlsim/sim/finish_queue.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <limits>
#include <map>
#include <random>

using namespace ddlsim;
using namespace ddlsim::sim;

namespace {

std::vector<FinishQueue::Id> take(FinishQueue& queue) {
  std::vector<FinishQueue::Id> ids;
  queue.take_earliest(ids);
  std::sort(ids.begin(), ids.end());
  return ids;
}

} // namespace

TEST_CASE("finish queue: flows come out by time, all flows of one time together") {
  FinishQueue queue;
  CHECK(queue.next() == std::numeric_limits<Picoseconds>::max());
  queue.set(3, 20);
  queue.set(1, 10);
  queue.set(2, 20);
  queue.set(0, 30);
  CHECK(queue.next() == 10);
  CHECK(take(queue) == std::vector<FinishQueue::Id>{1});
  CHECK(queue.next() == 20);
  CHECK(take(queue) == std::vector<FinishQueue::Id>{2, 3});
  CHECK(take(queue) == std::vector<FinishQueue::Id>{0});
  CHECK(queue.next() == std::numeric_limits<Picoseconds>::max());
}

TEST_CASE("finish queue: a re-timed flow leaves its old time, which is gone once empty") {
  FinishQueue queue;
  queue.set(0, 10);
  queue.set(1, 50);
  queue.set(0, 40); // 10 now has no flow: the queue no longer names it
  CHECK(queue.next() == 40);
  queue.set(1, 40);
  queue.set(1, 40); // the same time again changes nothing
  CHECK(take(queue) == std::vector<FinishQueue::Id>{0, 1});
  CHECK(queue.next() == std::numeric_limits<Picoseconds>::max());
  // An id taken out may come back with a new finish.
  queue.set(0, 60);
  CHECK(take(queue) == std::vector<FinishQueue::Id>{0});
}

TEST_CASE("finish queue: matches a plain map of each flow's last finish under random re-timing") {
  std::mt19937 random(7);
  FinishQueue queue;
  std::map<FinishQueue::Id, Picoseconds> last; // the reference: each flow's latest finish
  for (int round = 0; round < 2000; ++round) {
    const FinishQueue::Id id = FinishQueue::Id(random() % 64);
    // Few distinct times, so buckets are shared, re-timed and emptied often.
    const Picoseconds when = Picoseconds(random() % 16);
    queue.set(id, when);
    last[id] = when;
    if (round % 50 == 49) {
      Picoseconds earliest = std::numeric_limits<Picoseconds>::max();
      for (const auto& [flow, time] : last) earliest = std::min(earliest, time);
      std::vector<FinishQueue::Id> expected;
      for (const auto& [flow, time] : last)
        if (time == earliest) expected.push_back(flow);
      REQUIRE(queue.next() == earliest);
      REQUIRE(take(queue) == expected);
      for (const FinishQueue::Id flow : expected) last.erase(flow);
    }
  }
  while (!last.empty()) {
    Picoseconds earliest = std::numeric_limits<Picoseconds>::max();
    for (const auto& [flow, time] : last) earliest = std::min(earliest, time);
    REQUIRE(queue.next() == earliest);
    for (const FinishQueue::Id flow : take(queue)) REQUIRE(last.erase(flow) == 1);
  }
  CHECK(queue.next() == std::numeric_limits<Picoseconds>::max());
}
