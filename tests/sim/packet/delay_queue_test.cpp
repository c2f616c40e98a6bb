// The packet engine's event queue must pop in exactly the shared EventQueue's order (time, then
// insertion): byte-identical reports rest on it. Each case drives both queues with the same
// pushes and compares what they pop.
#include "ddlsim/sim/event_queue.hpp"
#include "delay_queue.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

using namespace ddlsim;

namespace {

using Queue = sim::packet::DelayQueue<int>;

// Both queues side by side: every push goes to both, every pop must agree.
struct Pair {
  sim::EventQueue<int> reference;
  Queue queue;
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

TEST_CASE("the packet event queue pops as the radix heap does with fixed delays ties and others") {
  std::mt19937_64 random(11);
  Pair pair;
  for (int i = 0; i < 3000; ++i) pair.push(static_cast<Picoseconds>(random() % 2'000'000));
  // A few fixed delays (serializations, serialization + latency), as the engine pushes, some
  // equal to a sum of others so that runs tie; and arbitrary ones.
  const Picoseconds fixed[] = {166'400, 666'400, 2'560, 502'560, 13'867, 0, 333'867};
  while (!pair.reference.empty()) {
    const Picoseconds now = pair.pop();
    if (pair.next_id >= 300'000) continue;
    const std::uint64_t pick = random() % 10;
    if (pick < 6) pair.push(now + fixed[random() % std::size(fixed)]);
    if (pick < 2) pair.push(now + fixed[random() % std::size(fixed)]);
    if (pick == 6) pair.push(now + static_cast<Picoseconds>(random() % 700'000));
    if (pick == 7) pair.push(now + static_cast<Picoseconds>(random() % 50'000'000)); // timers
    if (pick == 8) pair.push(now);
  }
  CHECK(pair.queue.empty());
  CHECK(pair.popped.size() == pair.popped_reference.size());
  CHECK(pair.popped == pair.popped_reference);
}

TEST_CASE("events of one time pushed with different delays pop in insertion order") {
  Pair pair;
  pair.push(1000); // delay 1000 from the clock at 0
  pair.push(700);
  pair.pop();      // the clock at 700
  pair.push(1000); // delay 300: another run, same time as the first event
  pair.push(1000); // delay 300 again: behind it in that run
  pair.push(800);
  pair.pop();      // the clock at 800
  pair.push(1000); // delay 200
  while (!pair.reference.empty()) pair.pop();
  CHECK(pair.popped == pair.popped_reference);
  CHECK(pair.popped == std::vector<int>{1, 4, 0, 2, 3, 5});
}

TEST_CASE("a peek then a push before the next event but not before the clock keeps the order") {
  Pair pair;
  pair.push(100);
  pair.push(900'000);
  pair.push(3'000'000'000);
  pair.pop();                               // the clock at 100
  CHECK(pair.queue.next_time() == 900'000); // a peek (as the engine's slowdown check does)
  pair.push(400);
  pair.push(100); // at the clock itself
  CHECK(pair.queue.next_time() == 100);
  pair.push(900'000);
  while (!pair.reference.empty()) pair.pop();
  CHECK(pair.popped == pair.popped_reference);
  CHECK(pair.popped == std::vector<int>{0, 4, 3, 1, 5, 2});
}

TEST_CASE("an event before the clock is refused") {
  Queue queue;
  queue.push(1000, 1);
  CHECK(queue.pop() == 1);
  CHECK_THROWS_AS(queue.push(999, 2), std::logic_error);
}
