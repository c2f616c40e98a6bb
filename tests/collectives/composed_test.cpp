// Targeted tests of the composed all-reduce generators (hierarchical, nccl_ring, torus2d,
// blueconnect, parameter_server, double_binary_tree) for what the property sweep does not choose:
// node layouts, group sizes, servers, more chunks and channels; and their parameter checks.
#include "helpers.hpp"

#include "ddlsim/collectives/reference.hpp"

#include <catch2/catch.hpp>

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

std::string describe(const CollectiveCall& call, bool integer) {
  std::ostringstream out;
  out << call.algorithm << " p=" << call.ranks << " n=" << call.elements() << ' '
      << to_string(call.dtype) << ' ' << to_string(call.reduction)
      << " chunks=" << call.params.chunks << " channels=" << call.params.channels << " groups={";
  for (int g : call.params.group_sizes) out << g << ' ';
  out << "} servers=" << call.params.servers << (call.params.dedicated_servers ? " dedicated" : "")
      << " nodes={";
  for (int m : call.node_of_rank) out << m << ' ';
  out << "}" << (integer ? " integer" : " real");
  return out.str();
}

// Runs `call` through the reference executor and the structural validation of its dump, for
// integer and real inputs; counts failures and reports the first few.
int failures = 0;
void prove(const CollectiveCall& call) {
  for (bool integer : {true, false}) {
    const Schedule schedule = Schedule::make(call);
    const ReferenceResult result = run_reference(schedule, {integer, std::uint64_t(call.ranks)});
    if (!result.ok && ++failures <= 5) FAIL_CHECK(describe(call, integer) << ": " << result.error);
  }
  if (call.ranks <= 16) CHECK_NOTHROW(validate(materialize(Schedule::make(call))));
}

CollectiveCall all_reduce(const std::string& algorithm, int ranks, std::uint64_t elements,
                          DataType dtype = DataType::fp32, Reduction reduction = Reduction::sum) {
  return make_call(Op::all_reduce, algorithm, ranks, elements, dtype, reduction);
}

} // namespace

TEST_CASE("hierarchical: nodes of different sizes with chunks and channels") {
  failures = 0;
  // More than 8 nodes: the chains move groups of ring blocks, some split where blocks wrap.
  const std::vector<std::vector<int>> layouts{{1},
                                              {5},
                                              {2, 2, 2},
                                              {3, 1, 4, 2},
                                              {1, 1, 1},
                                              {7, 1},
                                              {1, 6},
                                              {4, 4, 4, 4},
                                              {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2},
                                              {1, 3, 2, 1, 2, 3, 1, 2, 2, 1, 3, 2, 2, 1, 1, 3, 2}};
  std::vector<int> many; // 40 nodes of 1 to 3 ranks
  for (int m = 0; m < 40; ++m) many.push_back(1 + (m * 7) % 3);
  for (std::uint64_t n : {1, 1000})
    for (int chunks : {1, 3}) {
      CollectiveCall call = all_reduce("hierarchical", 0, n, DataType::fp32);
      call.node_of_rank = nodes_of(many);
      call.ranks = int(call.node_of_rank.size());
      call.params.chunks = chunks;
      prove(call);
    }
  for (const auto& sizes : layouts)
    for (std::uint64_t n : {0, 1, 7, 1000, 4099})
      for (int chunks : {1, 2, 5})
        for (int channels : {1, 2})
          for (Reduction reduction : {Reduction::sum, Reduction::avg}) {
            CollectiveCall call = all_reduce("hierarchical", 0, n, DataType::fp16, reduction);
            call.node_of_rank = nodes_of(sizes);
            call.ranks = int(call.node_of_rank.size());
            call.params.chunks = chunks;
            call.params.channels = channels;
            prove(call);
          }
  CHECK(failures == 0);
}

TEST_CASE("hierarchical: a node_of_rank that is not node-major is rejected") {
  CollectiveCall call = all_reduce("hierarchical", 4, 16);
  call.node_of_rank = {0, 1, 0, 1};
  CHECK_THAT(error_of([&] { Schedule::make(call); }),
             Contains("list each node's ranks consecutively") && Contains("rank 2 is on node 0"));
  call.node_of_rank = {0, 0, 2, 2};
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("renumber the ranks node by node"));
}

