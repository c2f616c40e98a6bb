// Compute steps and cross-program waits (rule 1 of step.hpp): the pieces a training workload is
// made of. The reference executor must honour a wait across channels, validate() must reject a
// wait that points nowhere, and dumps must keep both.
#include "helpers.hpp"

#include "ddlsim/collectives/dump.hpp"
#include "ddlsim/collectives/reference.hpp"
#include "ddlsim/core/input_error.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace ddlsim;
using namespace ddlsim::coll;
using namespace ddlsim::coll::test;
using Catch::Matchers::Contains;

namespace {

Step compute(double picoseconds, std::uint16_t channel) {
  Step step;
  step.kind = StepKind::compute;
  step.param = picoseconds;
  step.channel = channel;
  return step;
}
Step waiting(Step step, std::uint16_t channel, std::uint32_t index) {
  step.wait_channel = channel;
  step.wait_step = index;
  return step;
}
Step on_channel(Step step, std::uint16_t channel) {
  step.channel = channel;
  return step;
}

// Two ranks, two channels: channel 0 computes, channel 1 sends rank 0's input to rank 1 once
// rank 0's compute is done; rank 1 computes again after the data arrived.
MaterializedSchedule two_streams() {
  MaterializedSchedule m;
  m.call = make_call(Op::send_recv, "hand_made", 2, 4); // 4 fp32 elements = 16 B
  m.call.root = 1;
  m.algorithm = "hand_made";
  m.ranks = 2;
  m.channels = 2;
  m.scratch_bytes = {0, 0};
  const BufferRange in{Buffer::input, 0, 16}, out{Buffer::output, 0, 16};
  m.programs = {
      {{compute(1e6, 0)}, {waiting(on_channel(step_of(StepKind::send, 1, in, {}, 16), 1), 0, 0)}},
      {{waiting(compute(2e6, 0), 1, 0)}, {on_channel(step_of(StepKind::recv, 0, {}, out, 16), 1)}},
  };
  return m;
}

} // namespace

TEST_CASE("compute and wait: the reference executor runs a cross-channel wait") {
  const Schedule schedule = Schedule::from_materialized(two_streams());
  const ReferenceResult result = run_reference(schedule);
  INFO(result.error);
  CHECK(result.ok);
}

TEST_CASE("compute and wait: a wait that can never be satisfied is reported as a deadlock") {
  MaterializedSchedule m = two_streams();
  // Rank 0's compute now waits for its own send, which waits for that compute.
  m.programs[0][0][0] = waiting(compute(1e6, 0), 1, 0);
  const ReferenceResult result = run_reference(Schedule::from_materialized(m));
  CHECK_FALSE(result.ok);
  CHECK(result.deadlock);
  CHECK_THAT(result.error, Contains("waits for channel 1 step 0"));
}

TEST_CASE("compute and wait: validate rejects waits that point nowhere and bad compute steps") {
  MaterializedSchedule m = two_streams();
  SECTION("a wait for a step past the end of the program") {
    m.programs[1][0][0].wait_step = 5;
    CHECK_THROWS_WITH(validate(m), Contains("waits for channel 1 step 5, which does not exist"));
  }
  SECTION("a wait for a channel the schedule does not have") {
    m.programs[1][0][0].wait_channel = 7;
    CHECK_THROWS_WITH(validate(m), Contains("which does not exist (2 channels)"));
  }
  SECTION("a wait for its own channel") {
    m.programs[1][0][0].wait_channel = 0;
    CHECK_THROWS_WITH(validate(m), Contains("of its own channel"));
  }
  SECTION("a compute step that moves bytes") {
    m.programs[0][0][0].bytes = 8;
    CHECK_THROWS_WITH(validate(m), Contains("compute touches no buffer"));
  }
  SECTION("a compute step with a fractional or negative duration") {
    m.programs[0][0][0].param = 0.5;
    CHECK_THROWS_WITH(validate(m), Contains("whole number of picoseconds"));
    m.programs[0][0][0].param = -1;
    CHECK_THROWS_WITH(validate(m), Contains("whole number of picoseconds"));
  }
}

TEST_CASE("compute and wait: the JSON dump keeps compute steps and waits") {
  const MaterializedSchedule m = two_streams();
  const Json dump = to_json(m);
  const Json& step = dump["programs"][1]["steps"][0];
  CHECK(step["kind"] == "send");
  CHECK(step["wait"] == Json::array({0, 0}));
  CHECK(dump["programs"][0]["steps"][0]["param"] == 1e6);
  const MaterializedSchedule loaded = schedule_from_json(JsonValue(dump, "dump"));
  CHECK(loaded == m);
  std::ostringstream text;
  write_text(m, text);
  CHECK_THAT(text.str(), Contains("rank 0 ch 0 #0 compute 1000000 ps"));
  CHECK_THAT(text.str(), Contains("rank 1 ch 0 #0 compute 2000000 ps"));
  CHECK_THAT(text.str(), Contains("wait ch 1 #0"));
}
