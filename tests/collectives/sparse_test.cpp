// Targeted tests of the lossy all-reduce generators (topk, hierarchical_topk, coarse_sparse):
// their defined approximations on hand-made inputs, densities, node layouts and chunk sizes the
// property sweep does not choose, and their parameter checks.
#include "helpers.hpp"

#include "ddlsim/collectives/reference.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>

using namespace ddlsim;
using namespace ddlsim::coll;
using namespace ddlsim::coll::test;
using Catch::Matchers::Contains;

namespace {

CollectiveCall sparse(const std::string& algorithm, int ranks, std::uint64_t elements,
                      double density, Reduction reduction = Reduction::sum,
                      DataType dtype = DataType::fp32) {
  CollectiveCall call = make_call(Op::all_reduce, algorithm, ranks, elements, dtype, reduction);
  call.params.density = density;
  return call;
}

std::vector<int> equal_nodes(int nodes, int size) {
  std::vector<int> out;
  for (int r = 0; r < nodes * size; ++r) out.push_back(r / size);
  return out;
}

std::string describe(const CollectiveCall& call) {
  std::ostringstream out;
  out << call.algorithm << " p=" << call.ranks << " n=" << call.elements() << ' '
      << to_string(call.dtype) << ' ' << to_string(call.reduction)
      << " density=" << call.params.density << " chunk_bytes=" << call.params.chunk_bytes
      << " nodes=" << call.node_of_rank.size();
  return out.str();
}

int failures = 0;
void prove(const CollectiveCall& call) {
  for (bool integer : {true, false}) {
    const ReferenceResult result =
        run_reference(Schedule::make(call), {integer, std::uint64_t(call.ranks) * 3 + 1});
    if (!result.ok && ++failures <= 5)
      FAIL_CHECK(describe(call) << (integer ? " integer: " : " real: ") << result.error);
  }
  if (call.ranks <= 8) CHECK_NOTHROW(validate(materialize(Schedule::make(call))));
}

// Outputs of `call` on the given inputs, through the executor.
std::vector<std::vector<double>> run(const CollectiveCall& call,
                                     const std::vector<std::vector<double>>& inputs) {
  const ReferenceRun run = execute_reference(Schedule::make(call), inputs);
  INFO(run.status.error);
  REQUIRE(run.status.ok);
  return run.outputs;
}

} // namespace

TEST_CASE("topk: each rank's own top-k is summed") {
  // k = ceil(0.5 * 4) = 2; rank 0 keeps elements 1 and 2 (|-5| and |4|), rank 1 keeps 0 and 3
  // (the tie of |2| at elements 0, 2 and 3 goes to the lower indices after the 9).
  const CollectiveCall call = sparse("topk", 2, 4, 0.5);
  const auto out = run(call, {{1, -5, 4, 0}, {2, 0, 2, 9}});
  for (const auto& o : out) CHECK(o == std::vector<double>{2, -5, 4, 9});
  const auto expected =
      Schedule::make(call).algorithm()->expected_outputs(call, {{1, -5, 4, 0}, {2, 0, 2, 9}});
  CHECK(expected[0] == out[0]);
}

TEST_CASE("topk: densities and rank counts") {
  failures = 0;
  for (int p : {1, 2, 3, 5, 8, 13})
    for (double density : {0.001, 0.03, 0.5, 1.0})
      for (std::uint64_t n : {1, 7, 100, 1001})
        for (DataType dtype : {DataType::fp32, DataType::fp16, DataType::bf16})
          prove(sparse("topk", p, n, density, n % 2 ? Reduction::sum : Reduction::avg, dtype));
  CHECK(failures == 0);
}

TEST_CASE("topk: density 1 is the exact sum") {
  const CollectiveCall call = sparse("topk", 5, 33, 1.0);
  std::vector<std::vector<double>> inputs(5, std::vector<double>(33));
  for (int r = 0; r < 5; ++r)
    for (int i = 0; i < 33; ++i) inputs[std::size_t(r)][std::size_t(i)] = (r * 7 + i * 3) % 11 - 5;
  const auto out = run(call, inputs);
  CHECK(out == exact_outputs(call, inputs));
}

TEST_CASE("topk: k is ceil(density n) and the scratch holds every rank's pairs") {
  const Schedule schedule = Schedule::make(sparse("topk", 4, 1000, 0.01, Reduction::sum));
  CHECK(schedule.buffer_bytes(0, Buffer::scratch) == 4 * 10 * 8); // k = 10 pairs of 8 B
  const Schedule halves =
      Schedule::make(sparse("topk", 3, 1001, 0.01, Reduction::sum, DataType::fp16));
  CHECK(halves.buffer_bytes(2, Buffer::scratch) == 3 * 11 * 6); // ceil(10.01) = 11 pairs of 6 B
}