TEST_CASE("torus2d: every grid of up to 36 ranks") {
  failures = 0;
  for (int p = 1; p <= 36; ++p)
    for (int x = 1; x <= p; ++x) {
      if (p % x != 0) continue;
      for (std::uint64_t n : {1, 7, 1000}) {
        CollectiveCall call =
            all_reduce("torus2d", p, n, DataType::fp32, x % 2 ? Reduction::sum : Reduction::avg);
        call.params.group_sizes = {x, p / x};
        call.params.channels = 1 + (p + x) % 2;
        prove(call);
      }
    }
  CHECK(failures == 0);
}

TEST_CASE("blueconnect: deep factorisations and the default from the nodes") {
  failures = 0;
  const std::vector<std::vector<int>> groups{{2, 3, 2},    {4, 2, 3}, {1, 6, 1, 2}, {3, 3, 3},
                                             {2, 2, 2, 2}, {5, 1},    {1, 1, 7},    {4, 2, 4}};
  for (const auto& g : groups) {
    int p = 1;
    for (int x : g) p *= x;
    for (std::uint64_t n : {0, 1, 7, 1000, 4099})
      for (int channels : {1, 3}) {
        CollectiveCall call = all_reduce("blueconnect", p, n, DataType::bf16,
                                         n % 2 ? Reduction::sum : Reduction::avg);
        call.params.group_sizes = g;
        call.params.channels = channels;
        prove(call);
      }
  }
  for (const char* name : {"blueconnect", "torus2d"}) { // {ranks per node, nodes}
    CollectiveCall call = all_reduce(name, 12, 999);
    call.node_of_rank = nodes_of({4, 4, 4});
    prove(call);
  }
  CHECK(failures == 0);
}

TEST_CASE("torus2d and blueconnect: group sizes are checked") {
  CollectiveCall call = all_reduce("torus2d", 12, 100);
  call.params.group_sizes = {2, 3, 2};
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("two numbers"));
  call.params.group_sizes = {4, 4};
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("multiply to 16, not the 12 ranks"));
  call.algorithm = "blueconnect";
  call.params.group_sizes = {3, 0, 4};
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("is not positive"));
  call.params.group_sizes.clear();
  call.node_of_rank = nodes_of({4, 8});
  CHECK_THAT(error_of([&] { Schedule::make(call); }),
             Contains("differ in size") && Contains("group_sizes whose product is 12"));
  call.params.chunks = 2;
  call.node_of_rank.clear();
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("set chunks to 1"));
}

TEST_CASE("parameter_server: co-located and dedicated servers") {
  failures = 0;
  for (int p = 1; p <= 9; ++p)
    for (int servers = 0; servers <= p + 2; ++servers)
      for (bool dedicated : {false, true}) {
        if (!dedicated && servers > p) continue;
        for (std::uint64_t n : {0, 1, 7, 1000})
          for (int channels : {1, 2}) {
            CollectiveCall call = all_reduce("parameter_server", p, n, DataType::fp32,
                                             channels == 2 ? Reduction::avg : Reduction::sum);
            call.params.servers = servers;
            call.params.dedicated_servers = dedicated;
            call.params.channels = channels;
            prove(call);
          }
      }
  CHECK(failures == 0);
  CollectiveCall call = all_reduce("parameter_server", 4, 10);
  call.params.servers = 3;
  call.params.dedicated_servers = true;
  const Schedule schedule = Schedule::make(call);
  CHECK(schedule.ranks() == 7);
  CHECK(schedule.buffer_bytes(4, Buffer::scratch) == 16); // shard 0: 4 of 10 elements
  CHECK(schedule.buffer_bytes(6, Buffer::scratch) == 12);
  CHECK(schedule.buffer_bytes(4, Buffer::input) == 0);
  CHECK(schedule.buffer_bytes(0, Buffer::scratch) == 0);
  call.params.dedicated_servers = false;
  call.params.servers = 5;
  CHECK_THAT(error_of([&] { Schedule::make(call); }),
             Contains("5 co-located servers") && Contains("set dedicated_servers"));
}

TEST_CASE("double_binary_tree: many chunks and channels") {
  failures = 0;
  for (int p : {2, 3, 5, 6, 13, 14, 16, 31, 40})
    for (int chunks : {1, 4, 9})
      for (int channels : {1, 3}) {
        CollectiveCall call = all_reduce("double_binary_tree", p, 4099, DataType::fp32,
                                         chunks == 4 ? Reduction::avg : Reduction::sum);
        call.params.chunks = chunks;
        call.params.channels = channels;
        prove(call);
      }
  CHECK(failures == 0);
  CollectiveCall call = all_reduce("double_binary_tree", 8, 64);
  call.params.channels = 3;
  CHECK(Schedule::make(call).channels() == 6);
}

