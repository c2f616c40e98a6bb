// The analytic engine's lone transfers: a transfer alone on every link of its path gets its
// finish at once (FlowNetwork::reserve); one that a later transfer overlaps is handed to the flow
// network as if it had been there all along (FlowNetwork::adopt). Times are checked against
// max-min rates worked out by hand.
#include "step_builders.hpp"
#include "uniform_star.hpp"

#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/sim/flow_network.hpp"
#include "line_topology.hpp"

#include <catch2/catch.hpp>

#include <limits>

using namespace ddlsim;
using namespace ddlsim::coll;
using namespace ddlsim::sim;
using namespace ddlsim::sim::test;

namespace {

constexpr Picoseconds kNever = std::numeric_limits<Picoseconds>::max();
constexpr Picoseconds kMicrosecond = 1'000'000;

// Runs the network from `now` until every flow it holds finishes; returns finish time per tag.
std::map<std::uint64_t, Picoseconds> finish_times(FlowNetwork& network, Picoseconds now) {
  std::map<std::uint64_t, Picoseconds> times;
  std::vector<std::uint64_t> finished;
  network.update_rates(now);
  while (network.active_flows() > 0) {
    now = network.next_completion();
    finished.clear();
    network.collect_finished(now, finished);
    for (auto tag : finished) times[tag] = now;
    network.update_rates(now);
  }
  return times;
}

// Rank 0 sends 1 MB to `first_to`; rank 1 computes `delay` ps, then sends `bytes` to rank 2;
// rank 2 (and rank 3) receive whatever is sent to them.
Schedule two_senders(int first_to, Picoseconds delay, std::uint64_t bytes) {
  MaterializedSchedule m;
  m.call.op = Op::all_to_all; // every rank has an input and an output buffer of call.bytes
  m.call.ranks = 4;
  m.call.bytes = 1'000'000;
  m.call.algorithm = "hand_made";
  m.algorithm = "hand_made";
  m.ranks = 4;
  m.channels = 1;
  m.scratch_bytes = {0, 0, 0, 0};
  const Step compute = test_support::compute_step(delay);
  Step second = test_support::transfer_step(StepKind::send, 2, bytes);
  second.dep_count = 1; // waits for the compute (step 0)
  std::vector<Step> at2{test_support::transfer_step(StepKind::recv, 1, bytes)};
  std::vector<Step> at3;
  (first_to == 2 ? at2 : at3)
      .insert((first_to == 2 ? at2 : at3).begin(),
              test_support::transfer_step(StepKind::recv, 0, 1'000'000));
  m.programs = {{{test_support::transfer_step(StepKind::send, first_to, 1'000'000)}},
                {{compute, second}},
                {at2},
                {at3}};
  return Schedule::from_materialized(std::move(m));
}

// When each receive completed, by (receiving rank, sending rank), on star(4).
std::map<std::pair<int, int>, Picoseconds> receive_ends(const Schedule& schedule) {
  const topo::Topology topology = star(4);
  topo::Router router(topology);
  AnalyticOptions options;
  options.record_steps = true;
  const CollectiveTiming timing = simulate_analytic(topology, router, schedule, options);
  REQUIRE(timing.complete);
  std::map<std::pair<int, int>, Picoseconds> ends;
  for (const StepRecord& step : timing.steps_recorded)
    if (step.kind == StepKind::recv) {
      CHECK(ends.count({step.rank, step.peer}) == 0); // each completes once
      ends[{step.rank, step.peer}] = step.end;
    }
  CHECK(timing.steps_recorded.size() == timing.steps);
  return ends;
}

} // namespace

