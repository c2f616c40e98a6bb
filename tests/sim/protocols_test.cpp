// A call's protocol (coll::Protocol, charged by sim/protocol_cost.hpp) in the analytic engine:
// the closed forms of a ring all-reduce with wire bytes, hop latencies by link class and the
// reduction in flight, both evaluations agreeing, and several protocols in one schedule.
#include "protocol_cases.hpp"
#include "uniform_star.hpp"

#include "ddlsim/collectives/algorithm.hpp"
#include "ddlsim/collectives/dump.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/sim/analytic_engine.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

#include <optional>

using namespace ddlsim;
using namespace ddlsim::sim;
using namespace ddlsim::sim::test;

namespace {

AnalyticOptions star_options() {
  AnalyticOptions options;
  options.reduce_bytes_per_second = kReduceBytesPerSecond;
  options.copy_bytes_per_second = 1e300;
  return options;
}

// Both evaluations; they must agree to the picosecond. Returns the time.
double both(const topo::Topology& topology, const coll::Schedule& schedule,
            AnalyticOptions options = star_options()) {
  topo::Router router(topology);
  options.try_dependency_order = false;
  const CollectiveTiming events = simulate_analytic(topology, router, schedule, options);
  options.try_dependency_order = true;
  const std::optional<CollectiveTiming> fast =
      simulate_dependency_order(topology, router, schedule, options);
  REQUIRE(fast);
  CHECK(fast->time == events.time);
  CHECK(fast->bytes_sent == events.bytes_sent);
  CHECK(fast->transfers == events.transfers);
  return static_cast<double>(events.time);
}

double ring(int p, std::uint64_t bytes, const coll::Protocol& protocol,
            const topo::Topology& topology) {
  coll::CollectiveCall call = make_call(coll::Op::all_reduce, "ring", p, bytes);
  call.protocol = protocol;
  return both(topology, coll::Schedule::make(call));
}

} // namespace

TEST_CASE("protocols: LL doubles and LL128 adds 128/120 to a ring all-reduce's bandwidth term") {
  for (int p : {2, 4, 8}) {
    // 3840 B per block: a multiple of 120, so LL128's wire bytes are exact.
    const double n = 3840.0 * p;
    const auto bytes = static_cast<std::uint64_t>(n);
    INFO("p = " << p);
    const topo::Topology topology = star(p);
    const double gamma_term = n * (p - 1) / p * kGamma;
    const double beta_term = 2 * n * (p - 1) / p * kBeta;
    check_equal(ring(p, bytes, {}, topology), 2 * (p - 1) * kAlpha + beta_term + gamma_term);
    check_equal(ring(p, bytes, test::ll(), topology),
                2 * (p - 1) * kAlpha + beta_term / 0.5 + gamma_term);
    check_equal(ring(p, bytes, test::ll128(), topology),
                2 * (p - 1) * kAlpha + beta_term * 128 / 120 + gamma_term);
  }
}

TEST_CASE("protocols: wire bytes round up per transfer") {
  coll::Protocol protocol = test::ll128();
  // One transfer of 4 bytes: ceil(4 * 128 / 120) = 5 wire bytes.
  const coll::Schedule schedule = coll::Schedule::make([&] {
    coll::CollectiveCall call = test::point_to_point(4);
    call.protocol = protocol;
    return call;
  }());
  check_equal(both(star(2), schedule), kAlpha + 5 * kBeta);
}

