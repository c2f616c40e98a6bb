// The analytic engine's dependency-order evaluation (simulate_dependency_order) must give exactly
// the event-driven evaluation's timing, both where every transfer has its links to itself and
// where transfers share links (those are timed event-driven inside it), and must give up, so that
// simulate_analytic falls back, on what it cannot order (cross-program waits).
#include "two_streams.hpp"
#include "uniform_star.hpp"

#include "ddlsim/collectives/algorithm.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/sim/analytic_engine.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "ddlsim/topologies/presets.hpp"

#include "generator_schedule.hpp"

#include <catch2/catch.hpp>

#include <sstream>

using namespace ddlsim;
using namespace ddlsim::sim;

namespace {

// p GPUs, one per node, on one switch, with links of `bytes_per_second` whose latencies differ
// from rank to rank (so that transfers of one round do not all end at the same instant).
topo::Topology star(int p, double bytes_per_second) {
  topo::Topology t;
  const topo::VertexId hub = t.add_vertex({topo::VertexKind::network_switch, "switch", -1, 0, 0});
  for (int r = 0; r < p; ++r) test::add_gpu_node(t, r, hub, bytes_per_second, 300'000 + 1'000 * r);
  return t;
}

// Two DGX-A100 servers (NVSwitch inside, eight NICs each) under one switch.
topo::Topology two_dgx() {
  topo::ClusterSpec spec;
  spec.node_groups.push_back({*topo::find_node_preset("dgx-a100"), 2});
  spec.fabric.type = topo::FabricType::single_switch;
  return topo::build_topology(spec);
}

// Four DGX-A100 servers with four NICs each on a k=4 fat tree: equal-cost paths over fabric
// links, as in the benchmark's cluster.
topo::Topology fat_tree_dgx() {
  topo::ClusterSpec spec;
  topo::NodeSpec node = *topo::find_node_preset("dgx-a100");
  node.nics = 4;
  spec.node_groups.push_back({node, 4});
  spec.fabric.type = topo::FabricType::fat_tree;
  spec.fabric.k = 4;
  return topo::build_topology(spec);
}

// The call of `algorithm`, or nothing if the generator rejects it. Generators reject parameters
// they do not use, so the ones that need group sizes, servers or a root get them on a retry.
std::optional<coll::Schedule> make_schedule(const topo::Topology& topology, coll::Op op,
                                            const coll::Algorithm& algorithm, int ranks,
                                            std::uint64_t bytes, int chunks, int channels,
                                            coll::CollectiveCall& call) {
  call = test_support::generator_call(op, algorithm, ranks, bytes, chunks, channels);
  for (int r = 0; r < ranks; ++r)
    call.node_of_rank.push_back(topology.vertex(topology.gpus()[std::size_t(r)]).node);
  return test_support::schedule_with_needed_params(call);
}

std::string describe(const coll::CollectiveCall& call) {
  std::ostringstream out;
  out << to_string(call.op) << ' ' << call.algorithm << " p=" << call.ranks
      << " bytes=" << call.bytes << " chunks=" << call.params.chunks
      << " channels=" << call.params.channels;
  return out.str();
}

// Whether a step of `schedule` waits for another program of its rank (Step::wait_channel).
bool has_cross_program_waits(const coll::Schedule& schedule) {
  const coll::MaterializedSchedule all = coll::materialize(schedule);
  for (const auto& rank : all.programs)
    for (const auto& program : rank)
      for (const coll::Step& step : program)
        if (step.has_wait()) return true;
  return false;
}

struct Tally {
  int alone = 0;  // evaluated; no two transfers ever shared a link
  int shared = 0; // evaluated; some did (timed event-driven inside)
  int gave_up = 0;
  // Gave up on a schedule with cross-program waits (nvls_tree's lanes with one GPU per node),
  // which dependency order may not be able to order.
  int gave_up_on_waits = 0;
};

// Both evaluations of `call`; fails unless dependency order either gives up or agrees exactly.
void compare(const topo::Topology& topology, const coll::CollectiveCall& call,
             const coll::Schedule& schedule, const AnalyticOptions& options, Tally& tally) {
  topo::Router router(topology);
  AnalyticOptions events_only = options;
  events_only.try_dependency_order = false;
  const CollectiveTiming events = simulate_analytic(topology, router, schedule, events_only);
  const std::optional<CollectiveTiming> fast =
      simulate_dependency_order(topology, router, schedule, options);
  if (!fast) {
    ++(has_cross_program_waits(schedule) ? tally.gave_up_on_waits : tally.gave_up);
    return;
  }
  ++(fast->peak_flows_per_link > 1 ? tally.shared : tally.alone);
  INFO(describe(call));
  CHECK(fast->time == events.time);
  CHECK(fast->steps == events.steps);
  CHECK(fast->transfers == events.transfers);
  CHECK(fast->bytes_sent == events.bytes_sent);
  CHECK(fast->peak_flows_per_link == events.peak_flows_per_link);
  CHECK(fast->complete);
  CHECK(fast->evaluated_in_dependency_order);
  CHECK_FALSE(events.evaluated_in_dependency_order);
}

void sweep(const topo::Topology& topology, const std::vector<int>& rank_counts,
           const std::vector<std::uint64_t>& sizes, const AnalyticOptions& options, Tally& tally) {
  for (coll::Op op :
       {coll::Op::all_reduce, coll::Op::reduce_scatter, coll::Op::all_gather, coll::Op::broadcast,
        coll::Op::reduce, coll::Op::all_to_all, coll::Op::send_recv})
    for (const coll::Algorithm* algorithm : coll::algorithms_for(op))
      for (int ranks : rank_counts)
        for (std::uint64_t bytes : sizes)
          for (int chunks : {1, 3})
            for (int channels : {1, 2}) {
              coll::CollectiveCall call;
              const std::optional<coll::Schedule> schedule =
                  make_schedule(topology, op, *algorithm, ranks, bytes, chunks, channels, call);
              // Dependency order gives switch steps (NVLS) to the event-driven evaluation, and
              // these A100 and star topologies have no NVLS switch: tests/sim/nvls_test.cpp.
              if (schedule && !coll::has_switch_steps(*schedule))
                compare(topology, call, *schedule, options, tally);
            }
}

// Every generator on `topology`: dependency order evaluates every call and agrees exactly, both
// on calls whose transfers never share a link (rings, chains, pairwise exchanges) and on calls
// whose transfers do (chunked and multi-channel rings, trees, direct all-to-all).
void check_sweep(const topo::Topology& topology, const std::vector<int>& rank_counts,
                 const std::vector<std::uint64_t>& sizes, const AnalyticOptions& options) {
  Tally tally;
  sweep(topology, rank_counts, sizes, options, tally);
  INFO("alone " << tally.alone << ", shared " << tally.shared << ", gave up " << tally.gave_up
                << " (and " << tally.gave_up_on_waits << " with cross-program waits)");
  CHECK(tally.gave_up == 0);
  CHECK(tally.alone >= 50);
  CHECK(tally.shared >= 50);
}

// A 1 MiB ring all-reduce on 8 ranks.
coll::CollectiveCall ring_of_8() {
  coll::CollectiveCall call;
  call.ranks = 8;
  call.bytes = 1 << 20;
  call.algorithm = "ring";
  return call;
}

} // namespace

