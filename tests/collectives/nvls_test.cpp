// The NVLS generators (nvls, nvls_tree; reduce_scatter and all_gather nvls) and the switch steps
// they emit (rule 4 of step.hpp), proven by the reference executor.
#include "helpers.hpp"

#include "ddlsim/collectives/dump.hpp"
#include "ddlsim/collectives/reference.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace ddlsim;
using namespace ddlsim::coll;
using namespace ddlsim::coll::test;

namespace {

// node_of_rank for `nodes` nodes of `per_node` consecutive ranks.
std::vector<int> nodes_of(int nodes, int per_node) {
  std::vector<int> out;
  for (int a = 0; a < nodes; ++a)
    for (int l = 0; l < per_node; ++l) out.push_back(a);
  return out;
}

std::size_t switch_steps(const Schedule& schedule) {
  std::size_t count = 0;
  const MaterializedSchedule all = materialize(schedule);
  for (const auto& rank : all.programs)
    for (const auto& program : rank)
      for (const Step& step : program) count += step.is_switch() ? 1 : 0;
  return count;
}

void prove(CollectiveCall call) {
  for (bool integer : {true, false}) {
    INFO(to_string(call.op) << ' ' << call.algorithm << " p=" << call.ranks
                            << " n=" << call.elements() << ' ' << to_string(call.dtype) << ' '
                            << to_string(call.reduction) << " chunks=" << call.params.chunks
                            << " channels=" << call.params.channels << " nodes="
                            << (call.node_of_rank.empty() ? call.ranks
                                                          : call.node_of_rank.back() + 1)
                            << (integer ? " integer" : " real"));
    const Schedule schedule = Schedule::make(call);
    const ReferenceResult result = run_reference(schedule, {integer, 7});
    CHECK(result.ok);
    if (!result.ok) FAIL_CHECK(result.error);
  }
}

} // namespace

TEST_CASE("nvls: all-reduce through the switch is exact for p = 2..8, channels 1..4, chunks") {
  for (int p = 2; p <= 8; ++p)
    for (int channels = 1; channels <= 4; ++channels)
      for (int chunks : {1, 3})
        for (DataType dtype : {DataType::fp32, DataType::fp16, DataType::bf16})
          for (Reduction reduction : {Reduction::sum, Reduction::avg})
            for (std::uint64_t n : {std::uint64_t(1), std::uint64_t(37), std::uint64_t(4099)}) {
              CollectiveCall call = make_call(Op::all_reduce, "nvls", p, n, dtype, reduction);
              call.params.channels = channels;
              call.params.chunks = chunks;
              prove(call);
            }
}

TEST_CASE("nvls: nvls_tree is exact over nodes of 1..8 ranks") {
  // Every dtype and reduction it takes (adasum is rejected: check_common).
  // 5 and 8 nodes: inner tree vertices with two child nodes (a scratch slot) in both trees;
  // 3 channels: tree 0, tree 1, tree 0; 20 chunks: more than the 8 a connection holds at once
  // (the lanes' receives posted 7 ahead, the switch waiting for the slot of chunk j - 8).
  for (auto [nodes, per_node] :
       {std::pair{2, 2}, {2, 4}, {3, 2}, {4, 2}, {2, 8}, {3, 1}, {1, 4}, {5, 2}, {8, 1}, {8, 2}})
    for (int channels : {1, 2, 3})
      for (int chunks : {1, 3, 20})
        for (Reduction reduction : {Reduction::sum, Reduction::avg})
          for (DataType dtype : {DataType::fp32, DataType::fp16, DataType::bf16}) {
            CollectiveCall call =
                make_call(Op::all_reduce, "nvls_tree", nodes * per_node, 1001, dtype, reduction);
            call.node_of_rank = nodes_of(nodes, per_node);
            call.params.channels = channels;
            call.params.chunks = chunks;
            prove(call);
          }
}

