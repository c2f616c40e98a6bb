// Property sweeps: every registered generator of every op, over ranks 1..33 and 64, odd sizes,
// chunk and channel counts, dtypes, reductions and input kinds, proven by the reference
// executor. New generators are covered by registering them (algorithms_for).
// The full sweeps are tagged [sweep]; a quick sweep over fewer rank counts and variants covers
// every generator and op too, so that scripts/sanitize can run it under ASan instead ("~[sweep]")
// and stay within CI's time (the full all_reduce sweep alone takes minutes there).
#include "helpers.hpp"

#include "ddlsim/collectives/reference.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <sstream>

using namespace ddlsim;
using namespace ddlsim::coll;
using namespace ddlsim::coll::test;

namespace {

struct Variant {
  int chunks = 1, channels = 1;
  DataType dtype = DataType::fp32;
  Reduction reduction = Reduction::sum;
  bool integer = true;
  // The plain call every generator must accept (others may be rejected in check()).
  bool base(const Algorithm& algorithm) const {
    return chunks == 1 && channels == 1 && reduction != Reduction::adasum &&
           (dtype == DataType::fp32 || !fp32_only(algorithm));
  }
  // coarse_sparse sums fp32 chunk norms, which the IR's receive-reduce can only add in an fp32
  // call (see its file); it rejects fp16 / bf16 in check().
  static bool fp32_only(const Algorithm& algorithm) { return algorithm.name() == "coarse_sparse"; }
};

bool reduces(Op op) {
  return op == Op::all_reduce || op == Op::reduce_scatter || op == Op::reduce;
}

std::vector<Variant> variants(Op op) {
  std::vector<Variant> out;
  for (int chunks : {1, 3})
    for (int channels : {1, 2})
      for (DataType dtype : {DataType::fp32, DataType::fp16, DataType::bf16})
        for (Reduction reduction : {Reduction::sum, Reduction::avg, Reduction::adasum})
          for (bool integer : {true, false})
            if (reduces(op) || reduction == Reduction::sum)
              out.push_back({chunks, channels, dtype, reduction, integer});
  return out;
}

enum class Breadth { full, quick };

std::vector<int> rank_counts(Breadth breadth) {
  if (breadth == Breadth::quick) return {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 33};
  std::vector<int> out;
  for (int p = 1; p <= 33; ++p) out.push_back(p);
  out.push_back(64);
  return out;
}

// Element counts: 0, 1, 7, 1000, 4099; all_to_all rounds them to multiples of p (and uses p).
std::vector<std::uint64_t> sizes(Op op, int p) {
  std::vector<std::uint64_t> out{0, 1, 7, 1000, 4099};
  if (op == Op::all_to_all) {
    const auto q = std::uint64_t(p);
    out = {0, q, 7 * q, 1000 / q * q, 4099 / q * q};
  }
  return out;
}

std::string describe(const CollectiveCall& call, bool integer) {
  std::ostringstream out;
  out << to_string(call.op) << ' ' << call.algorithm << " p=" << call.ranks
      << " elements=" << call.elements() << ' ' << to_string(call.dtype) << ' '
      << to_string(call.reduction) << " chunks=" << call.params.chunks
      << " channels=" << call.params.channels << " root=" << call.root
      << (integer ? " integer" : " real");
  return out.str();
}

// The long sweeps run in shards, each its own test case (and ctest test), so that ctest -j
// runs them side by side: shard `shard` of `shards` takes every shards-th (generator, rank count)
// pair. The shards together make exactly the runs of the whole sweep (a run's root, seed and
// variant depend only on the rank count and size).
struct Shard {
  int shard = 0, shards = 1;
};

void sweep(Op op, Breadth breadth = Breadth::full, Shard part = {}) {
  const auto all = variants(op);
  std::size_t runs = 0, failures = 0;
  // How many variants a (rank count, size) gets when it does not get them all.
  const std::size_t some = breadth == Breadth::full ? 4 : 2;
  int pair = -1;
  for (const Algorithm* algorithm : algorithms_for(op)) {
    for (int p : rank_counts(breadth)) {
      if (++pair % part.shards != part.shard) continue;
      const auto counts = sizes(op, p);
      for (std::size_t s = 0; s < counts.size(); ++s) {
        // Every variant for small p or small sizes; otherwise a few, rotating so that every
        // variant meets many rank counts and sizes (the whole sweep stays within seconds).
        const bool every = breadth == Breadth::full ? p <= 12 || s <= 2 : p <= 4 || s <= 1;
        for (std::size_t k = 0; k < (every ? all.size() : some); ++k) {
          const Variant& v = all[every ? k : (std::size_t(p) * 7 + s * 5 + k * 11) % all.size()];
          CollectiveCall call =
              make_call(op, std::string(algorithm->name()), p, counts[s], v.dtype, v.reduction);
          call.params.chunks = v.chunks;
          call.params.channels = v.channels;
          call.root = int((std::size_t(p) * 5 + s) % std::size_t(p));
          if (op == Op::send_recv && p > 1 && call.root == 0) call.root = p - 1;
          std::optional<Schedule> schedule;
          try {
            schedule = Schedule::make(call);
          } catch (const InputError& e) {
            if (v.base(*algorithm))
              FAIL_CHECK(describe(call, v.integer) << " rejected: " << e.what());
            continue;
          }
          const ReferenceResult result =
              run_reference(*schedule, {v.integer, std::uint64_t(p * 31 + int(s))});
          ++runs;
          if (!result.ok && ++failures <= 5)
            FAIL_CHECK(describe(call, v.integer) << ": " << result.error);
        }
      }
    }
  }
  INFO(runs << " runs");
  CHECK(failures == 0);
  CHECK(runs > 0);
}

} // namespace

