// nccl_tree: NCCL's multi-channel pipelined double binary tree. The reference executor proves it
// over node layouts (one and several nodes, odd and even node counts, nodes of different sizes),
// channels 1..2L, chunks 1..8, sum and avg, fp32/fp16/bf16; and the tests pin the structure NCCL
// gives it: which tree each channel runs, which GPU heads a node, and that with C = L channels
// every GPU (so every rail NIC) carries inter-node traffic.
#include "helpers.hpp"

#include "ddlsim/collectives/reference.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <sstream>

using namespace ddlsim;
using namespace ddlsim::coll;
using namespace ddlsim::coll::test;
using Catch::Matchers::Contains;

namespace {

std::vector<int> nodes_of(const std::vector<int>& sizes) {
  std::vector<int> out;
  for (std::size_t m = 0; m < sizes.size(); ++m)
    for (int i = 0; i < sizes[m]; ++i) out.push_back(int(m));
  return out;
}

CollectiveCall tree_call(const std::vector<int>& sizes, std::uint64_t elements, int channels,
                         int chunks, DataType dtype = DataType::fp32,
                         Reduction reduction = Reduction::sum) {
  CollectiveCall call = make_call(Op::all_reduce, "nccl_tree", 0, elements, dtype, reduction);
  call.node_of_rank = nodes_of(sizes);
  call.ranks = int(call.node_of_rank.size());
  call.params.channels = channels;
  call.params.chunks = chunks;
  return call;
}

std::string describe(const CollectiveCall& call, bool integer) {
  std::ostringstream out;
  out << "nccl_tree p=" << call.ranks << " n=" << call.elements() << ' ' << to_string(call.dtype)
      << ' ' << to_string(call.reduction) << " chunks=" << call.params.chunks
      << " channels=" << call.params.channels << " nodes={";
  for (int m : call.node_of_rank) out << m << ' ';
  out << "}" << (integer ? " integer" : " real");
  return out.str();
}

int failures = 0;
void prove(const CollectiveCall& call) {
  for (bool integer : {true, false}) {
    const ReferenceResult result =
        run_reference(Schedule::make(call), {integer, std::uint64_t(call.ranks)});
    if (!result.ok && ++failures <= 5) FAIL_CHECK(describe(call, integer) << ": " << result.error);
  }
  if (call.ranks <= 16) CHECK_NOTHROW(validate(materialize(Schedule::make(call))));
}

// (from, to) of the sends of channel `c` that cross from one node to another.
std::set<std::pair<int, int>> crossings(const CollectiveCall& call, int c) {
  const MaterializedSchedule m = materialize(Schedule::make(call));
  std::set<std::pair<int, int>> out;
  for (int r = 0; r < call.ranks; ++r)
    for (const Step& step : m.programs[std::size_t(r)][std::size_t(c)])
      if (step.kind == StepKind::send &&
          call.node_of_rank[std::size_t(r)] != call.node_of_rank[std::size_t(step.peer)])
        out.emplace(r, step.peer);
  return out;
}

} // namespace

TEST_CASE("nccl_tree: the reference executor proves it over node layouts, channels, chunks") {
  failures = 0;
  const std::vector<std::vector<int>> layouts{
      {1},    {5},    {1, 1},          {1, 1, 1},    {2, 2},    {4, 4, 4},
      {3, 3}, {8, 8}, {2, 2, 2, 2, 2}, {3, 1, 4, 2}, {1, 5, 1}, {4, 2}};
  const std::vector<std::uint64_t> sizes{0, 1, 7, 1000, 4099};
  const DataType dtypes[] = {DataType::fp32, DataType::fp16, DataType::bf16};
  int variant = 0;
  for (const auto& layout : layouts) {
    const int L = *std::max_element(layout.begin(), layout.end());
    for (int channels = 1; channels <= 2 * L; ++channels)
      for (int chunks : {1, 2, 3, 8}) {
        ++variant;
        const Reduction reduction = variant % 2 == 0 ? Reduction::avg : Reduction::sum;
        prove(tree_call(layout, sizes[std::size_t(variant) % sizes.size()], channels, chunks,
                        dtypes[variant % 3], reduction));
      }
  }
  // One rank per node (no node_of_rank), odd and even counts, both trees.
  for (int p : {2, 3, 6, 7, 13, 16})
    for (int channels : {1, 2, 3})
      for (int chunks : {1, 4}) {
        CollectiveCall call = make_call(Op::all_reduce, "nccl_tree", p, 4099, dtypes[p % 3],
                                        chunks == 4 ? Reduction::avg : Reduction::sum);
        call.params.channels = channels;
        call.params.chunks = chunks;
        prove(call);
      }
  CHECK(failures == 0);
}