TEST_CASE("nvls: nvls_tree is exact when chunks leave some shards empty") {
  // Fewer elements than chunks x shards: every rank skips the empty shards alike, on every lane,
  // and the lanes' waits still name the right steps.
  for (auto [nodes, per_node] : {std::pair{2, 4}, {5, 2}, {3, 1}})
    for (std::uint64_t n : {std::uint64_t(1), std::uint64_t(5), std::uint64_t(37)})
      for (int chunks : {3, 20})
        for (Reduction reduction : {Reduction::sum, Reduction::avg}) {
          CollectiveCall call = make_call(Op::all_reduce, "nvls_tree", nodes * per_node, n,
                                          DataType::fp32, reduction);
          call.node_of_rank = nodes_of(nodes, per_node);
          call.params.channels = 2;
          call.params.chunks = chunks;
          prove(call);
        }
}

TEST_CASE("nvls: nvls_tree runs the tree's upward and downward streams as separate programs") {
  // NCCL's warp groups (src/device/all_reduce.h, NVLS_TREE): scatter, reduce (tree up), bcast
  // (tree down) and gather, each with its own connections; here four programs per channel,
  // program 4c + lane: 0 the switch reduces, 1 up, 2 down, 3 the multicasts. The upward lane
  // receives from the child nodes and sends to the parent, the downward lane the reverse, and
  // the upward lane waits for nothing but the switch (never for a broadcast).
  CollectiveCall call = make_call(Op::all_reduce, "nvls_tree", 16, 4096);
  call.node_of_rank = nodes_of(8, 2);
  call.params.channels = 2;
  call.params.chunks = 20;
  const Schedule schedule = Schedule::make(call);
  REQUIRE(schedule.channels() == 8);
  const MaterializedSchedule all = materialize(schedule);
  int inner = 0;
  for (int rank = 0; rank < call.ranks; ++rank)
    for (int c = 0; c < call.params.channels; ++c) {
      INFO("rank " << rank << " channel " << c);
      const auto& lanes = all.programs[std::size_t(rank)];
      auto peers = [&](int lane, bool sends) {
        std::set<int> out;
        for (const Step& step : lanes[std::size_t(4 * c + lane)])
          if (sends ? step.is_send() : step.is_receive()) out.insert(step.peer);
        return out;
      };
      auto waits = [&](int lane) {
        std::set<int> out;
        for (const Step& step : lanes[std::size_t(4 * c + lane)])
          if (step.has_wait()) out.insert(step.wait_channel - 4 * c);
        return out;
      };
      for (const Step& step : lanes[std::size_t(4 * c)])
        CHECK(step.kind == StepKind::switch_reduce);
      for (const Step& step : lanes[std::size_t(4 * c + 3)])
        CHECK(step.kind == StepKind::switch_multicast);
      CHECK(peers(1, true).size() <= 1);        // to the parent, if any
      CHECK(peers(1, true) == peers(2, false)); // ... from which the final shard comes
      CHECK(peers(1, false) == peers(2, true)); // the children, both ways
      const bool root = peers(1, true).empty();
      // The switch reduces wait for the upward lane to free a slot (chunk j - 8), the upward
      // lane for the switch only (never for a broadcast); the root's sends down and multicasts
      // wait for its sums, a non-root's multicasts for the final shard from the parent.
      CHECK(waits(0) == std::set<int>{1});
      CHECK(waits(1) == std::set<int>{0});
      CHECK(waits(2) == (root ? std::set<int>{1} : std::set<int>{}));
      CHECK(waits(3) == std::set<int>{root ? 1 : 2});
      if (!peers(1, false).empty() && !peers(1, true).empty()) ++inner;
    }
  CHECK(inner > 0); // some ranks are inner vertices of a tree, with both streams busy
  // One node has no tree: one NVLS program per channel.
  call.node_of_rank = nodes_of(1, 16);
  CHECK(Schedule::make(call).channels() == 2);
}

