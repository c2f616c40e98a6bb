// Generator frames live in shared huge-page chunks (collectives/src/frame_arena.cpp): thousands
// of frames alive at once, spanning many chunks, freed in any order and on another thread than
// the one that made them, must each keep their own state.
#include "ddlsim/collectives/step_stream.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <thread>
#include <vector>

using namespace ddlsim::coll;

namespace {

// Steps whose bytes are id * 1000 + i for i < n, with a local array so that the frame is large.
StepStream tagged(std::uint64_t id, int n) {
  std::array<std::uint64_t, 64> scratch{};
  for (int i = 0; i < n; ++i) {
    scratch[static_cast<std::size_t>(i) % scratch.size()] += id;
    Step step;
    step.bytes = id * 1000 + static_cast<std::uint64_t>(i);
    step.param = static_cast<double>(scratch[static_cast<std::size_t>(i) % scratch.size()]);
    co_yield step;
  }
}

// Pulls one step from every stream in turn until all end, checking each one's steps.
void drain_interleaved(std::vector<StepStream>& streams, const std::vector<std::uint64_t>& ids,
                       int n) {
  std::vector<int> seen(streams.size(), 0);
  for (int round = 0; round <= n; ++round)
    for (std::size_t s = 0; s < streams.size(); ++s) {
      const Step* step = streams[s].next();
      if (round == n) {
        CHECK(step == nullptr);
        continue;
      }
      REQUIRE(step != nullptr);
      CHECK(step->bytes == ids[s] * 1000 + static_cast<std::uint64_t>(round));
      ++seen[s];
    }
  CHECK(std::all_of(seen.begin(), seen.end(), [n](int count) { return count == n; }));
}

} // namespace

TEST_CASE("frame arena: many live frames keep their own state, freed in any order") {
  std::mt19937 random(5);
  constexpr int kSteps = 20;
  for (int pass = 0; pass < 3; ++pass) {
    // About 4000 frames of over 1 KiB: several 2 MiB chunks.
    std::vector<StepStream> streams;
    std::vector<std::uint64_t> ids;
    for (std::uint64_t id = 0; id < 4000; ++id) {
      streams.push_back(tagged(id + 1, kSteps));
      ids.push_back(id + 1);
    }
    // Free half in random order before using the rest: their chunks must stay intact.
    std::vector<std::size_t> order(streams.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), random);
    std::vector<StepStream> kept;
    std::vector<std::uint64_t> kept_ids;
    for (std::size_t k = 0; k < order.size(); ++k) {
      if (k % 2 == 0) {
        kept.push_back(std::move(streams[order[k]]));
        kept_ids.push_back(ids[order[k]]);
      } else {
        streams[order[k]] = StepStream();
      }
    }
    drain_interleaved(kept, kept_ids, kSteps);
  }
}

TEST_CASE("frame arena: a frame made on one thread can be used and freed on another") {
  std::vector<StepStream> streams;
  std::vector<std::uint64_t> ids;
  std::thread maker([&] {
    for (std::uint64_t id = 1; id <= 3000; ++id) {
      streams.push_back(tagged(id, 5));
      ids.push_back(id);
    }
  });
  maker.join(); // the maker's current chunk is released as it ends
  drain_interleaved(streams, ids, 5);
  streams.clear();
  // And the other way round: made here, freed by another thread.
  for (std::uint64_t id = 1; id <= 3000; ++id) streams.push_back(tagged(id, 5));
  std::thread freer([&] { streams.clear(); });
  freer.join();
  CHECK(streams.empty());
}

TEST_CASE("frame arena: many threads that each make a few frames") {
  // Each thread starts on a small chunk of its own (no huge page pinned per thread); the
  // frames must still be right, and may outlive their thread. (Catch2 assertions are not
  // thread-safe: the threads record what they saw, the test checks it afterwards.)
  std::vector<StepStream> survivors(32);
  std::vector<std::vector<std::uint64_t>> seen(survivors.size());
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < survivors.size(); ++t)
    threads.emplace_back([&survivors, &seen, t] {
      StepStream local = tagged(t + 1, 3);
      for (const Step* step = local.next(); step != nullptr; step = local.next())
        seen[t].push_back(step->bytes);
      survivors[t] = tagged(t + 101, 2);
    });
  for (std::thread& thread : threads) thread.join();
  for (std::size_t t = 0; t < survivors.size(); ++t) {
    CHECK(seen[t] ==
          std::vector<std::uint64_t>{(t + 1) * 1000, (t + 1) * 1000 + 1, (t + 1) * 1000 + 2});
    const Step* step = survivors[t].next();
    REQUIRE(step != nullptr);
    CHECK(step->bytes == (t + 101) * 1000);
  }
}
