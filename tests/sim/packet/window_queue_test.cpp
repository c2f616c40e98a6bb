// The packet engine's calendar queue must pop in exactly the shared EventQueue's order (time,
// then insertion): byte-identical reports rest on it. Each case drives both queues with the same
// pushes and compares what they pop.
#include "ddlsim/sim/event_queue.hpp"
#include "window_queue.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

using namespace ddlsim;

namespace {

// Pushes to both queues, pops both while handlers push more at and after the clock (near,
// within the calendar's window, and far past it), and returns whether every pop matched.
struct Pair {
  sim::EventQueue<int> reference;
  sim::packet::WindowQueue<int> queue;
  int next_id = 0;
  std::vector<int> popped_reference, popped;

  void push(Picoseconds time) {
    reference.push(time, next_id);
    queue.push(time, next_id);
    ++next_id;
  }
  Picoseconds pop() {
    const Picoseconds time = reference.next_time();
    REQUIRE(queue.next_time() == time);
    popped_reference.push_back(reference.pop());
    popped.push_back(queue.pop());
    return time;
  }
};

} // namespace

TEST_CASE("the calendar queue pops as the radix heap does with near far and tied events") {
  std::mt19937_64 random(11);
  Pair pair;
  for (int i = 0; i < 3000; ++i) pair.push(static_cast<Picoseconds>(random() % 2'000'000));
  while (!pair.reference.empty()) {
    const Picoseconds now = pair.pop();
    if (pair.next_id >= 200'000) continue;
    const std::uint64_t pick = random() % 10;
    if (pick < 3) pair.push(now); // at this instant, after those already due now
    if (pick < 6) pair.push(now + static_cast<Picoseconds>(random() % 700'000)); // in the window
    if (pick == 6) pair.push(now + 166'400 * static_cast<Picoseconds>(random() % 4)); // ties
    if (pick == 7) pair.push(now + static_cast<Picoseconds>(random() % 50'000'000));  // far
    if (pick == 8) pair.push(now + 1'048'576); // just past the window's end, then ties inside it
  }
  CHECK(pair.queue.empty());
  CHECK(pair.popped.size() == pair.popped_reference.size());
  CHECK(pair.popped == pair.popped_reference);
}

TEST_CASE("an event due with one in the far heap pops after it") {
  sim::packet::WindowQueue<int> queue;
  queue.push(5'000'000, 1); // beyond the window from time 0: the heap
  queue.push(4'500'000, 2); // also beyond
  CHECK(queue.pop() == 2);  // the clock at 4.5 us: 5 us is inside the window now
  queue.push(5'000'000, 3); // the calendar, same time as 1: after it
  queue.push(4'600'000, 4);
  CHECK(queue.next_time() == 4'600'000);
  CHECK(queue.pop() == 4);
  CHECK(queue.pop() == 1);
  CHECK(queue.pop() == 3);
  CHECK(queue.empty());
}

TEST_CASE("a peek then a push before the next event but not before the clock keeps the order") {
  Pair pair;
  pair.push(100);
  pair.push(900'000);
  pair.push(3'000'000'000);
  pair.pop();                               // the clock at 100
  CHECK(pair.queue.next_time() == 900'000); // a peek (as the engine's slowdown check does)
  pair.push(400);                           // earlier than the peeked bucket
  pair.push(100);                           // at the clock itself
  CHECK(pair.queue.next_time() == 100);
  pair.push(900'000); // into the sorted earliest-but-one bucket
  while (!pair.reference.empty()) pair.pop();
  CHECK(pair.popped == pair.popped_reference);
  CHECK(pair.popped == std::vector<int>{0, 4, 3, 1, 5, 2});
}

TEST_CASE("an event before the clock is refused") {
  sim::packet::WindowQueue<int> queue;
  queue.push(1000, 1);
  CHECK(queue.pop() == 1);
  CHECK_THROWS_AS(queue.push(999, 2), std::logic_error);
}