TEST_CASE("protocols: a transfer's latency is max(hop, path), the hop by where its path goes") {
  // NCCL's per-hop latencies (tuning.cc hwLatencies) are the whole time of a step over that
  // hardware, the wire included: a transfer takes max(hop, path latency), not their sum. The
  // star's path latency is kAlpha = 1 us.
  coll::Protocol protocol;
  protocol.intra_hop_ps = 700'000;   // below the path: hidden
  protocol.inter_hop_ps = 3'000'000; // above it: replaces it
  for (int p : {2, 4, 8}) {
    const double n = 4096.0 * p;
    const auto bytes = static_cast<std::uint64_t>(n);
    INFO("p = " << p);
    const double rest = 2 * n * (p - 1) / p * kBeta + n * (p - 1) / p * kGamma;
    // One GPU per node: every transfer crosses a NIC.
    check_equal(ring(p, bytes, protocol, star(p)), 2 * (p - 1) * 3'000'000.0 + rest);
    // One node, GPUs on an NVSwitch: every transfer stays inside.
    check_equal(ring(p, bytes, protocol, test::one_node(p)), 2 * (p - 1) * kAlpha + rest);
    coll::Protocol slow_intra = protocol;
    slow_intra.intra_hop_ps = 1'600'000;
    check_equal(ring(p, bytes, slow_intra, test::one_node(p)), 2 * (p - 1) * 1'600'000.0 + rest);
  }
  // Two nodes of eight GPUs: each of the ring's 30 steps has NVLink and network transfers. Every
  // chain of dependent transfers has 30 of them, none slower than the inter-node hop.
  const topo::Topology two = test::two_dgx();
  const double with = ring(16, 16 * 4096, protocol, two);
  const double without = ring(16, 16 * 4096, {}, two);
  CHECK(with > without);
  CHECK(with <= without + 30 * 3'000'000.0);
}

