// The byteps all-reduce generator (BytePS's push/pull with a summation server on every node):
// correct sums on the node layouts the property sweep does not choose, its parameter checks, and
// its defining effect: reducing inside the node before the push, a node sends 2n(N-1)/N bytes
// to other nodes, less than a parameter server whose every GPU pushes through the node's NIC.
#include "helpers.hpp"

#include "ddlsim/collectives/reference.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace ddlsim;
using namespace ddlsim::coll;
using namespace ddlsim::coll::test;
using Catch::Matchers::Contains;

namespace {

std::vector<int> nodes_of(int nodes, int size) {
  std::vector<int> out;
  for (int m = 0; m < nodes; ++m)
    for (int i = 0; i < size; ++i) out.push_back(m);
  return out;
}

CollectiveCall call_of(const std::string& algorithm, int nodes, int size, std::uint64_t elements,
                       DataType dtype = DataType::fp32, Reduction reduction = Reduction::sum) {
  CollectiveCall call =
      make_call(Op::all_reduce, algorithm, nodes * size, elements, dtype, reduction);
  call.node_of_rank = nodes_of(nodes, size);
  return call;
}

// Bytes the ranks of node `node` send to ranks of other nodes, over every channel.
std::uint64_t bytes_leaving(const CollectiveCall& call, int node) {
  const MaterializedSchedule m = materialize(Schedule::make(call));
  std::uint64_t bytes = 0;
  for (int r = 0; r < call.ranks; ++r) {
    if (call.node_of_rank[std::size_t(r)] != node) continue;
    for (const auto& program : m.programs[std::size_t(r)])
      for (const Step& step : program)
        if (step.kind == StepKind::send && call.node_of_rank[std::size_t(step.peer)] != node)
          bytes += step.bytes;
  }
  return bytes;
}

} // namespace

TEST_CASE("byteps: correct sums and averages on equal nodes with channels") {
  int failures = 0;
  for (const auto& [nodes, size] : std::vector<std::pair<int, int>>{
           {1, 1}, {1, 4}, {2, 1}, {4, 1}, {2, 2}, {2, 4}, {3, 2}, {3, 3}, {5, 2}, {2, 8}})
    for (std::uint64_t n : {0, 1, 7, 1000, 4099})
      for (int channels : {1, 3})
        for (DataType dtype : {DataType::fp32, DataType::fp16})
          for (Reduction reduction : {Reduction::sum, Reduction::avg}) {
            CollectiveCall call = call_of("byteps", nodes, size, n, dtype, reduction);
            call.params.channels = channels;
            for (bool integer : {true, false}) {
              const ReferenceResult result =
                  run_reference(Schedule::make(call), {integer, std::uint64_t(call.ranks)});
              if (!result.ok && ++failures <= 5)
                FAIL_CHECK(nodes << " x " << size << " n=" << n << " channels=" << channels << ' '
                                 << to_string(dtype) << ' ' << to_string(reduction) << ": "
                                 << result.error);
            }
            if (call.ranks <= 16) CHECK_NOTHROW(validate(materialize(Schedule::make(call))));
          }
  CHECK(failures == 0);
}

TEST_CASE("byteps: nodes of different sizes and unused params are rejected with the fix") {
  CollectiveCall call = call_of("byteps", 2, 2, 64);
  call.node_of_rank = {0, 0, 0, 1};
  CHECK_THAT(error_of([&] { Schedule::make(call); }),
             Contains("algorithm byteps") && Contains("same number of GPUs"));
  call = call_of("byteps", 2, 2, 64);
  call.params.chunks = 2;
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("algorithm byteps"));
}

TEST_CASE("byteps: a node sends 2n(N-1)/N to other nodes, less than a GPU parameter server") {
  // 4 nodes of 8 GPUs, n = 3200 fp32 elements (divisible by L·N: every shard alike).
  const std::uint64_t n = 3200, bytes = 4 * n;
  const int N = 4, L = 8;
  const CollectiveCall byteps = call_of("byteps", N, L, n);
  for (int node = 0; node < N; ++node)
    CHECK(bytes_leaving(byteps, node) == 2 * bytes * std::uint64_t(N - 1) / std::uint64_t(N));
  // The same job on a parameter server with one GPU server per node's worth of servers (S = N,
  // servers co-located on ranks 0..S-1, all on node 0): every GPU of node 1 pushes and pulls
  // its shards through the node's NIC itself, L times what BytePS sends after its node-local
  // reduce.
  CollectiveCall ps = call_of("parameter_server", N, L, n);
  ps.params.servers = N;
  CHECK(bytes_leaving(ps, 1) == std::uint64_t(L) * bytes);
  CHECK(bytes_leaving(byteps, 1) * 4 < bytes_leaving(ps, 1));
  // As much as the hierarchical all-reduce, the bandwidth optimum without extra CPU machines
  // (the paper's Theorem 1 at k = 0).
  CHECK(bytes_leaving(byteps, 1) == bytes_leaving(call_of("hierarchical", N, L, n), 1));
}
