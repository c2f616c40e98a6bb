// StepStream buffers up to kBatch steps per resume of its generator: steps must still come out
// all, in order, around the batch boundaries, and an exception must surface after the steps
// yielded before it.
#include "ddlsim/collectives/step_stream.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>

using namespace ddlsim::coll;

namespace {

// Steps whose bytes count 0, 1, ..., n-1; throws instead of yielding step `throw_at`.
StepStream numbered(int n, int throw_at = -1) {
  for (int i = 0; i < n; ++i) {
    if (i == throw_at) throw std::runtime_error("generator failed");
    Step step;
    step.bytes = static_cast<std::uint64_t>(i);
    co_yield step;
  }
}

} // namespace

TEST_CASE("step stream: every step in order across batch boundaries") {
  const int batch = StepStream::kBatch;
  for (int n : {0, 1, batch - 1, batch, batch + 1, 3 * batch + 2}) {
    StepStream stream = numbered(n);
    int seen = 0;
    for (Step step; stream.next(step); ++seen) CHECK(step.bytes == std::uint64_t(seen));
    CHECK(seen == n);
    CHECK(stream.next() == nullptr); // stays at the end
  }
}

TEST_CASE("step stream: an exception surfaces after the steps yielded before it") {
  const int throw_at = StepStream::kBatch + 3;
  StepStream stream = numbered(100, throw_at);
  for (int i = 0; i < throw_at; ++i) {
    const Step* step = stream.next();
    REQUIRE(step != nullptr);
    CHECK(step->bytes == std::uint64_t(i));
  }
  CHECK_THROWS_WITH(stream.next(), "generator failed");
}