TEST_CASE("nvls: reduce_scatter and all_gather through the switch are exact") {
  for (Op op : {Op::reduce_scatter, Op::all_gather})
    for (int p = 2; p <= 8; ++p)
      for (int channels : {1, 3})
        for (int chunks : {1, 2})
          for (Reduction reduction : {Reduction::sum, Reduction::avg}) {
            if (op == Op::all_gather && reduction == Reduction::avg) continue;
            CollectiveCall call = make_call(op, "nvls", p, 1000, DataType::fp16, reduction);
            call.params.channels = channels;
            call.params.chunks = chunks;
            prove(call);
          }
}

TEST_CASE("nvls: the generators move data with switch steps, one group per shard") {
  CollectiveCall call = make_call(Op::all_reduce, "nvls", 8, 8 * 1024);
  // One reduce and one multicast per shard, posted by every member: 2 · 8 · 8.
  CHECK(switch_steps(Schedule::make(call)) == 2 * 8 * 8);
  call.params.chunks = 4;
  CHECK(switch_steps(Schedule::make(call)) == 4 * 2 * 8 * 8);
  CollectiveCall tree = make_call(Op::all_reduce, "nvls_tree", 16, 8 * 1024);
  tree.node_of_rank = nodes_of(2, 8);
  CHECK(switch_steps(Schedule::make(tree)) == 2 * 2 * 8 * 8);
  CHECK(has_switch_steps(Schedule::make(tree)));
  // One rank per node: no switch at all, a plain tree over the nodes.
  tree.node_of_rank.clear();
  CHECK_FALSE(has_switch_steps(Schedule::make(tree)));
}

TEST_CASE("nvls: calls the generators cannot do are rejected with the fix") {
  CollectiveCall call = make_call(Op::all_reduce, "nvls", 8, 1024);
  call.node_of_rank = nodes_of(2, 4);
  CHECK_THAT(error_of([&] { Schedule::make(call); }),
             Catch::Contains("use \"nvls_tree\" across nodes"));
  call.algorithm = "nvls_tree";
  call.node_of_rank = {0, 0, 0, 1, 1, 2, 2, 2};
  CHECK_THAT(error_of([&] { Schedule::make(call); }),
             Catch::Contains("each node needs the same number of ranks"));
  CollectiveCall adasum =
      make_call(Op::all_reduce, "nvls", 4, 1024, DataType::fp32, Reduction::adasum);
  CHECK_THAT(error_of([&] { Schedule::make(adasum); }), Catch::Contains("adasum"));
}

TEST_CASE("nvls: switch steps are checked: group size, owner, members") {
  CollectiveCall call = make_call(Op::all_reduce, "nvls", 2, 4);
  MaterializedSchedule s = materialize(Schedule::make(call));
  // A well-formed schedule survives a dump round trip and validation.
  CHECK_NOTHROW(validate(s));
  const Json text = parse_json_text(to_json(s).dump(1), "dump");
  CHECK(schedule_from_json(JsonValue(text, "")) == s);
  // Group size out of range.
  MaterializedSchedule bad = s;
  bad.programs[0][0][0].param = 1;
  CHECK_THAT(error_of([&] { validate(bad); }), Catch::Contains("group size (param)"));
  // A member that leaves the group: the other is left waiting.
  bad = s;
  bad.programs[1][0].clear();
  CHECK_THAT(error_of([&] { validate(bad); }),
             Catch::Contains("a switch step without the rest of its group"));
  CHECK(run_reference(Schedule::from_materialized(s)).ok);
  // A non-owner with a destination for a reduce.
  bad = s;
  for (Step& step : bad.programs[1][0])
    if (step.kind == StepKind::switch_reduce && step.peer == 0) step.dst = step.src;
  CHECK_THAT(error_of([&] { validate(bad); }), Catch::Contains("dst must be unset"));
}
