// The event queue must pop in exactly (time, insertion) order, however its buckets and their
// cache of recent times are arranged: engine determinism rests on it.
#include "ddlsim/sim/event_queue.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <tuple>
#include <vector>

using namespace ddlsim;
using namespace ddlsim::sim;

TEST_CASE("events pop by time then insertion order across many interleaved times") {
  // More distinct times than the bucket cache holds, pushed interleaved and also while popping,
  // so buckets of one time get evicted from the cache and reopened.
  std::mt19937_64 random(7);
  EventQueue<int> queue;
  std::vector<std::tuple<Picoseconds, int>> reference; // (time, insertion number)
  int next_id = 0;
  auto push = [&](Picoseconds time) {
    queue.push(time, next_id);
    reference.emplace_back(time, next_id);
    ++next_id;
  };
  for (int i = 0; i < 2000; ++i) push(static_cast<Picoseconds>(random() % 13));
  std::vector<int> popped;
  Picoseconds now = 0;
  while (!queue.empty()) {
    now = queue.next_time();
    popped.push_back(queue.pop());
    // Handlers schedule new events at this instant and later ones.
    if (next_id < 4000 && random() % 3 == 0) push(now + static_cast<Picoseconds>(random() % 5));
  }
  // The reference: a stable sort by time of everything in insertion order, consumed the same way
  // (events pushed at `now` while popping land after those already queued at `now`).
  std::stable_sort(reference.begin(), reference.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  std::vector<int> expected;
  for (const auto& [time, id] : reference) expected.push_back(id);
  CHECK(popped.size() == expected.size());
  CHECK(popped == expected);
}

TEST_CASE("an empty queue reports empty and a drained time can be used again") {
  EventQueue<int> queue;
  CHECK(queue.empty());
  queue.push(5, 1);
  CHECK(queue.pop() == 1);
  CHECK(queue.empty());
  queue.push(8, 2);
  queue.push(5, 3);
  CHECK(queue.next_time() == 5);
  CHECK(queue.pop() == 3);
  CHECK(queue.pop() == 2);
  CHECK(queue.size() == 0);
}

TEST_CASE("an event may be pushed before the next one after a peek, not before the last popped") {
  // The flow-sharing evaluation looks at the next event, then moves to an earlier completion
  // and schedules events between the two.
  EventQueue<int> queue;
  queue.push(100, 1);
  queue.push(1000, 2);
  CHECK(queue.pop() == 1); // the last popped time is now 100
  CHECK(queue.next_time() == 1000);
  queue.push(400, 3);
  queue.push(100, 4); // the last popped time itself
  CHECK(queue.next_time() == 100);
  CHECK(queue.pop() == 4);
  CHECK(queue.next_time() == 400);
  queue.push(400, 5);
  CHECK(queue.pop() == 3);
  CHECK(queue.pop() == 5);
  CHECK(queue.pop() == 2);
  CHECK(queue.empty());
}

TEST_CASE("events far apart in time pop in order, ties first-in first-out") {
  // Times spread over many bits move through many buckets before they are popped.
  std::mt19937_64 random(3);
  EventQueue<int> queue;
  std::vector<std::tuple<Picoseconds, int>> reference;
  int next_id = 0;
  Picoseconds now = 0;
  auto push = [&](Picoseconds time) {
    queue.push(time, next_id);
    reference.emplace_back(time, next_id);
    ++next_id;
  };
  for (int i = 0; i < 3000; ++i) {
    // A few distinct far times (ties) and many spread ones.
    const Picoseconds offset =
        i % 3 == 0 ? Picoseconds{1} << (20 + i % 20) : static_cast<Picoseconds>(random() >> 22);
    push(now + offset);
    if (i % 4 == 0) {
      // Pop a few, checking the order against a stable sort of what was pushed.
      for (int k = 0; k < 2 && !queue.empty(); ++k) {
        std::stable_sort(reference.begin(), reference.end(), [](const auto& a, const auto& b) {
          return std::get<0>(a) < std::get<0>(b);
        });
        REQUIRE(queue.next_time() == std::get<0>(reference.front()));
        now = queue.next_time();
        CHECK(queue.pop() == std::get<1>(reference.front()));
        reference.erase(reference.begin());
      }
    }
  }
  std::stable_sort(reference.begin(), reference.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  for (const auto& [time, id] : reference) {
    REQUIRE(queue.next_time() == time);
    CHECK(queue.pop() == id);
  }
  CHECK(queue.empty());
}

TEST_CASE("a look-ahead queue pops in exactly the event queue's order") {
  // Events pushed while popping land before, inside and after the window; the order must be
  // (time, insertion) all the same, and the window must show the next events in that order.
  std::mt19937_64 random(11);
  LookaheadQueue<int> lookahead(4);
  EventQueue<int> plain;
  int next_id = 0;
  auto push = [&](Picoseconds time) {
    lookahead.push(time, next_id);
    plain.push(time, next_id);
    ++next_id;
  };
  for (int i = 0; i < 500; ++i) push(static_cast<Picoseconds>(random() % 1000)); // with ties
  std::size_t pops = 0, inside = 0;
  while (true) {
    lookahead.fill();
    if (lookahead.empty()) break;
    REQUIRE(!plain.empty());
    // The window holds the next events: the first is the plain queue's next.
    const Picoseconds now = lookahead.next_time();
    CHECK(now == plain.next_time());
    for (std::size_t i = 1; i < lookahead.window_size(); ++i)
      CHECK(lookahead.at(i - 1).time <= lookahead.at(i).time);
    CHECK(lookahead.pop() == plain.pop());
    ++pops;
    if (next_id < 3000 && random() % 2 == 0) {
      const std::size_t size = lookahead.window_size();
      const Picoseconds time = now + static_cast<Picoseconds>(random() % 20);
      if (lookahead.push(time, next_id) < size) ++inside;
      plain.push(time, next_id);
      ++next_id;
    }
  }
  CHECK(plain.empty());
  CHECK(pops == static_cast<std::size_t>(next_id));
  CHECK(inside > 50); // the case that matters was exercised
}
