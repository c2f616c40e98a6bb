// The reference executor itself: it must catch wrong results, races and deadlocks (not hang),
// and model fp16 / bf16 rounding and the codecs exactly.
#include "helpers.hpp"

#include "ddlsim/collectives/reference.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

using namespace ddlsim;
using namespace ddlsim::coll;
using namespace ddlsim::coll::test;
using Catch::Matchers::Contains;

namespace {

BufferRange in(std::uint64_t offset, std::uint64_t bytes) {
  return {Buffer::input, offset, bytes};
}
BufferRange out(std::uint64_t offset, std::uint64_t bytes) {
  return {Buffer::output, offset, bytes};
}
BufferRange scratch(std::uint64_t offset, std::uint64_t bytes) {
  return {Buffer::scratch, offset, bytes};
}
Step send(int peer, BufferRange src) {
  return step_of(StepKind::send, peer, src, {}, src.bytes);
}
Step recv(int peer, BufferRange dst) {
  return step_of(StepKind::recv, peer, {}, dst, dst.bytes);
}
Step copy(BufferRange src, BufferRange dst) {
  return step_of(StepKind::copy, -1, src, dst, src.bytes);
}
Step scale(BufferRange range, double factor) {
  Step step = step_of(StepKind::scale, -1, range, range, range.bytes);
  step.param = factor;
  return step;
}
Step coded(StepKind kind, Codec codec, BufferRange src, BufferRange dst, double param = 0) {
  Step step = step_of(kind, -1, src, dst, src.bytes);
  step.codec = codec;
  step.param = param;
  return step;
}

// A hand-made schedule for `call`, one channel, with the given programs.
Schedule hand_made(const CollectiveCall& call, std::vector<std::vector<Step>> programs,
                   std::vector<std::uint64_t> scratch_bytes = {}) {
  MaterializedSchedule m;
  m.call = call;
  m.algorithm = "hand_made";
  m.ranks = call.ranks;
  m.channels = 1;
  scratch_bytes.resize(std::size_t(call.ranks), 0);
  m.scratch_bytes = scratch_bytes;
  for (auto& program : programs) m.programs.push_back({std::move(program)});
  return Schedule::from_materialized(std::move(m));
}

} // namespace

TEST_CASE("reference: a cycle of waits is reported as a deadlock naming the steps") {
  // Each rank waits for its receive before sending: nobody ever sends.
  const CollectiveCall call = make_call(Op::all_reduce, "ring", 2, 4);
  const Schedule schedule =
      hand_made(call, {{recv(1, out(0, 16)), with_dep(send(1, in(0, 16)), 0)},
                       {recv(0, out(0, 16)), with_dep(send(0, in(0, 16)), 0)}});
  const ReferenceResult result = run_reference(schedule);
  CHECK_FALSE(result.ok);
  CHECK(result.deadlock);
  CHECK_THAT(result.error, Contains("deadlock: 2 of 2 programs cannot finish"));
  CHECK_THAT(result.error, Contains("rank 0 ch 0 step 0 (recv from 1"));
  CHECK_THAT(result.error, Contains("waits for its matching send"));
  CHECK_THAT(result.error, Contains("rank 1 ch 0 step 1 (send to 0"));
  CHECK_THAT(result.error, Contains("waits for steps 0"));
}

TEST_CASE("reference: overwriting bytes an unfinished send still reads is a race") {
  const CollectiveCall call = make_call(Op::all_reduce, "ring", 2, 4);
  const Schedule schedule = hand_made(
      call,
      {{copy(in(0, 16), out(0, 16)), with_dep(send(1, out(0, 16)), 0), copy(in(0, 16), out(0, 16))},
       {recv(0, out(0, 16))}});
  const ReferenceResult result = run_reference(schedule);
  CHECK_FALSE(result.ok);
  CHECK_FALSE(result.deadlock);
  CHECK_THAT(result.error, Contains("rank 0 ch 0 step 2"));
  CHECK_THAT(result.error, Contains("writes output[0,16) while rank 0 ch 0 step 1"));
  CHECK_THAT(result.error, Contains("missing dependency"));
}