TEST_CASE("dependency order gives the event-driven timing: uniform star, odd sizes") {
  AnalyticOptions options;
  options.per_step_overhead = 2'000'000;
  check_sweep(star(16, 1.25e10), {1, 2, 3, 5, 8, 13, 16}, {0, 4, 4 * 4099, 1 << 20}, options);
}

TEST_CASE("dependency order gives the event-driven timing: two DGX-A100 servers") {
  check_sweep(two_dgx(), {2, 8, 12, 16}, {4 * 4099, 1 << 22}, AnalyticOptions{});
}

TEST_CASE("dependency order gives the event-driven timing: four DGX-A100 on a k=4 fat tree") {
  check_sweep(fat_tree_dgx(), {8, 24, 32}, {4 * 4099, 1 << 22}, AnalyticOptions{});
}

TEST_CASE("dependency order gives the event-driven timing: zero-picosecond transfers") {
  // 1e13 bytes/s: 4 bytes take 0.4 ps, which rounds to a zero-length interval on the links.
  check_sweep(star(8, 1e13), {2, 3, 8}, {4, 8, 4 * 4099}, AnalyticOptions{});
}

TEST_CASE("dependency order: a flat ring has its links alone, direct all-to-all shares them") {
  const topo::Topology topology = star(8, 1.25e10);
  topo::Router router(topology);
  const coll::CollectiveCall ring = ring_of_8();
  const std::optional<CollectiveTiming> alone =
      simulate_dependency_order(topology, router, coll::Schedule::make(ring), AnalyticOptions{});
  REQUIRE(alone.has_value());
  CHECK(alone->peak_flows_per_link == 1);

  // Every rank sends to all seven peers at once over its one link: seven flows share it, and the
  // max-min shares come from the event-driven part, to the picosecond.
  coll::CollectiveCall direct = ring;
  direct.op = coll::Op::all_to_all;
  direct.algorithm = "direct";
  const coll::Schedule schedule = coll::Schedule::make(direct);
  const std::optional<CollectiveTiming> shared =
      simulate_dependency_order(topology, router, schedule, AnalyticOptions{});
  REQUIRE(shared.has_value());
  CHECK(shared->peak_flows_per_link == 7);
  AnalyticOptions events_only;
  events_only.try_dependency_order = false;
  CHECK(shared->time == simulate_analytic(topology, router, schedule, events_only).time);
}

