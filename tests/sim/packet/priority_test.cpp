// Priority classes: strict priority and DWRR scheduling, priority drop, loss-tolerant messages.
#include "packet_harness.hpp"

#include <catch2/catch.hpp>

namespace ddlsim::sim::packet::test {
namespace {

// Rank 1 sends on channel 0 (class 0, high), ranks 2..4 on channel 1 (class 1), all to rank 0.
std::vector<Flow> mixed_incast(std::uint64_t bytes) {
  return {{1, 0, bytes, 0}, {2, 0, bytes, 1}, {3, 0, bytes, 1}, {4, 0, bytes, 1}};
}

PacketOptions two_classes(DropPolicy policy) {
  PacketOptions options = star_options();
  options.record_steps = true;
  options.spec.switch_spec.priorities = 2;
  options.spec.switch_spec.buffer_bytes = 64 << 10;
  options.spec.switch_spec.drop_policy = policy;
  options.spec.transport.priority_rule = TransportSpec::PriorityRule::by_channel;
  return options;
}

TEST_CASE("priority drop keeps high-priority packets under overload and tail drop "
          "does not") {
  // The senders run in lock step, so which one finds the room a departure makes is a matter of
  // phase: rank 2's packets arrive with the departures, ranks 3 and 4 a quarter of a packet time
  // later, rank 1 (high priority) half a packet time later, when the room is taken again.
  const topo::Topology topology = star_with(5, {},
                                            {kLinkLatency, kLinkLatency + 208'000, kLinkLatency,
                                             kLinkLatency + 104'000, kLinkLatency + 104'000});
  const std::uint64_t bytes = 1 << 20;
  const PacketTiming priority =
      run_traffic(topology, 5, 2, mixed_incast(bytes), two_classes(DropPolicy::priority));
  REQUIRE(priority.complete);
  CHECK(priority.drops_by_priority[0] == 0);
  CHECK(priority.drops_by_priority[1] > 0);
  // Served first and never dropped, the high-priority message takes about its uncongested time.
  const Picoseconds alone = run_traffic(topology, 5, 1, {{1, 0, bytes, 0}}, star_options()).time;
  const Picoseconds high = receive_end(priority, 0, 1);
  CHECK(static_cast<double>(high) < 1.05 * static_cast<double>(alone));
  CHECK(high < receive_end(priority, 0, 2));

  const PacketTiming tail =
      run_traffic(topology, 5, 2, mixed_incast(bytes), two_classes(DropPolicy::tail));
  REQUIRE(tail.complete);
  CHECK(tail.drops_by_priority[0] > 0);
  CHECK(receive_end(tail, 0, 1) > high);
}

TEST_CASE("DWRR shares a port by weight and strict priority serves class 0 first") {
  const topo::Topology topology = star(3);
  const std::uint64_t bytes = 1 << 20;
  const std::vector<Flow> flows = {{1, 0, bytes, 0}, {2, 0, bytes, 1}};
  PacketOptions options = two_classes(DropPolicy::tail);
  options.spec.switch_spec.buffer_bytes = 16 << 20;
  options.spec.switch_spec.scheduler = Scheduler::dwrr;
  const double per_byte = 100; // ps on a star link
  const double both = 2.0 * bytes * per_byte;

  options.spec.switch_spec.dwrr_weights = {3, 1};
  const PacketTiming weighted = run_traffic(topology, 3, 2, flows, options);
  REQUIRE(weighted.drops == 0);
  // Class 0 gets 3/4 of the port until it is done: it needs 4/3 of its own serialization time.
  const double first = static_cast<double>(receive_end(weighted, 0, 1));
  CHECK(first == Approx(4.0 / 3 * bytes * per_byte).epsilon(0.03));
  CHECK(static_cast<double>(receive_end(weighted, 0, 2)) == Approx(both).epsilon(0.03));

  options.spec.switch_spec.dwrr_weights = {1, 1};
  const PacketTiming equal = run_traffic(topology, 3, 2, flows, options);
  CHECK(static_cast<double>(receive_end(equal, 0, 1)) == Approx(both).epsilon(0.03));
  CHECK(static_cast<double>(receive_end(equal, 0, 2)) == Approx(both).epsilon(0.03));

  options.spec.switch_spec.scheduler = Scheduler::strict;
  options.spec.switch_spec.dwrr_weights.clear();
  const PacketTiming strict = run_traffic(topology, 3, 2, flows, options);
  CHECK(static_cast<double>(receive_end(strict, 0, 1)) ==
        Approx(1.0 * bytes * per_byte).epsilon(0.03));
}

// Rank 1 sends at twice the rate of rank 0's port, whose buffer holds most, not all, of the
// excess: about 5% of the packets are dropped. Spraying (one path here) sends no NACKs, so a
// reliable receive gets its dropped packets back only after the retransmission timeout.
PacketOptions overloaded_port(std::uint64_t buffer_bytes) {
  PacketOptions options = star_options();
  options.spec.switch_spec.buffer_bytes = buffer_bytes;
  options.spec.switch_spec.drop_policy = DropPolicy::loss_tolerant;
  options.spec.load_balancing = LoadBalancing::spray_round_robin;
  return options;
}

TEST_CASE("a loss-tolerant receive gives up on dropped packets at its timeout, not at the "
          "sender's retransmission timeout, and loses no more than the bound") {
  const topo::Topology topology = star_with(2, {kLinkBytesPerSecond, 2 * kLinkBytesPerSecond}, {});
  const std::uint64_t bytes = 1 << 20;
  const std::vector<Flow> flows = {{1, 0, bytes, 0}};
  const PacketOptions reliable = overloaded_port(460 << 10);
  const PacketTiming full = run_traffic(topology, 2, 1, flows, reliable);
  REQUIRE(full.complete);
  REQUIRE(full.drops > 0);
  CHECK(full.retransmissions == full.drops);
  CHECK(full.bytes_lost_accepted == 0);
  CHECK(full.time > reliable.spec.transport.rto);

  PacketOptions tolerant = reliable;
  tolerant.spec.transport.loss_bound = 0.1;
  tolerant.spec.transport.loss_timeout = 20 * kPsPerUs;
  const PacketTiming lossy = run_traffic(topology, 2, 1, flows, tolerant);
  REQUIRE(lossy.complete);
  CHECK(lossy.retransmissions == 0);
  // Every missing byte was dropped (one path: nothing is still on its way when the timer fires).
  CHECK(lossy.bytes_lost_accepted == lossy.bytes_dropped);
  CHECK(lossy.bytes_late_discarded == 0);
  CHECK(lossy.bytes_lost_accepted > 0);
  CHECK(lossy.max_lost_fraction_ppm <= 100'000);
  // It completes one give-up timeout after its last packet arrived: the bytes that got through
  // cross the port at its rate, then the timer runs, well before the sender's RTO.
  CHECK(lossy.time < full.time);
  CHECK(lossy.time < reliable.spec.transport.rto);
  const Picoseconds through = static_cast<Picoseconds>(
      static_cast<double>(bytes - lossy.bytes_lost_accepted) * 1e12 / kLinkBytesPerSecond);
  CHECK(lossy.time >= through + tolerant.spec.transport.loss_timeout);

  // A later give-up timer finishes later by as much.
  tolerant.spec.transport.loss_timeout = 40 * kPsPerUs;
  const PacketTiming patient = run_traffic(topology, 2, 1, flows, tolerant);
  CHECK(patient.time - lossy.time == 20 * kPsPerUs);
  CHECK(patient.bytes_lost_accepted == lossy.bytes_lost_accepted);

  // A tighter bound than the loss forces some retransmission and finishes later.
  tolerant.spec.transport.loss_bound = 0.01;
  tolerant.spec.transport.loss_timeout = 20 * kPsPerUs;
  const PacketTiming tight = run_traffic(topology, 2, 1, flows, tolerant);
  REQUIRE(tight.complete);
  CHECK(tight.max_lost_fraction_ppm <= 10'000);
  CHECK(tight.bytes_lost_accepted <= tight.bytes_dropped);
  CHECK(tight.retransmissions > 0);
  CHECK(tight.time > lossy.time);
}

TEST_CASE("a loss-tolerant receive that loses nothing loses no bytes and takes the lossless "
          "time exactly") {
  const topo::Topology topology = star_with(2, {kLinkBytesPerSecond, 2 * kLinkBytesPerSecond}, {});
  const std::vector<Flow> flows = {{1, 0, 1 << 20, 0}};
  const PacketOptions roomy = overloaded_port(2 << 20); // holds the whole excess
  const PacketTiming lossless = run_traffic(topology, 2, 1, flows, roomy);
  REQUIRE(lossless.complete);
  REQUIRE(lossless.drops == 0);
  for (const double bound : {0.0, 0.01, 0.3}) {
    PacketOptions tolerant = roomy;
    tolerant.spec.transport.loss_bound = bound;
    const PacketTiming t = run_traffic(topology, 2, 1, flows, tolerant);
    REQUIRE(t.complete);
    CHECK(t.time == lossless.time);
    CHECK(t.bytes_lost_accepted == 0);
    CHECK(t.bytes_late_discarded == 0);
    CHECK(t.max_lost_fraction_ppm == 0);
  }
  // A bound of 0 is the reliable transport, drops included.
  const PacketOptions small = overloaded_port(460 << 10);
  PacketOptions zero = small;
  zero.spec.transport.loss_bound = 0;
  const PacketTiming a = run_traffic(topology, 2, 1, flows, small);
  const PacketTiming b = run_traffic(topology, 2, 1, flows, zero);
  CHECK(a.time == b.time);
  CHECK(a.retransmissions == b.retransmissions);
}

TEST_CASE("with spraying over many paths a loss-tolerant all-to-all accepts only dropped bytes "
          "within the bound per message") {
  // 16 hosts on a k=4 fat tree, each receiving from two others in other pods: every host's
  // last link is offered twice its rate, its 64 KiB buffer drops, and the sprayed packets come
  // by different core paths (reordered), so some are still on their way when others arrive.
  const topo::Topology topology = fat_tree(4, 16, 100);
  std::vector<Flow> flows;
  for (int h = 0; h < 16; ++h) {
    flows.push_back({h, (h + 4) % 16, 1 << 20, 0});
    flows.push_back({h, (h + 8) % 16, 1 << 20, 0});
  }
  PacketOptions options;
  options.spec.switch_spec.buffer_bytes = 64 << 10;
  options.spec.switch_spec.drop_policy = DropPolicy::loss_tolerant;
  options.spec.load_balancing = LoadBalancing::spray_random;
  const PacketTiming reliable = run_traffic(topology, 16, 1, flows, options);
  REQUIRE(reliable.complete);
  REQUIRE(reliable.drops > 0);
  CHECK(reliable.bytes_lost_accepted + reliable.bytes_late_discarded == 0);

  for (const double bound : {0.01, 0.05}) {
    INFO("loss bound " << bound);
    options.spec.transport.loss_bound = bound;
    const PacketTiming t = run_traffic(topology, 16, 1, flows, options);
    REQUIRE(t.complete);
    REQUIRE(t.drops > 0);
    CHECK(t.bytes_lost_accepted > 0);
    CHECK(t.bytes_lost_accepted <= t.bytes_dropped);
    CHECK(static_cast<double>(t.max_lost_fraction_ppm) <= bound * 1e6);
  }
}

} // namespace
} // namespace ddlsim::sim::packet::test

namespace ddlsim::sim::packet::test {
namespace {

TEST_CASE("priority by_offset gives the front of the buffer the higher class") {
  // Rank 0 sends the two halves of its input to rank 1 on two channels, at twice the rate of rank
  // 1's port, so that they queue there: the front half is class 0.
  const topo::Topology topology = star_with(2, {2 * kLinkBytesPerSecond}, {});
  coll::MaterializedSchedule m;
  m.call = point_to_point(1 << 20);
  m.call.algorithm = "hand_made";
  m.algorithm = "hand_made";
  m.ranks = 2;
  m.channels = 2;
  m.scratch_bytes = {0, 0};
  m.programs.assign(2, std::vector<std::vector<coll::Step>>(2));
  for (int c = 0; c < 2; ++c) {
    const std::uint64_t half = 1 << 19, offset = c == 0 ? half : 0; // channel 0: back half
    coll::Step send;
    send.kind = coll::StepKind::send;
    send.channel = static_cast<std::uint16_t>(c);
    send.peer = 1;
    send.src = {coll::Buffer::input, offset, half};
    send.bytes = half;
    m.programs[0][static_cast<std::size_t>(c)].push_back(send);
    coll::Step recv = send;
    recv.kind = coll::StepKind::recv;
    recv.peer = 0;
    recv.src = {};
    recv.dst = {coll::Buffer::output, offset, half};
    m.programs[1][static_cast<std::size_t>(c)].push_back(recv);
  }
  const coll::Schedule schedule = coll::Schedule::from_materialized(std::move(m));
  PacketOptions options = star_options();
  options.record_steps = true;
  options.spec.switch_spec.priorities = 2;
  options.spec.transport.priority_rule = TransportSpec::PriorityRule::by_offset;
  topo::Router router(topology);
  const PacketTiming t = simulate_packet(topology, router, schedule, options);
  Picoseconds front = 0, back = 0;
  for (const StepRecord& r : t.steps_recorded)
    if (r.rank == 1) (r.channel == 1 ? front : back) = r.end;
  // The sender interleaves both messages and both queue at the switch; class 0 (the front half,
  // channel 1) leaves first and finishes first.
  CHECK(front > 0);
  CHECK(front < back);
}

} // namespace
} // namespace ddlsim::sim::packet::test

namespace ddlsim::sim::packet::test {
namespace {

TEST_CASE("priority by gradient magnitude: a message's top packets go first, are never "
          "evicted, and a loss-tolerant receive waits for every one of them") {
  // The overloaded port of the loss-tolerance test: about 5% of 256 packets are dropped.
  const topo::Topology topology = star_with(2, {kLinkBytesPerSecond, 2 * kLinkBytesPerSecond}, {});
  const std::uint64_t bytes = 1 << 20;
  const std::vector<Flow> flows = {{1, 0, bytes, 0}};
  PacketOptions options = overloaded_port(460 << 10);
  options.spec.switch_spec.priorities = 2;
  options.spec.transport.priority_rule = TransportSpec::PriorityRule::by_magnitude;
  options.spec.transport.magnitude_top_fraction = 0.2;
  options.spec.transport.loss_bound = 0.1;
  options.spec.transport.loss_timeout = 20 * kPsPerUs;
  const PacketTiming evict = run_traffic(topology, 2, 1, flows, options);
  REQUIRE(evict.complete);
  // About a fifth of the packets are class 0 (binomial: 51 of 256, three sigma 19).
  const auto top = static_cast<double>(evict.data_packets_by_priority[0]);
  CHECK(top == Approx(0.2 * 256).margin(19));
  CHECK(evict.data_packets_by_priority[0] + evict.data_packets_by_priority[1] == 256);
  // A full port evicts droppable (low) packets for top ones: no top packet is lost, the loss is
  // accepted, and the receive ends one give-up timeout after its last packet, before the RTO.
  CHECK(evict.drops_by_priority[0] == 0);
  CHECK(evict.drops_by_priority[1] > 0);
  CHECK(evict.retransmissions == 0);
  CHECK(evict.bytes_lost_accepted == evict.bytes_dropped);
  CHECK(evict.time < options.spec.transport.rto);

  // With tail drop top packets are lost too; the receive waits for their resends (by the
  // sender's timeout: spraying sends no NACKs), though the bound would cover the bytes.
  options.spec.switch_spec.drop_policy = DropPolicy::tail;
  const PacketTiming tail = run_traffic(topology, 2, 1, flows, options);
  REQUIRE(tail.complete);
  REQUIRE(tail.drops_by_priority[0] > 0);
  CHECK(tail.retransmissions >= tail.drops_by_priority[0]);
  CHECK(tail.time > options.spec.transport.rto);
  CHECK(tail.bytes_lost_accepted < tail.bytes_dropped);
}

} // namespace
} // namespace ddlsim::sim::packet::test
