// The packet-level engine: times a Schedule on a Topology by moving every packet through the
// NICs, links and switch queues of the cluster.
//
// It runs the same Schedule programs as the analytic engine, under the execution rules of
// collectives/step.hpp: a send and its receive start moving data once both have started; the
// message is cut into MTU-sized packets that the sending GPU paces out at the line rate of its
// first link, round-robin among its messages; every directed link is an output queue at its
// source vertex (store-and-forward: serialization at the link's bandwidth, then its latency);
// switch ports have finite buffers, priority classes, ECN marking and a drop policy, or PFC;
// ports inside a server are lossless. The receive completes when all its bytes arrived (or,
// for loss-tolerant messages, when its give-up timer fires with at most loss_bound of them
// missing), plus the reduction for a recv_reduce.
// What it models and what it does not is listed in docs/engines.md ("Packet engine").
#pragma once

#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/sim/analytic_engine.hpp"
#include "ddlsim/sim/packet/packet_spec.hpp"
#include "ddlsim/topologies/router.hpp"
#include "ddlsim/topologies/topology.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

namespace ddlsim::sim::packet {

struct PacketOptions {
  PacketEngineSpec spec;
  Picoseconds per_step_overhead = 0;  // charged once per transfer and once per local step
  double reduce_bytes_per_second = 0; // 0 = from each GPU's model (gpu_rates.hpp)
  double copy_bytes_per_second = 0;   // 0 = from each GPU's model
  std::uint64_t seed = 1;             // ECMP hash, spraying
  bool record_steps = false;          // fill PacketTiming::steps_recorded
  bool record_queues = false;         // fill PacketTiming::queue_samples (switch ports only)
  // Compute slowed by the communication kernels beside it, as the analytic engine does it
  // (AnalyticOptions::compute_slowdown, ddlsim/sim/compute_slowdown.hpp).
  bool compute_slowdown = false;
  std::uint16_t compute_channel = 0;
  // Called every kProgressInterval events with the simulated time and the events handled;
  // returning false stops the run early (PacketTiming::complete is then false).
  std::function<bool(Picoseconds simulated, std::uint64_t events)> progress;
};

// Per directed link that carried anything.
struct LinkStats {
  topo::LinkId link = 0;
  std::uint64_t bytes = 0;            // bytes serialized (headers and control packets included)
  double utilisation = 0;             // bytes / (bandwidth x run time)
  std::uint64_t peak_queue_bytes = 0; // waiting bytes (not counting the packet on the wire)
  std::uint64_t drops = 0;            // packets dropped or evicted here
};

// Queue depth of one switch port at one time (for Chrome trace counters).
struct QueueSample {
  topo::LinkId link = 0;
  Picoseconds time = 0;
  std::uint64_t bytes = 0;
};

struct PacketTiming {
  bool complete = true;
  Picoseconds time = 0; // when the last step of any rank completed
  std::uint64_t steps = 0;
  std::uint64_t transfers = 0;
  std::uint64_t events = 0;
  // Of the events, the ports' tx_done events (a port finished serializing a packet and had more
  // waiting), and those of them that started no packet (nothing could go: a lossless port
  // blocked on the next one, a window closed); a port has at most one tx_done pending.
  std::uint64_t tx_done_events = 0;
  std::uint64_t idle_tx_done_events = 0;
  std::uint64_t data_packets = 0;                                       // first transmissions
  std::array<std::uint64_t, kMaxPriorities> data_packets_by_priority{}; // first transmissions
  std::uint64_t control_packets = 0;                                    // ACKs and NACKs
  std::uint64_t retransmissions = 0;                                    // data packets sent again
  std::uint64_t drops = 0;         // packets dropped or evicted in switches
  std::uint64_t bytes_dropped = 0; // payload bytes of dropped data packets
  std::array<std::uint64_t, kMaxPriorities> drops_by_priority{}; // data packets, per class
  // Loss-tolerant receives that completed with bytes missing: the missing payload whose packets
  // were dropped (and not resent), and the missing payload still on its way when the receiver
  // gave up (it arrives late and is discarded).
  std::uint64_t bytes_lost_accepted = 0;
  std::uint64_t bytes_late_discarded = 0;
  std::uint64_t max_lost_fraction_ppm = 0; // the largest missing share of one message, in 1e-6
  std::uint64_t duplicates = 0;            // data packets that arrived twice
  std::uint64_t reordered = 0; // data packets that arrived after a later one of their message
  std::uint64_t ecn_marks = 0;
  std::uint64_t pfc_pauses = 0; // PFC PAUSE frames sent by switches (all classes)
  std::array<std::uint64_t, kMaxPriorities> pfc_pauses_by_priority{};
  std::uint64_t headroom_drops = 0; // lossless packets dropped: their ingress headroom was full
  std::uint64_t cnps = 0;           // DCQCN congestion notifications sent by receivers
  std::uint64_t rate_cuts = 0;      // DCQCN rate cuts (CNPs that reached an active sender)
  std::uint64_t bytes_sent = 0;     // message bytes (as the analytic engine counts them)
  std::vector<LinkStats> links;     // links that carried traffic, by link id
  std::vector<StepRecord> steps_recorded;
  std::vector<QueueSample> queue_samples;
};

// Rank r runs on topology.gpus()[r]. Throws InputError when the schedule has more ranks than the
// topology has GPUs or a pair of ranks has no route, and std::logic_error if the schedule
// deadlocks (a generator bug) or the lossless network deadlocks (PFC cycle).
PacketTiming simulate_packet(const topo::Topology& topology, topo::Router& router,
                             const coll::Schedule& schedule, const PacketOptions& options);

} // namespace ddlsim::sim::packet