TEST_CASE("dependency order times cross-program waits as the event-driven engine does") {
  const topo::Topology topology = star(2, 1.25e10);
  topo::Router router(topology);
  AnalyticOptions events_only;
  events_only.try_dependency_order = false;
  for (const bool send_waits : {true, false}) {
    INFO("send waits for the compute: " << send_waits);
    const coll::Schedule schedule = test::two_streams_schedule(send_waits, 1 << 20);
    const std::optional<CollectiveTiming> fast =
        simulate_dependency_order(topology, router, schedule, AnalyticOptions{});
    REQUIRE(fast.has_value());
    CHECK(fast->time == simulate_analytic(topology, router, schedule, events_only).time);
  }
}

TEST_CASE("on_step hands over every step record, in steps_recorded's order, on both evaluations") {
  const topo::Topology topology = star(8, 1.25e10);
  topo::Router router(topology);
  const coll::CollectiveCall call = ring_of_8();
  for (const bool dependency_order : {true, false}) {
    INFO("dependency order: " << dependency_order);
    std::vector<StepRecord> handed;
    AnalyticOptions options;
    options.try_dependency_order = dependency_order;
    options.record_steps = true;
    options.on_step = [&handed](const StepRecord& record) { handed.push_back(record); };
    const CollectiveTiming timing =
        simulate_analytic(topology, router, coll::Schedule::make(call), options);
    CHECK(timing.evaluated_in_dependency_order == dependency_order);
    REQUIRE(handed.size() == timing.steps);
    REQUIRE(timing.steps_recorded.size() == timing.steps);
    for (std::size_t i = 0; i < handed.size(); ++i) {
      CHECK(handed[i].rank == timing.steps_recorded[i].rank);
      CHECK(handed[i].start == timing.steps_recorded[i].start);
      CHECK(handed[i].end == timing.steps_recorded[i].end);
    }
    // Without record_steps the records are only handed over.
    options.record_steps = false;
    handed.clear();
    const CollectiveTiming quiet =
        simulate_analytic(topology, router, coll::Schedule::make(call), options);
    CHECK(quiet.steps_recorded.empty());
    CHECK(handed.size() == quiet.steps);
  }
}