TEST_CASE("reference: a schedule that computes the wrong result is caught") {
  // A ring all-reduce where rank 1 overwrites instead of reducing: a contribution is lost.
  MaterializedSchedule m = materialize(Schedule::make(make_call(Op::all_reduce, "ring", 4, 8)));
  Step& step = m.programs[1][0][1];
  REQUIRE(step.kind == StepKind::recv_reduce);
  step.kind = StepKind::recv;
  step.src = {};
  const ReferenceResult result = run_reference(Schedule::from_materialized(m));
  CHECK_FALSE(result.ok);
  CHECK_THAT(result.error, Contains("element 0: got"));
}

TEST_CASE("reference: data movement is bit exact and sums of small integers are exact") {
  for (DataType dtype : {DataType::fp32, DataType::fp16, DataType::bf16}) {
    for (bool integer : {true, false}) {
      const auto gather = Schedule::make(make_call(Op::all_gather, "bruck", 7, 7 * 13, dtype));
      const auto inputs = reference_inputs(gather.call(), {integer, 3});
      const ReferenceRun run = execute_reference(gather, inputs);
      INFO(run.status.error);
      REQUIRE(run.status.ok);
      std::vector<double> all;
      for (const auto& v : inputs) all.insert(all.end(), v.begin(), v.end());
      for (const auto& o : run.outputs) CHECK(o == all);
    }
    // 64 ranks of integers summed in bf16 (8 significant bits) are still exact.
    const auto sum = Schedule::make(make_call(Op::all_reduce, "ring", 64, 100, dtype));
    const auto inputs = reference_inputs(sum.call(), {true, 5});
    const ReferenceRun run = execute_reference(sum, inputs);
    INFO(run.status.error);
    REQUIRE(run.status.ok);
    for (std::size_t i = 0; i < 100; ++i) {
      double exact = 0;
      for (const auto& v : inputs) exact += v[i];
      CHECK(run.outputs[17][i] == exact);
    }
  }
}

TEST_CASE("reference: stores round to nearest even in fp16 and bf16") {
  // One rank: copy the input, scale it in place; the scale's result is rounded on store.
  auto scaled = [](DataType dtype, double value, double factor) {
    const CollectiveCall call = make_call(Op::all_reduce, "ring", 1, 1, dtype);
    const std::uint64_t e = element_size(dtype);
    const Schedule s =
        hand_made(call, {{copy(in(0, e), out(0, e)), with_dep(scale(out(0, e), factor), 0)}});
    const ReferenceRun run = execute_reference(s, {{value}});
    INFO(run.status.error);
    REQUIRE(run.status.ok);
    return run.outputs[0][0];
  };
  CHECK(scaled(DataType::fp16, 1, 1.0 / 3) == 0.333251953125);
  CHECK(scaled(DataType::bf16, 1, 1.0 / 3) == 0.333984375);
  CHECK(scaled(DataType::fp32, 1, 1.0 / 3) == double(1.0f / 3));
  CHECK(scaled(DataType::fp16, 1, 1 + 0x1p-11) == 1);              // halfway: to even
  CHECK(scaled(DataType::fp16, 1, 1 + 3 * 0x1p-11) == 1 + 0x1p-9); // halfway: to even (up)
  CHECK(scaled(DataType::bf16, 1, 1 + 0x1p-8) == 1);
  CHECK(scaled(DataType::bf16, 1, 1 + 3 * 0x1p-8) == 1 + 0x1p-6);
  CHECK(scaled(DataType::fp16, 0x1p-24, 1.5) == 0x1p-23); // subnormal, to even
  CHECK(scaled(DataType::fp16, 60000, 2) == std::numeric_limits<double>::infinity());
  CHECK(scaled(DataType::fp16, 65504, 1) == 65504);
  // The input itself is rounded when stored: 1 + 2^-12 is not an fp16.
  CHECK(scaled(DataType::fp16, 1 + 0x1p-12, 1) == 1);
}

