// Schedule::make, the registry, buffer sizes, step counts and traffic against the closed forms.
#include "helpers.hpp"

#include "ddlsim/collectives/reference.hpp"

#include <catch2/catch.hpp>

#include <bit>
#include <set>

using namespace ddlsim;
using namespace ddlsim::coll;
using namespace ddlsim::coll::test;
using Catch::Matchers::Contains;

TEST_CASE("schedule: an unknown algorithm gets did-you-mean and the valid names for the op") {
  const std::string message =
      error_of([] { Schedule::make(make_call(Op::all_reduce, "rabensiefner", 4, 16)); });
  CHECK_THAT(message, Contains("unknown all_reduce algorithm \"rabensiefner\""));
  CHECK_THAT(message, Contains("did you mean \"rabenseifner\"?"));
  CHECK_THAT(message, Contains("ring, recursive_doubling"));
  // A name valid for another op is unknown here, and the list is this op's.
  const std::string other =
      error_of([] { Schedule::make(make_call(Op::send_recv, "ring", 2, 16)); });
  CHECK_THAT(other, Contains("valid: direct"));
}

TEST_CASE("schedule: malformed calls are rejected with what to change") {
  CollectiveCall odd = make_call(Op::all_reduce, "ring", 4, 0, DataType::fp16);
  odd.bytes = 7;
  CHECK_THAT(error_of([&] { Schedule::make(odd); }), Contains("multiple of 2"));
  CHECK_THAT(error_of([] { Schedule::make(make_call(Op::all_reduce, "ring", 0, 4)); }),
             Contains("ranks must be from 1"));
  CollectiveCall root = make_call(Op::broadcast, "binomial", 4, 4);
  root.root = 4;
  CHECK_THAT(error_of([&] { Schedule::make(root); }), Contains("root 4 is not a rank of 0..3"));
  CHECK_THAT(error_of([] {
               Schedule::make(
                   make_call(Op::all_gather, "ring", 4, 8, DataType::fp32, Reduction::avg));
             }),
             Contains("no meaning for all_gather"));
  CHECK_THAT(error_of([] { Schedule::make(make_call(Op::all_to_all, "pairwise", 4, 10)); }),
             Contains("multiple of the rank count"));
  CollectiveCall chunks = make_call(Op::all_reduce, "rabenseifner", 4, 8);
  chunks.params.chunks = 2;
  CHECK_THAT(error_of([&] { Schedule::make(chunks); }), Contains("set chunks to 1"));
  CHECK_THAT(error_of([] {
               Schedule::make(make_call(Op::all_reduce, "recursive_doubling", 6, 8, DataType::fp32,
                                        Reduction::adasum));
             }),
             Contains("adasum needs a power-of-two rank count"));
  CHECK_THAT(error_of([] {
               Schedule::make(
                   make_call(Op::all_reduce, "ring", 4, 8, DataType::fp32, Reduction::adasum));
             }),
             Contains("does not support adasum"));
}

TEST_CASE("schedule: the registry lists every op's generators once / each with its cost") {
  std::set<std::pair<Op, std::string>> seen;
  for (const Algorithm* a : all_algorithms()) {
    CHECK(seen.insert({a->op(), std::string(a->name())}).second);
    CHECK(find_algorithm(a->op(), a->name()) == a);
    CHECK_THAT(std::string(a->summary()), Contains("α"));
  }
  for (Op op : {Op::all_reduce, Op::reduce_scatter, Op::all_gather, Op::broadcast, Op::reduce,
                Op::all_to_all, Op::send_recv})
    CHECK(!algorithms_for(op).empty());
  CHECK(find_algorithm(Op::all_reduce, "nope") == nullptr);
}

TEST_CASE("schedule: buffer sizes per op follow partition() for uneven division") {
  CollectiveCall rs = make_call(Op::reduce_scatter, "ring", 4, 10);
  CHECK(input_bytes(rs, 0) == 40);
  CHECK(output_bytes(rs, 0) == 12); // 10 = 3 + 3 + 2 + 2 elements
  CHECK(output_bytes(rs, 3) == 8);
  CollectiveCall ag = make_call(Op::all_gather, "ring", 4, 10);
  CHECK(input_bytes(ag, 1) == 12);
  CHECK(input_bytes(ag, 2) == 8);
  CHECK(output_bytes(ag, 2) == 40);
  CollectiveCall bc = make_call(Op::broadcast, "binomial", 4, 10);
  bc.root = 2;
  CHECK(input_bytes(bc, 2) == 40);
  CHECK(input_bytes(bc, 0) == 0);
  CHECK(output_bytes(bc, 0) == 40);
  CollectiveCall red = make_call(Op::reduce, "binomial", 4, 10);
  red.root = 1;
  CHECK(output_bytes(red, 1) == 40);
  CHECK(output_bytes(red, 0) == 0);
  CHECK(input_bytes(red, 3) == 40);
  CHECK(input_bytes(red, 4) == 0); // not a rank
}