namespace {

// One rank, two channels: channel 0 a chain of `chain` compute steps (each after the one before),
// its first waiting for channel 1's first; channel 1 waits for channel 0's step `late`, then for
// its step 3, long forgotten by then unless the evaluation kept thousands of ends.
coll::Schedule late_wait_schedule(std::uint32_t chain, std::uint32_t late) {
  coll::MaterializedSchedule m;
  m.call.op = coll::Op::send_recv;
  m.call.ranks = 1;
  m.call.bytes = 2;
  m.call.algorithm = "hand_made";
  m.algorithm = "hand_made";
  m.ranks = 1;
  m.channels = 2;
  m.scratch_bytes = {0};
  std::vector<coll::Step> first{test::waiting_for(test::compute_step(0), 1, 0)};
  for (std::uint32_t i = 1; i < chain; ++i) {
    coll::Step step = test::compute_step(1e6 + i); // distinct durations, distinct ends
    step.deps[0] = i - 1;
    step.dep_count = 1;
    first.push_back(step);
  }
  std::vector<coll::Step> second{test::compute_step(0),
                                 test::waiting_for(test::compute_step(5), 0, late),
                                 test::waiting_for(test::compute_step(7), 0, 3)};
  for (coll::Step& step : second) step.channel = 1;
  m.programs = {{first, second}};
  return coll::Schedule::from_materialized(std::move(m));
}

} // namespace

TEST_CASE("dependency order times a wait on an end forgotten below the rank's floor exactly") {
  const topo::Topology topology = star(2, 1.25e10);
  topo::Router router(topology);
  AnalyticOptions events_only;
  events_only.try_dependency_order = false;
  events_only.record_steps = true;
  for (const std::uint32_t chain : {100u, 6000u}) {
    INFO("chain of " << chain);
    const coll::Schedule schedule = late_wait_schedule(chain, chain - 10);
    AnalyticOptions options;
    options.record_steps = true;
    const std::optional<CollectiveTiming> fast =
        simulate_dependency_order(topology, router, schedule, options);
    REQUIRE(fast.has_value()); // not given up to the event-driven evaluation
    const CollectiveTiming events = simulate_analytic(topology, router, schedule, events_only);
    CHECK(fast->time == events.time);
    REQUIRE(fast->steps_recorded.size() == events.steps_recorded.size());
    // Channel 1's last step starts at the end of channel 0's step `late`: step 3 ended long
    // before, and the forgotten end must not move it.
    auto start_of_last = [](const std::vector<StepRecord>& records) {
      Picoseconds start = -1;
      for (const StepRecord& r : records)
        if (r.channel == 1) start = std::max(start, r.start);
      return start;
    };
    CHECK(start_of_last(fast->steps_recorded) == start_of_last(events.steps_recorded));
  }
}

TEST_CASE("on_step_channels: dependency order hands over only the channels asked for") {
  const topo::Topology topology = star(2, 1.25e10);
  topo::Router router(topology);
  const coll::Schedule schedule = late_wait_schedule(200, 190);
  std::vector<StepRecord> handed;
  AnalyticOptions options;
  options.on_step = [&handed](const StepRecord& record) { handed.push_back(record); };
  options.on_step_channels = 1u << 0;
  const CollectiveTiming timing = simulate_analytic(topology, router, schedule, options);
  REQUIRE(timing.evaluated_in_dependency_order);
  CHECK(handed.size() == 200);
  CHECK(std::all_of(handed.begin(), handed.end(),
                    [](const StepRecord& r) { return r.channel == 0; }));
  // The records of the channel asked for are those of a run that records every channel.
  std::vector<StepRecord> all;
  AnalyticOptions every = options;
  every.on_step = [&all](const StepRecord& record) {
    if (record.channel == 0) all.push_back(record);
  };
  every.on_step_channels = ~std::uint64_t{0};
  CHECK(simulate_analytic(topology, router, schedule, every).time == timing.time);
  REQUIRE(all.size() == handed.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    CHECK(all[i].start == handed[i].start);
    CHECK(all[i].end == handed[i].end);
  }
}