TEST_CASE("protocols: a 2-rank LL all-reduce takes 2 hops of max(hop, path)") {
  // The closed form of the new rule on the smallest ring: 2 steps, each one hop; LL doubles
  // the wire bytes of the n/2 bytes each step moves.
  const double n = 64;
  for (const std::int64_t hop : {400'000, 1'000'000, 2'500'000}) {
    coll::Protocol protocol = test::ll();
    protocol.intra_hop_ps = hop;
    INFO("hop " << hop << " ps");
    const double per_hop = std::max(static_cast<double>(hop), kAlpha);
    check_equal(ring(2, 64, protocol, test::one_node(2)),
                2 * per_hop + 2 * (n / 2) / 0.5 * kBeta + n / 2 * kGamma);
  }
}

TEST_CASE("protocols: more pipeline chunks do not multiply the hop latency") {
  // NCCL keeps NCCL_STEPS = 8 slots in flight per connection (src/include/device.h), so the
  // chunks of one step overlap their hops: a ring of C chunks pays each hop once per step on its
  // critical path, plus C times the (small) transfer of one chunk, not C hops.
  coll::Protocol protocol = test::ll();
  protocol.intra_hop_ps = 3'000'000;
  const int p = 8;
  const std::uint64_t bytes = 8 * 1024;
  auto with_chunks = [&](int chunks) {
    coll::CollectiveCall call = make_call(coll::Op::all_reduce, "nccl_ring", p, bytes);
    call.params.chunks = chunks;
    call.protocol = protocol;
    return both(test::one_node(p), coll::Schedule::make(call));
  };
  const double one = with_chunks(1), eight = with_chunks(8);
  CHECK(one >= 2 * (p - 1) * 3'000'000.0);
  CHECK(eight < one + 3'000'000.0);
}

TEST_CASE("protocols: reduction in flight hides the reduction behind the transfer") {
  coll::Protocol in_flight;
  in_flight.reduce_in_flight = true;
  for (int p : {2, 4, 8}) {
    const double n = 4096.0 * p;
    const auto bytes = static_cast<std::uint64_t>(n);
    INFO("p = " << p);
    // The reduction (gamma 50 ps/B) is faster than the link (beta 100 ps/B): fully hidden.
    check_equal(ring(p, bytes, in_flight, star(p)),
                2 * (p - 1) * kAlpha + 2 * n * (p - 1) / p * kBeta);
  }
  // A reduction slower than the link (gamma 4 beta) ends 4 beta - beta after the arrival per
  // block instead of 4 beta: never slower, and faster by one block's transfer per reduce step.
  const int p = 4;
  const double n = 4096.0 * p;
  const coll::CollectiveCall base = make_call(coll::Op::all_reduce, "ring", p, 4 * 4096);
  AnalyticOptions slow = star_options();
  slow.reduce_bytes_per_second = kLinkBytesPerSecond / 4;
  coll::CollectiveCall call = base;
  const double after = both(star(p), coll::Schedule::make(call), slow);
  call.protocol = in_flight;
  const double overlapped = both(star(p), coll::Schedule::make(call), slow);
  CHECK(overlapped < after);
  check_equal(after - overlapped, (p - 1) * n / p * kBeta);
}

TEST_CASE("protocols: the reduction in flight starts with the bytes, not with the receive") {
  // The receive waits 10 us for its send; then 1 us of latency, 4096 B at beta and a reduction
  // at 4 beta per byte, overlapped or after.
  AnalyticOptions slow = star_options();
  slow.reduce_bytes_per_second = kLinkBytesPerSecond / 4;
  coll::Protocol in_flight;
  in_flight.reduce_in_flight = true;
  check_equal(both(star(2), test::late_send_reduce({}, 10'000'000), slow),
              10e6 + kAlpha + 4096 * kBeta + 4096 * 4 * kBeta);
  check_equal(both(star(2), test::late_send_reduce(in_flight, 10'000'000), slow),
              10e6 + kAlpha + 4096 * 4 * kBeta);
}

TEST_CASE("protocols: both analytic evaluations agree with protocols, shared links included") {
  const topo::Topology topology = test::two_dgx();
  AnalyticOptions options; // the A100's own rates
  options.per_step_overhead = 1'000'000;
  for (const coll::Protocol& protocol : test::all_protocols())
    for (const coll::Algorithm* algorithm : coll::algorithms_for(coll::Op::all_reduce))
      for (std::uint64_t bytes : {std::uint64_t{4096}, std::uint64_t{3u << 20} + 12})
        for (int channels : {1, 2}) {
          // In-switch reduction needs an NVLS switch, which the A100's NVSwitch lacks.
          if (algorithm->name().starts_with("nvls")) continue;
          coll::CollectiveCall call =
              make_call(coll::Op::all_reduce, std::string(algorithm->name()), 16, bytes);
          call.params.channels = channels;
          call.protocol = protocol;
          for (int r = 0; r < 16; ++r) call.node_of_rank.push_back(r / 8);
          std::optional<coll::Schedule> schedule;
          try {
            schedule = coll::Schedule::make(call);
          } catch (const std::exception&) {
            continue; // the generator needs parameters this sweep does not give
          }
          INFO(algorithm->name() << " " << protocol.name << " " << bytes << " B, " << channels
                                 << " channels");
          both(topology, *schedule, options);
        }
}

TEST_CASE("protocols: the steps of one schedule may name different protocols") {
  // A two-channel ring whose channel 1 runs LL: what a training iteration does with calls of
  // different protocols, here in one loaded schedule.
  coll::CollectiveCall call = make_call(coll::Op::all_reduce, "ring", 4, 4 * 4096);
  call.params.channels = 2;
  coll::MaterializedSchedule programs = coll::materialize(coll::Schedule::make(call));
  programs.protocols = {coll::Protocol{}, test::ll()};
  for (auto& rank : programs.programs)
    for (coll::Step& step : rank[1]) step.protocol = 1;
  // It dumps and loads back equal.
  const Json text = parse_json_text(coll::to_json(programs).dump(1), "dump");
  CHECK(coll::schedule_from_json(JsonValue(text, "")) == programs);
  const coll::Schedule mixed = coll::Schedule::from_materialized(programs);
  REQUIRE(mixed.protocols().size() == 2);
  const double simple = both(star(4), coll::Schedule::make(call));
  call.protocol = test::ll();
  const double ll = both(star(4), coll::Schedule::make(call));
  const double both_kinds = both(star(4), mixed);
  CHECK(simple < both_kinds);
  CHECK(both_kinds <= ll);
}

TEST_CASE("protocols: impossible values are input errors") {
  coll::CollectiveCall call = make_call(coll::Op::all_reduce, "ring", 4, 4096);
  call.protocol.payload_efficiency = 1.5;
  CHECK_THROWS_AS(coll::Schedule::make(call), InputError);
  call.protocol.payload_efficiency = 0;
  CHECK_THROWS_AS(coll::Schedule::make(call), InputError);
  call.protocol = {};
  call.protocol.inter_hop_ps = -1;
  CHECK_THROWS_AS(coll::Schedule::make(call), InputError);
}