TEST_CASE("schedule: ring all-reduce sends 2(p-1) times per rank per chunk and channel") {
  for (int p : {2, 3, 5, 8})
    for (int chunks : {1, 3})
      for (int channels : {1, 2}) {
        CollectiveCall call = make_call(Op::all_reduce, "ring", p, 1000);
        call.params.chunks = chunks;
        call.params.channels = channels;
        const MaterializedSchedule m = materialize(Schedule::make(call));
        REQUIRE(m.channels == channels);
        for (const auto& rank : m.programs)
          for (const auto& program : rank) {
            std::size_t sends = 0;
            for (const Step& step : program) sends += step.is_send();
            CHECK(sends == std::size_t(2 * (p - 1) * chunks));
          }
      }
}

TEST_CASE("schedule: traffic matches the closed forms") {
  const std::uint64_t n = 8 * 3 * 5 * 7 * 4; // elements divisible by every p below
  const std::uint64_t bytes = n * 4;
  auto sent = [&](Op op, const std::string& algorithm, int p) {
    const ReferenceResult r = run_reference(Schedule::make(make_call(op, algorithm, p, n)));
    INFO(r.error);
    REQUIRE(r.ok);
    return r.bytes_sent;
  };
  for (int p : {2, 3, 5, 8}) {
    const auto q = std::uint64_t(p);
    INFO("p = " << p);
    // Ring all-reduce: 2n(p-1)/p per rank.
    CHECK(sent(Op::all_reduce, "ring", p) == q * 2 * bytes * (q - 1) / q);
    CHECK(sent(Op::reduce_scatter, "ring", p) == q * bytes * (q - 1) / q);
    CHECK(sent(Op::reduce_scatter, "pairwise", p) == q * bytes * (q - 1) / q);
    CHECK(sent(Op::all_gather, "ring", p) == q * bytes * (q - 1) / q);
    CHECK(sent(Op::all_gather, "bruck", p) == q * bytes * (q - 1) / q);
    CHECK(sent(Op::all_to_all, "pairwise", p) == q * bytes * (q - 1) / q);
    CHECK(sent(Op::broadcast, "binomial", p) == (q - 1) * bytes);
    CHECK(sent(Op::broadcast, "pipelined_chain", p) == (q - 1) * bytes);
    CHECK(sent(Op::reduce, "binomial", p) == (q - 1) * bytes);
    if (std::has_single_bit(unsigned(p))) {
      const auto lg = std::uint64_t(std::bit_width(unsigned(p)) - 1);
      CHECK(sent(Op::all_reduce, "recursive_doubling", p) == q * lg * bytes);
      CHECK(sent(Op::all_reduce, "rabenseifner", p) == q * 2 * bytes * (q - 1) / q);
      CHECK(sent(Op::reduce_scatter, "recursive_halving", p) == q * bytes * (q - 1) / q);
      CHECK(sent(Op::all_gather, "recursive_doubling", p) == q * bytes * (q - 1) / q);
    }
  }
}

TEST_CASE("schedule: one rank copies input to output / zero bytes have no steps") {
  for (const Algorithm* a : all_algorithms()) {
    const MaterializedSchedule one =
        materialize(Schedule::make(make_call(a->op(), std::string(a->name()), 1, 5)));
    for (const Step& step : one.programs[0][0]) CHECK(step.is_local());
    const MaterializedSchedule zero =
        materialize(Schedule::make(make_call(a->op(), std::string(a->name()), 4, 0)));
    for (const auto& rank : zero.programs)
      for (const auto& program : rank) CHECK(program.empty());
  }
}

TEST_CASE("schedule: programs are streamed / so a 16384-rank ring needs no whole schedule") {
  CollectiveCall call = make_call(Op::all_reduce, "ring", 16384, 1 << 20);
  const Schedule schedule = Schedule::make(call);
  StepStream stream = schedule.program(12345, 0);
  std::size_t steps = 0, sends = 0;
  for (Step step; stream.next(step);) {
    ++steps;
    sends += step.is_send();
  }
  CHECK(sends == 2 * 16383);
  CHECK(steps == 4 * 16383);
}

TEST_CASE("schedule: a program stream may outlive the schedule it came from") {
  StepStream stream = Schedule::make(make_call(Op::all_reduce, "ring", 4, 64)).program(1, 0);
  std::size_t steps = 0;
  for (Step step; stream.next(step);) ++steps;
  CHECK(steps == 12);
}