TEST_CASE("a reserved flow that a later one overlaps finishes at its max-min time") {
  // Link 0 (2 GB/s) and link 2 (1 GB/s). a: 3 MB over both from 0, reserved alone at 1 GB/s
  // until 3 ms. b: 1 MB on link 2 from 1 ms overlaps it: a is adopted with 2 MB left, both move
  // at 0.5 GB/s until b ends at 3 ms, then a's last 1 MB alone ends at 4 ms.
  const topo::Topology t = line({2e9, 1e9});
  FlowNetwork network(t);
  const std::vector<topo::LinkId> a{0, 2}, b{2};
  std::vector<std::uint64_t> overlapped;
  CHECK(network.reserve(a, 3e6, 1, 0, overlapped) == 3'000'000'000);
  CHECK(overlapped.empty());
  CHECK(network.active_flows() == 0); // reserved flows are not in the network
  CHECK(network.reserve(b, 1e6, 2, 1'000'000'000, overlapped) == kNever);
  CHECK(overlapped == std::vector<std::uint64_t>{1});
  network.adopt(a, 3e6, 1, 0);
  network.start(b, 1e6, 2, 1'000'000'000);
  const auto times = finish_times(network, 1'000'000'000);
  CHECK(times.at(2) == 3'000'000'000);
  CHECK(times.at(1) == 4'000'000'000);
  CHECK(network.peak_flows_per_link() == 2);
  CHECK(network.bytes_per_link()[0] == 3e6);
  CHECK(network.bytes_per_link()[2] == 4e6);
}

TEST_CASE("a reservation ends at its finish and blocks nothing after") {
  const topo::Topology t = line({1e9});
  FlowNetwork network(t);
  const std::vector<topo::LinkId> path{0};
  std::vector<std::uint64_t> overlapped;
  CHECK(network.reserve(path, 1e6, 1, 0, overlapped) == 1'000'000'000);
  // Starting exactly at the first one's finish, the second is alone too.
  CHECK(network.reserve(path, 2e6, 2, 1'000'000'000, overlapped) == 3'000'000'000);
  CHECK(overlapped.empty());
  CHECK(network.peak_flows_per_link() == 1);
  // A link with a flow in the network is not free either, and a zero-byte flow is never reserved.
  network.start(path, 1e6, 3, 3'000'000'000);
  CHECK(network.reserve(path, 1e6, 4, 3'000'000'000, overlapped) == kNever);
  CHECK(overlapped.empty());
  CHECK(network.reserve({1}, 0, 5, 0, overlapped) == kNever);
}

TEST_CASE("two flows reserved and overlapped at the same instant share from the start") {
  const topo::Topology t = line({2e9, 1e9});
  FlowNetwork network(t);
  const std::vector<topo::LinkId> c{0, 2}, d{2};
  std::vector<std::uint64_t> overlapped;
  CHECK(network.reserve(c, 1e6, 1, 0, overlapped) == 1'000'000'000);
  CHECK(network.reserve(d, 1e6, 2, 0, overlapped) == kNever);
  network.adopt(c, 1e6, 1, 0);
  network.start(d, 1e6, 2, 0);
  const auto times = finish_times(network, 0);
  CHECK(times.at(1) == 2'000'000'000); // 1 MB each at 0.5 GB/s
  CHECK(times.at(2) == 2'000'000'000);
}

TEST_CASE("a flow that would end the instant it starts is not reserved") {
  // 4 bytes at 1e13 B/s: 0.4 ps, rounded to 0. Alone it ends at once; two that start together
  // share the link (0.8 ps each, 1 ps rounded), which a reservation ending at once would miss.
  const topo::Topology t = line({1e13});
  FlowNetwork network(t);
  const std::vector<topo::LinkId> path{0};
  std::vector<std::uint64_t> overlapped;
  CHECK(network.reserve(path, 4, 1, 10, overlapped) == kNever);
  CHECK(overlapped.empty());
  network.start(path, 4, 1, 10);
  CHECK(network.reserve(path, 4, 2, 10, overlapped) == kNever);
  network.start(path, 4, 2, 10);
  const auto times = finish_times(network, 10);
  CHECK(times.at(1) == 11);
  CHECK(times.at(2) == 11);
  CHECK(network.peak_flows_per_link() == 2);
}

TEST_CASE("analytic engine: a lone transfer overlapped later takes its max-min time") {
  // star(4): 10 GB/s links, 0.5 us each, two links per path. Rank 0's 1 MB to rank 2 moves its
  // bytes from 1 us, alone, so it would end at 101 us. Rank 1 computes 1 us, then sends 100 kB
  // to rank 2, whose bytes start at 2 us on the same switch-to-rank-2 link: by then the first
  // has 990 kB left; both move at 5 GB/s, the second ends at 2 + 20 = 22 us, and the first's
  // last 890 kB alone take 89 us more: 111 us.
  const auto ends = receive_ends(two_senders(2, kMicrosecond, 100'000));
  CHECK(ends.at({2, 0}) == 111 * kMicrosecond);
  CHECK(ends.at({2, 1}) == 22 * kMicrosecond);
}

TEST_CASE("analytic engine: transfers on disjoint links stay alone") {
  // The same, but rank 0 sends to rank 3: nothing is shared, each moves at 10 GB/s.
  const auto ends = receive_ends(two_senders(3, kMicrosecond, 100'000));
  CHECK(ends.at({3, 0}) == 101 * kMicrosecond);
  CHECK(ends.at({2, 1}) == 12 * kMicrosecond);
}

TEST_CASE("analytic engine: transfers overlapping from their first byte share at once") {
  // Both start moving at 1 us: 1 MB and 100 kB at 5 GB/s each; the second ends at 21 us, the
  // first then has 900 kB left alone: 21 + 90 = 111 us.
  const auto ends = receive_ends(two_senders(2, 0, 100'000));
  CHECK(ends.at({2, 0}) == 111 * kMicrosecond);
  CHECK(ends.at({2, 1}) == 21 * kMicrosecond);
}
