// The dump format: JSON round-trips exactly, the text form reads as documented, loading is
// strict.
#include "helpers.hpp"

#include "ddlsim/collectives/dump.hpp"
#include "ddlsim/collectives/reference.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace ddlsim;
using namespace ddlsim::coll;
using namespace ddlsim::coll::test;
using Catch::Matchers::Contains;

namespace {

MaterializedSchedule reload(const MaterializedSchedule& m) {
  const Json text = parse_json_text(to_json(m).dump(1), "dump");
  return schedule_from_json(JsonValue(text, ""));
}

} // namespace

TEST_CASE("dump: JSON round-trips every generator and the loaded schedule still runs") {
  for (const Algorithm* a : all_algorithms()) {
    CollectiveCall call = make_call(a->op(), std::string(a->name()), 5, 5 * 7, DataType::fp16,
                                    a->op() == Op::all_reduce ? Reduction::avg : Reduction::sum);
    call.root = 3;
    call.node_of_rank = {0, 0, 1, 1, 2};
    // Each generator gets the params it reads (generators may reject params they do not use).
    const std::string name(a->name());
    if (name == "ring") call.params.chunks = 2;
    if (name == "blueconnect") call.params.group_sizes = {5};
    if (name == "torus2d") call.params.group_sizes = {5, 1};
    if (name == "topk" || name == "hierarchical_topk" || name == "coarse_sparse")
      call.params.density = 0.125;
    if (name == "hierarchical_topk") call.node_of_rank = {0, 1, 2, 3, 4}; // equal nodes
    if (name == "coarse_sparse") {                                        // fp32 only
      call.dtype = DataType::fp32;
      call.bytes = 35 * 4;
      call.params.chunk_bytes = 8;
    }
    if (name == "nvls") call.node_of_rank.clear(); // one NVSwitch domain: switch steps
    if (name == "nvls_tree") call.node_of_rank = {0, 1, 2, 3, 4}; // equal nodes
    if (name == "byteps") call.node_of_rank = {0, 1, 2, 3, 4};    // equal nodes
    if (name == "parameter_server") {
      call.params.servers = 2;
      call.params.dedicated_servers = true;
    }
    const MaterializedSchedule m = materialize(Schedule::make(call));
    const MaterializedSchedule back = reload(m);
    INFO(a->name());
    CHECK(back == m);
    const ReferenceResult result = run_reference(Schedule::from_materialized(back));
    INFO(result.error);
    CHECK(result.ok);
  }
}

TEST_CASE("dump: the text form of a ring of 4 says what each rank does") {
  const MaterializedSchedule m =
      materialize(Schedule::make(make_call(Op::all_reduce, "ring", 4, 16)));
  std::ostringstream out;
  write_text(m, out);
  const std::string text = out.str();
  CHECK_THAT(text, Contains("# all_reduce ring: 4 ranks, 1 channel, 64 B fp32 sum, chunks 1\n"));
  CHECK_THAT(text, Contains("rank 0 ch 0 #0 send to 1  input[0,16)  16 B\n"));
  CHECK_THAT(text,
             Contains("rank 0 ch 0 #1 recv_reduce from 3  input[48,64) -> output[48,64)  16 B\n"));
  CHECK_THAT(text, Contains("rank 0 ch 0 #2 send to 1  output[48,64)  16 B  deps 1\n"));
  CHECK_THAT(text, Contains("rank 0 ch 0 #7 recv from 3  -> output[0,16)  16 B\n"));
  CHECK_THAT(text, Contains("rank 3 ch 0 #11 recv from 2  -> output[16,32)  16 B\n"));
}

TEST_CASE("dump: loading rejects unknown keys / bad enums and broken schedules by path") {
  const MaterializedSchedule m =
      materialize(Schedule::make(make_call(Op::all_reduce, "ring", 2, 4)));
  auto load_error = [](const Json& j) {
    return error_of([&] { schedule_from_json(JsonValue(j, "")); });
  };
  Json j = to_json(m);
  j["programs"][0]["steps"][0]["peeer"] = 1;
  CHECK_THAT(load_error(j), Contains("/programs/0/steps/0/peeer"));
  CHECK_THAT(load_error(j), Contains("did you mean \"peer\"?"));
  j = to_json(m);
  j["programs"][1]["steps"][0]["kind"] = "sned";
  CHECK_THAT(load_error(j), Contains("did you mean \"send\"?"));
  j = to_json(m);
  j["call"]["dtype"] = "fp64";
  CHECK_THAT(load_error(j), Contains("/call/dtype"));
  j = to_json(m);
  j["programs"][0]["steps"][0]["src"][2] = 12; // 12 B from an 16-byte input: bytes mismatch
  CHECK_THAT(load_error(j), Contains("rank 0 ch 0 step 0"));
  j = to_json(m);
  j["format"] = "something-else";
  CHECK_THAT(load_error(j), Contains("ddlsim-schedule"));
}

TEST_CASE("dump: a real run's expected outputs come from the collective, not the schedule") {
  // A correct schedule: its own reference result, bit for bit, and no schedule error.
  const MaterializedSchedule m =
      materialize(Schedule::make(make_call(Op::all_reduce, "ring", 4, 64)));
  const RealRunExpectation good = expected_real_outputs(Schedule::from_materialized(m));
  REQUIRE(good.status.ok);
  CHECK(good.schedule_error.empty());
  const ReferenceRun same = execute_reference(Schedule::from_materialized(m), good.inputs);
  CHECK(good.outputs == same.outputs);

  // The same schedule with one reduction turned into a plain copy (a corrupted dump): it runs
  // without a hazard, but the outputs a real backend must match are the true sums, so the
  // backend's faithful copy of the wrong schedule counts as wrong.
  MaterializedSchedule bad = m;
  for (Step& step : bad.programs[0][0])
    if (step.kind == StepKind::recv_reduce) {
      step.kind = StepKind::recv;
      step.src = {};
      break;
    }
  const Schedule corrupted = Schedule::from_materialized(bad);
  const RealRunExpectation want = expected_real_outputs(corrupted);
  REQUIRE(want.status.ok);
  CHECK_THAT(want.schedule_error, Contains("expected"));
  const ReferenceRun faithful = execute_reference(corrupted, want.inputs);
  REQUIRE(faithful.status.ok);
  CHECK(faithful.outputs != want.outputs);
  CHECK_FALSE(run_reference(corrupted).ok);
}