TEST_CASE("double_binary_tree: trees over nodes with a chain inside each node") {
  failures = 0;
  const std::vector<std::vector<int>> layouts{{4}, {2, 2}, {3, 1, 4, 2}, {8, 8, 8}, {1, 5, 1}};
  for (const auto& sizes : layouts)
    for (std::uint64_t n : {0, 1, 7, 1000, 4099})
      for (int chunks : {1, 3}) {
        CollectiveCall call = all_reduce("double_binary_tree", 0, n, DataType::fp16,
                                         chunks == 1 ? Reduction::sum : Reduction::avg);
        call.node_of_rank = nodes_of(sizes);
        call.ranks = int(call.node_of_rank.size());
        call.params.chunks = chunks;
        call.params.channels = 1 + int(n % 2);
        prove(call);
      }
  CHECK(failures == 0);
}

TEST_CASE("nccl_ring: node layouts with chunks and channels") {
  failures = 0;
  const std::vector<std::vector<int>> layouts{{1},    {5},       {2, 2, 2}, {3, 1, 4, 2},
                                              {7, 1}, {1, 6, 1}, {8, 8},    {4, 4, 4, 4}};
  for (const auto& sizes : layouts)
    for (std::uint64_t n : {0, 1, 7, 1000, 4099})
      for (int chunks : {1, 3})
        for (int channels : {1, 3, 8})
          for (Reduction reduction : {Reduction::sum, Reduction::avg}) {
            CollectiveCall call = all_reduce("nccl_ring", 0, n, DataType::fp16, reduction);
            call.node_of_rank = nodes_of(sizes);
            call.ranks = int(call.node_of_rank.size());
            call.params.chunks = chunks;
            call.params.channels = channels;
            prove(call);
          }
  CHECK(failures == 0);
  CollectiveCall call = all_reduce("nccl_ring", 4, 16);
  call.node_of_rank = {0, 1, 0, 1};
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("list each node's ranks"));
}

TEST_CASE("nccl_ring: each channel crosses between nodes on its own GPU") {
  // Two nodes of 4 ranks, 4 channels: channel c enters a node on local rank c and leaves it on
  // local rank c-1, so the sends from node 0 to node 1 come from ranks 3, 0, 1, 2.
  CollectiveCall call = all_reduce("nccl_ring", 8, 800);
  call.node_of_rank = nodes_of({4, 4});
  call.params.channels = 4;
  const MaterializedSchedule m = materialize(Schedule::make(call));
  for (int c = 0; c < 4; ++c) {
    std::vector<std::pair<int, int>> crossings; // (from, to) of sends from node 0 to node 1
    for (int r = 0; r < 8; ++r)
      for (const Step& step : m.programs[std::size_t(r)][std::size_t(c)])
        if (step.kind == StepKind::send && r < 4 && step.peer >= 4)
          crossings.emplace_back(r, step.peer);
    REQUIRE(!crossings.empty());
    for (const auto& [from, to] : crossings) {
      CHECK(from == (c + 3) % 4);
      CHECK(to == 4 + c);
    }
  }
  // The reduce-scatter receives are all posted first, before any send.
  for (int c = 0; c < 4; ++c)
    for (int i = 0; i < 7; ++i)
      CHECK(m.programs[5][std::size_t(c)][std::size_t(i)].kind == StepKind::recv_reduce);
  // One rank per node (no node_of_rank): the plain ring r -> r+1 in every channel.
  call.node_of_rank.clear();
  const MaterializedSchedule flat = materialize(Schedule::make(call));
  for (int c = 0; c < 4; ++c)
    for (const Step& step : flat.programs[3][std::size_t(c)])
      if (step.kind == StepKind::send) CHECK(step.peer == 4);
}

TEST_CASE("composed generators reject params they do not use") {
  CollectiveCall call = all_reduce("hierarchical", 8, 64);
  call.params.group_sizes = {2, 4};
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("does not use group_sizes"));
  call = all_reduce("double_binary_tree", 8, 64);
  call.params.servers = 2;
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("has no servers"));
  call = all_reduce("blueconnect", 8, 64);
  call.params.density = 0.5;
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("is dense"));
  call = all_reduce("parameter_server", 8, 64);
  call.params.chunk_bytes = 64;
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("does not use chunk_bytes"));
  call = all_reduce("torus2d", 8, 64, DataType::fp32, Reduction::adasum);
  CHECK_THAT(error_of([&] { Schedule::make(call); }), Contains("does not support adasum"));
}