TEST_CASE("hierarchical_topk: the top-k of each node's sum of each shard") {
  // 2 nodes of 2 ranks, 4 elements: local rank l owns shard l (elements 2l, 2l+1), k = 1.
  CollectiveCall call = sparse("hierarchical_topk", 4, 4, 0.5);
  call.node_of_rank = equal_nodes(2, 2);
  // Node 0 sums {1, 1, -3, 2} (shard 0 keeps element 0: |1| ties go to the lower index, shard 1
  // keeps element 2); node 1 sums {0, 4, 1, 1} (keeps element 1, and element 2 by the tie).
  const auto out = run(call, {{1, 2, -1, 2}, {0, -1, -2, 0}, {0, 3, 1, 0}, {0, 1, 0, 1}});
  for (const auto& o : out) CHECK(o == std::vector<double>{1, 4, -2, 0});
}

TEST_CASE("hierarchical_topk: node layouts densities and dtypes") {
  failures = 0;
  for (auto [nodes, size] : {std::pair{1, 1}, {1, 4}, {3, 1}, {2, 3}, {4, 2}, {3, 5}, {8, 8}})
    for (double density : {0.01, 0.3, 1.0})
      for (std::uint64_t n : {1, 7, 100, 1001})
        for (DataType dtype : {DataType::fp32, DataType::fp16, DataType::bf16}) {
          CollectiveCall call = sparse("hierarchical_topk", nodes * size, n, density,
                                       n % 2 ? Reduction::sum : Reduction::avg, dtype);
          call.node_of_rank = equal_nodes(nodes, size);
          prove(call);
        }
  CHECK(failures == 0);
}

TEST_CASE("hierarchical_topk: nodes of different sizes are rejected") {
  CollectiveCall call = sparse("hierarchical_topk", 5, 100, 0.1);
  call.node_of_rank = {0, 0, 0, 1, 1};
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("needs nodes of equal size"));
  call.node_of_rank.clear();
  call.params.density = 0;
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("density in (0, 1]"));
  call.params.density = 0.1;
  call.params.channels = 2;
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("set channels to 1"));
}

TEST_CASE("coarse_sparse: the chunks with the largest summed norms") {
  // Chunks of 2 elements, density 0.5 of 3 whole chunks = 2 chunks, plus a tail of 1 element.
  CollectiveCall call = sparse("coarse_sparse", 2, 7, 0.5);
  call.params.chunk_bytes = 8;
  // Summed norms: chunk 0: 1 + 1 = 2, chunk 1: 5 + 0 = 5, chunk 2: 0 + 3 = 3; chunks 1 and 2 go.
  const auto out = run(call, {{1, 0, 3, 4, 0, 0, 2}, {0, 1, 0, 0, 0, 3, -1}});
  for (const auto& o : out) CHECK(o == std::vector<double>{0, 0, 3, 4, 0, 3, 1});
}

TEST_CASE("coarse_sparse: chunk sizes with and without a tail") {
  failures = 0;
  for (int p : {1, 2, 3, 4, 7, 16})
    for (std::uint64_t chunk : {4, 8, 12, 40, 400})
      for (double density : {0.01, 0.3, 1.0})
        for (std::uint64_t n : {1, 7, 100, 1000}) {
          CollectiveCall call =
              sparse("coarse_sparse", p, n, density, n % 3 ? Reduction::sum : Reduction::avg);
          call.params.chunk_bytes = chunk;
          prove(call);
        }
  CHECK(failures == 0);
}

TEST_CASE("coarse_sparse: unselected chunks are zero and density 1 is the exact sum") {
  CollectiveCall call = sparse("coarse_sparse", 3, 60, 0.1);
  call.params.chunk_bytes = 16; // 15 chunks, 2 selected
  std::vector<std::vector<double>> inputs(3, std::vector<double>(60));
  for (int r = 0; r < 3; ++r)
    for (int i = 0; i < 60; ++i) inputs[std::size_t(r)][std::size_t(i)] = (r * 5 + i * 7) % 9 - 4;
  const auto out = run(call, inputs);
  int zero_chunks = 0;
  for (int c = 0; c < 15; ++c) {
    bool zero = true;
    for (int i = 0; i < 4; ++i) zero = zero && out[0][std::size_t(4 * c + i)] == 0;
    zero_chunks += zero;
  }
  CHECK(zero_chunks >= 13);
  call.params.density = 1.0;
  CHECK(run(call, inputs) == exact_outputs(call, inputs));
}

TEST_CASE("coarse_sparse: fp16 and chunk sizes that are not whole elements are rejected") {
  CollectiveCall call = sparse("coarse_sparse", 4, 100, 0.1, Reduction::sum, DataType::fp16);
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("use dtype fp32"));
  call = sparse("coarse_sparse", 4, 100, 0.1);
  call.params.chunk_bytes = 6;
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("whole number of 4-byte elements"));
  call = sparse("topk", 4, 100, 0.1);
  call.params.chunk_bytes = 8;
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("does not use chunk_bytes"));
}