TEST_CASE("reference: top-k compress / send and decompress") {
  // Rank 0 keeps the 2 largest magnitudes of 8 fp32 values as (index, value) pairs, sends them,
  // rank 1 scatter-adds them into its (zeroed) output.
  CollectiveCall call = make_call(Op::send_recv, "direct", 2, 8);
  call.root = 1;
  const Schedule s = hand_made(
      call,
      {{coded(StepKind::compress, Codec::topk, in(0, 32), scratch(0, 16)),
        with_dep(send(1, scratch(0, 16)), 0)},
       {recv(0, scratch(0, 16)),
        with_dep(coded(StepKind::decompress, Codec::topk, scratch(0, 16), out(0, 32)), 0)}},
      {16, 16});
  // -4 and 4 tie in magnitude: the lower index (4) wins.
  const ReferenceRun run = execute_reference(s, {{1, -5, 3, 0.5, 4, -4, 0, 2}, {}});
  INFO(run.status.error);
  REQUIRE(run.status.ok);
  CHECK(run.outputs[1] == std::vector<double>{0, -5, 0, 0, 4, 0, 0, 0});
  CHECK(run.status.bytes_sent == 16);
}

TEST_CASE("reference: fp16 cast / chunk norms and chunk select") {
  const CollectiveCall call = make_call(Op::all_reduce, "ring", 1, 6);
  // Chunks of 2 fp32 values (8 B): norms into scratch[0,12), the 1 largest chunk packed into
  // scratch[12,20), written back to the output; then output += fp16(input) via the cast codec.
  const Schedule s = hand_made(
      call,
      {{coded(StepKind::compress, Codec::chunk_norms, in(0, 24), scratch(0, 12), 8),
        [] {
          Step step = coded(StepKind::compress, Codec::chunk_select, in(0, 24), scratch(12, 8), 8);
          step.aux = scratch(0, 12);
          return with_dep(step, 0);
        }(),
        [] {
          Step step =
              coded(StepKind::decompress, Codec::chunk_select, scratch(12, 8), out(0, 24), 8);
          step.aux = scratch(0, 12);
          return with_dep(step, 1);
        }(),
        coded(StepKind::compress, Codec::fp16_cast, in(0, 24), scratch(20, 12)),
        with_dep(
            with_dep(coded(StepKind::decompress, Codec::fp16_cast, scratch(20, 12), out(0, 24)), 2),
            3)}},
      {32});
  const double tiny = 1 + 0x1p-12; // rounds to 1 in fp16
  const ReferenceRun run = execute_reference(s, {{1, 1, 3, 4, tiny, 0}});
  INFO(run.status.error);
  REQUIRE(run.status.ok);
  // Chunk norms: sqrt(2), 5, ~1: chunk 1 = {3, 4} is selected and written back; then + fp16(x).
  CHECK(run.outputs[0] == std::vector<double>{1, 1, 6, 8, 1, 0});
}

TEST_CASE("reference: adasum of two orthogonal vectors is their sum / parallel ones average") {
  auto adasum = [](std::vector<double> a, std::vector<double> b) {
    const CollectiveCall call = make_call(Op::all_reduce, "recursive_doubling", 2, a.size(),
                                          DataType::fp32, Reduction::adasum);
    const ReferenceRun run = execute_reference(Schedule::make(call), {a, b});
    INFO(run.status.error);
    REQUIRE(run.status.ok);
    CHECK(run.outputs[0] == run.outputs[1]);
    return run.outputs[0];
  };
  CHECK(adasum({1, 0}, {0, 2}) == std::vector<double>{1, 2});
  CHECK(adasum({2, 4}, {2, 4}) == std::vector<double>{2, 4});
  CHECK(adasum({0, 0}, {3, 1}) == std::vector<double>{3, 1}); // zero-norm guard
}
