// validate(): hand-broken schedules are caught with the rank, channel and step named.
#include "helpers.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::coll;
using namespace ddlsim::coll::test;
using Catch::Matchers::Contains;

namespace {

// A ring all-reduce of 4 ranks over 16 fp32 elements: rank 0's program starts
//   #0 send to 1 input[0,16), #1 recv_reduce from 3 input[48,64) -> output[48,64), #2 send deps 1
MaterializedSchedule ring4() {
  return materialize(Schedule::make(make_call(Op::all_reduce, "ring", 4, 16)));
}

std::string validation_error(const MaterializedSchedule& m) {
  return error_of([&] { validate(m); });
}

} // namespace

TEST_CASE("validate: a generated schedule passes") {
  CHECK(validation_error(ring4()) == "no error");
}

TEST_CASE("validate: mismatched byte counts of a send and its receive") {
  MaterializedSchedule m = ring4();
  Step& send = m.programs[0][0][0];
  send.src.bytes = 8;
  send.bytes = 8;
  const std::string message = validation_error(m);
  CHECK_THAT(message, Contains("rank 0 ch 0 step 0"));
  CHECK_THAT(message, Contains("moves 8 B but its match, rank 1 ch 0 step 1"));
}

TEST_CASE("validate: a step whose bytes disagree with its range") {
  MaterializedSchedule m = ring4();
  m.programs[2][0][1].bytes = 12;
  CHECK_THAT(validation_error(m), Contains("rank 2 ch 0 step 1"));
}

TEST_CASE("validate: a dep pointing forward or to itself") {
  MaterializedSchedule m = ring4();
  m.programs[1][0][2].deps[0] = 2;
  const std::string message = validation_error(m);
  CHECK_THAT(message, Contains("rank 1 ch 0 step 2"));
  CHECK_THAT(message, Contains("dep 2 does not point to an earlier step"));
  m = ring4();
  m.programs[1][0][2].deps[0] = 7;
  CHECK_THAT(validation_error(m), Contains("dep 7"));
}

TEST_CASE("validate: a range outside its buffer") {
  MaterializedSchedule m = ring4();
  m.programs[3][0][1].dst.offset = 56; // output[56,72) of a 64-byte output
  const std::string message = validation_error(m);
  CHECK_THAT(message, Contains("rank 3 ch 0 step 1"));
  CHECK_THAT(message, Contains("output[56,72) is outside the output buffer of 64 B"));
}

TEST_CASE("validate: writing the input / sending to oneself / a lost receive") {
  MaterializedSchedule m = ring4();
  m.programs[0][0][1].dst.buffer = Buffer::input;
  CHECK_THAT(validation_error(m), Contains("input buffer is read-only"));
  m = ring4();
  m.programs[2][0][0].peer = 2;
  CHECK_THAT(validation_error(m), Contains("peer 2 is not another rank"));
  m = ring4();
  m.programs[1][0].erase(m.programs[1][0].begin() + 1); // rank 1 never receives from 0 first
  for (Step& step : m.programs[1][0])
    for (std::size_t d = 0; d < step.dep_count; ++d) step.deps[d] = 0;
  CHECK_THAT(validation_error(m), Contains("on channel 0"));
}

TEST_CASE("validate: programs missing for a channel and a wrong channel field") {
  MaterializedSchedule m = ring4();
  m.programs[2].clear();
  CHECK_THAT(validation_error(m), Contains("rank 2 has 0 programs for 1 channels"));
  m = ring4();
  m.programs[1][0][3].channel = 1;
  CHECK_THAT(validation_error(m), Contains("says channel 1"));
}

TEST_CASE("validate: too many deps / misaligned element ranges / partial overlap") {
  MaterializedSchedule m = ring4();
  m.programs[0][0][2].dep_count = 5;
  CHECK_THAT(validation_error(m), Contains("more than 4"));
  m = ring4();
  Step& rr = m.programs[0][0][1];
  rr.src.offset = 46; // recv_reduce combines elements: 4-byte alignment required
  CHECK_THAT(validation_error(m), Contains("not aligned to the 4-byte element"));
  m = ring4();
  m.programs[0][0].push_back(
      step_of(StepKind::copy, -1, {Buffer::output, 0, 16}, {Buffer::output, 8, 16}, 16));
  CHECK_THAT(validation_error(m), Contains("overlap"));
}

TEST_CASE("validate: from_materialized refuses a broken schedule") {
  MaterializedSchedule m = ring4();
  m.programs[0][0][0].peer = 9;
  CHECK_THAT(error_of([&] { Schedule::from_materialized(m); }), Contains("peer 9"));
}
