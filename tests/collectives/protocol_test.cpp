// A call's protocol in the Schedule: every step names it (Step::protocol), dumps keep it, and a
// schedule whose steps name a protocol it lacks, or a send and receive of different protocols,
// is rejected. What engines charge for it is tested in tests/sim/*protocols_test.cpp.
#include "helpers.hpp"

#include "ddlsim/collectives/dump.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::coll;
using namespace ddlsim::coll::test;
using Catch::Matchers::Contains;

namespace {

Protocol ll() {
  Protocol protocol;
  protocol.name = "ll";
  protocol.payload_efficiency = 0.5;
  protocol.intra_hop_ps = 600'000;
  protocol.inter_hop_ps = 2'000'000;
  protocol.reduce_in_flight = true;
  return protocol;
}

MaterializedSchedule reload(const MaterializedSchedule& m) {
  const Json text = parse_json_text(to_json(m).dump(1), "dump");
  return schedule_from_json(JsonValue(text, ""));
}

} // namespace

TEST_CASE("protocol: a generator's steps name the call's protocol, which dumps keep") {
  CollectiveCall call = make_call(Op::all_reduce, "ring", 4, 64);
  // Without one the dump is what it always was: no protocol key anywhere.
  const MaterializedSchedule plain = materialize(Schedule::make(call));
  CHECK_FALSE(to_json(plain)["call"].contains("protocol"));
  CHECK_FALSE(to_json(plain).contains("protocols"));
  call.protocol = ll();
  const Schedule schedule = Schedule::make(call);
  REQUIRE(schedule.protocols().size() == 1);
  CHECK(schedule.protocols().front() == ll());
  const MaterializedSchedule m = materialize(schedule);
  CHECK(m.protocols.empty()); // the call's protocol says it all
  for (const auto& rank : m.programs)
    for (const Step& step : rank[0]) CHECK(step.protocol == 0);
  CHECK(to_json(m)["call"]["protocol"]["payload_efficiency"] == 0.5);
  CHECK(reload(m) == m);
  CHECK(Schedule::from_materialized(reload(m)).protocols().front() == ll());
}

TEST_CASE("protocol: a switch efficiency is dumped only where it is not 1, and reloads") {
  CollectiveCall call = make_call(Op::all_reduce, "ring", 4, 64);
  call.protocol = ll();
  CHECK_FALSE(
      to_json(materialize(Schedule::make(call)))["call"]["protocol"].contains("switch_efficiency"));
  call.protocol.switch_efficiency = 0.85; // NCCL's nvlsEfficiency on Hopper
  const MaterializedSchedule m = materialize(Schedule::make(call));
  CHECK(to_json(m)["call"]["protocol"]["switch_efficiency"] == 0.85);
  CHECK(reload(m) == m);
  CHECK(Schedule::from_materialized(reload(m)).protocols().front().switch_efficiency == 0.85);
}

TEST_CASE("protocol: thread blocks per program are dumped only where not 1, and reload") {
  CollectiveCall call = make_call(Op::all_reduce, "ring", 4, 64);
  call.protocol = ll();
  CHECK_FALSE(to_json(materialize(Schedule::make(call)))["call"]["protocol"].contains(
      "blocks_per_program"));
  call.protocol.blocks_per_program = 16; // NCCL's 16 channels on one program (a lane)
  const MaterializedSchedule m = materialize(Schedule::make(call));
  CHECK(to_json(m)["call"]["protocol"]["blocks_per_program"] == 16);
  CHECK(reload(m) == m);
  CHECK(Schedule::from_materialized(reload(m)).protocols().front().blocks_per_program == 16);
}

TEST_CASE("protocol: a network post is dumped only where not 0, reloads, and is never negative") {
  CollectiveCall call = make_call(Op::all_reduce, "ring", 4, 64);
  call.protocol = ll();
  CHECK_FALSE(
      to_json(materialize(Schedule::make(call)))["call"]["protocol"].contains("net_post_ps"));
  call.protocol.net_post_ps = 3'000'000; // NCCL's getNetOverhead for Simple on Intel
  const MaterializedSchedule m = materialize(Schedule::make(call));
  CHECK(to_json(m)["call"]["protocol"]["net_post_ps"] == 3'000'000);
  CHECK(reload(m) == m);
  CHECK(Schedule::from_materialized(reload(m)).protocols().front().net_post_ps == 3'000'000);
  call.protocol.net_post_ps = -1;
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("net_post_ps must be at least 0"));
}

TEST_CASE("protocol: steps naming a missing protocol, or pairs that disagree, are rejected") {
  MaterializedSchedule m = materialize(Schedule::make(make_call(Op::all_reduce, "ring", 2, 4)));
  MaterializedSchedule missing = m;
  missing.programs[0][0][0].protocol = 1;
  CHECK_THAT(error_of([&] { validate(missing); }), Contains("names protocol 1 of 1"));
  MaterializedSchedule disagree = m;
  disagree.protocols = {Protocol{}, ll()};
  disagree.programs[0][0][0].protocol = 1; // rank 0's first send, but not rank 1's receive
  CHECK_THAT(error_of([&] { validate(disagree); }), Contains("belong to one call"));
  for (auto& rank : disagree.programs)
    for (Step& step : rank[0]) step.protocol = 1;
  CHECK_NOTHROW(validate(disagree));
  CHECK(reload(disagree) == disagree);
}

TEST_CASE("protocol: impossible efficiencies and negative hop latencies are input errors") {
  CollectiveCall call = make_call(Op::all_reduce, "ring", 4, 64);
  call.protocol.payload_efficiency = 1.25;
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("payload_efficiency"));
  call.protocol.payload_efficiency = 0;
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("(0, 1]"));
  call.protocol = {};
  call.protocol.switch_efficiency = 1.5;
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("switch_efficiency"));
  call.protocol.switch_efficiency = 0;
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("nvlsEfficiency"));
  call.protocol = {};
  call.protocol.intra_hop_ps = -5;
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("at least 0"));
  const MaterializedSchedule m =
      materialize(Schedule::make(make_call(Op::all_reduce, "ring", 2, 4)));
  Json j = to_json(m);
  j["call"]["protocol"] = {{"name", "ll"},      {"payload_efficiency", 0.5}, {"intra_hop_ps", 0},
                           {"inter_hop_ps", 0}, {"reduce_in_flight", false}, {"flag_bytes", 8}};
  CHECK_THAT(error_of([&] { schedule_from_json(JsonValue(j, "")); }),
             Contains("/call/protocol/flag_bytes"));
}