// all_reduce has the most generators and reduce_scatter the next most: minutes and about a
// minute on one core of a 2-core CI machine; the shards let two cores share them.
TEST_CASE("sweep: every all_reduce generator is correct (shard 1 of 4)", "[sweep]") {
  sweep(Op::all_reduce, Breadth::full, {0, 4});
}
TEST_CASE("sweep: every all_reduce generator is correct (shard 2 of 4)", "[sweep]") {
  sweep(Op::all_reduce, Breadth::full, {1, 4});
}
TEST_CASE("sweep: every all_reduce generator is correct (shard 3 of 4)", "[sweep]") {
  sweep(Op::all_reduce, Breadth::full, {2, 4});
}
TEST_CASE("sweep: every all_reduce generator is correct (shard 4 of 4)", "[sweep]") {
  sweep(Op::all_reduce, Breadth::full, {3, 4});
}
TEST_CASE("sweep: every reduce_scatter generator is correct (shard 1 of 2)", "[sweep]") {
  sweep(Op::reduce_scatter, Breadth::full, {0, 2});
}
TEST_CASE("sweep: every reduce_scatter generator is correct (shard 2 of 2)", "[sweep]") {
  sweep(Op::reduce_scatter, Breadth::full, {1, 2});
}
TEST_CASE("sweep: every all_gather generator is correct", "[sweep]") {
  sweep(Op::all_gather);
}
TEST_CASE("sweep: every broadcast generator is correct", "[sweep]") {
  sweep(Op::broadcast);
}
TEST_CASE("sweep: every reduce generator is correct", "[sweep]") {
  sweep(Op::reduce);
}
TEST_CASE("sweep: every all_to_all generator is correct", "[sweep]") {
  sweep(Op::all_to_all);
}
TEST_CASE("sweep: every send_recv generator is correct", "[sweep]") {
  sweep(Op::send_recv);
}

TEST_CASE("sweep (quick): every generator of every op is correct") {
  for (Op op : {Op::all_reduce, Op::reduce_scatter, Op::all_gather, Op::broadcast, Op::reduce,
                Op::all_to_all, Op::send_recv}) {
    CAPTURE(to_string(op));
    sweep(op, Breadth::quick);
  }
}

TEST_CASE("sweep: adasum all-reduce by recursive doubling on every power-of-two rank count") {
  for (int p : {1, 2, 4, 8, 16, 32, 64})
    for (std::uint64_t n : {0, 1, 7, 1000})
      for (DataType dtype : {DataType::fp32, DataType::fp16, DataType::bf16})
        for (bool integer : {true, false}) {
          const CollectiveCall call =
              make_call(Op::all_reduce, "recursive_doubling", p, n, dtype, Reduction::adasum);
          const ReferenceResult result = run_reference(Schedule::make(call), {integer, 7});
          INFO(describe(call, integer) << ": " << result.error);
          REQUIRE(result.ok);
        }
}