TEST_CASE("nccl_tree: one rank per node on two channels is double_binary_tree on one") {
  // One GPU per node: one chain (S = 1), channel 0 runs tree 0 on the first half and channel 1
  // tree 1 on the second, exactly double_binary_tree's two programs of its one channel.
  for (int p : {2, 5, 8, 11})
    for (int chunks : {1, 3}) {
      CollectiveCall call = make_call(Op::all_reduce, "nccl_tree", p, 999);
      call.params.channels = 2;
      call.params.chunks = chunks;
      CollectiveCall dbt = call;
      dbt.algorithm = "double_binary_tree";
      dbt.params.channels = 1;
      const MaterializedSchedule ours = materialize(Schedule::make(call));
      const MaterializedSchedule theirs = materialize(Schedule::make(dbt));
      CHECK(ours.programs == theirs.programs);
    }
}

TEST_CASE("nccl_tree: channels take turns at heading a node, tree 0 then tree 1") {
  // Two nodes of 4 GPUs. Tree 0 has node 0 as root; tree 1 mirrors it (node 1 root). With
  // C = 4 = L every channel runs tree 0 with its head on local rank c: node 1's head sends to
  // node 0's head on the same local rank (the same rail).
  for (int c = 0; c < 4; ++c)
    CHECK(crossings(tree_call({4, 4}, 800, 4, 2), c) ==
          std::set<std::pair<int, int>>{{4 + c, c}, {c, 4 + c}});
  // C = 8: channels 4..7 repeat the chains on tree 1, whose root is node 1: the same pairs.
  const CollectiveCall both = tree_call({4, 4}, 800, 8, 2);
  for (int c = 0; c < 8; ++c)
    CHECK(crossings(both, c) ==
          std::set<std::pair<int, int>>{{4 + c % 4, c % 4}, {c % 4, 4 + c % 4}});
  // C = 2 < L: two chains, headed by local ranks 0 and 2.
  CHECK(crossings(tree_call({4, 4}, 800, 2, 1), 1) ==
        std::set<std::pair<int, int>>{{6, 2}, {2, 6}});
  // Inside a node the chain runs from the head through the following local ranks: on channel
  // 1 of C = 4, node 0's chain is 1 -> 2 -> 3 -> 0, so rank 0 (the tail) sends up to rank 3.
  const MaterializedSchedule m = materialize(Schedule::make(tree_call({4, 4}, 800, 4, 1)));
  for (const Step& step : m.programs[0][1])
    if (step.kind == StepKind::send) CHECK(step.peer == 3);
}

TEST_CASE("nccl_tree: with C = L channels every GPU of a node sends and receives between nodes") {
  // 2 nodes of 8 GPUs (DGX-like: one NIC per GPU). Over all channels, every local rank of each
  // node is a head: each NIC carries tree traffic. One channel uses one GPU per node.
  for (int nodes : {2, 3}) {
    const CollectiveCall call = tree_call(std::vector<int>(std::size_t(nodes), 8), 4096, 8, 2);
    std::set<int> senders, receivers;
    for (int c = 0; c < 8; ++c)
      for (const auto& [from, to] : crossings(call, c)) {
        senders.insert(from);
        receivers.insert(to);
      }
    CHECK(int(senders.size()) == 8 * nodes);
    CHECK(int(receivers.size()) == 8 * nodes);
  }
  std::set<int> one;
  for (const auto& [from, to] : crossings(tree_call({8, 8}, 4096, 1, 2), 0)) one.insert(from);
  CHECK(one == std::set<int>{0, 8});
}

TEST_CASE("nccl_tree: channels and scratch") {
  const CollectiveCall call = tree_call({2, 2, 2, 2}, 1000, 4, 3);
  const MaterializedSchedule m = materialize(Schedule::make(call));
  CHECK(m.programs[0].size() == 4);
  // A head with a chain successor and two child nodes receives three ways: two scratch slots.
  CHECK(*std::max_element(m.scratch_bytes.begin(), m.scratch_bytes.end()) == 2 * call.bytes);
  // One rank alone: a copy, no scratch.
  CHECK(materialize(Schedule::make(tree_call({1}, 10, 2, 2))).scratch_bytes[0] == 0);
}

TEST_CASE("nccl_tree: rejects what it cannot run") {
  CollectiveCall call = tree_call({2, 2}, 64, 1, 1);
  call.node_of_rank = {0, 1, 0, 1};
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("list each node's ranks"));
  call = tree_call({2, 2}, 64, 1, 1);
  call.params.group_sizes = {2, 2};
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("does not use group_sizes"));
  call = tree_call({2, 2}, 64, 1, 1, DataType::fp32, Reduction::adasum);
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("does not support adasum"));
}
