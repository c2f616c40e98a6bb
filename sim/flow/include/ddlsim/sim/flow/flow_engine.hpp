// The flow-level engine: times a Schedule on a Topology with SimGrid's fluid network models.
//
// What it models: one SimGrid actor per (rank, channel) program runs its steps under the
// execution rules of collectives/step.hpp. A send and its receive meet in a mailbox per
// (sender, receiver, channel), so bytes move once both have started (rendezvous), at the rate
// SimGrid's network model gives the flow on its route: LV08 (TCP-like: latency x13.01, bandwidth
// x0.97, RTT-weighted max-min sharing, 5% reverse traffic) or CM02 (plain max-min; alpha-beta
// with crosstraffic off and a large TCP window). Every directed link of the topology is one
// SimGrid link, and every flow takes the equal-cost path a seeded hash of (source rank,
// destination rank, channel) picks, the same as the analytic engine. Local steps and the
// reduction of a recv_reduce take their durations and never slow each other down (as in the
// analytic engine): each program's actor times them itself, with a timeout on its wait. With
// compute_slowdown, a compute step on the compute channel runs at 1 / compute_slowdown(blocks
// of its rank's communication in flight) of its rate, recomputed whenever those blocks change.
//
// What it does not model: packets, queues, loss, congestion-control dynamics beyond LV08's
// steady-state TCP sharing, GPU memory contention.
//
// SimGrid keeps process-wide state: after one simulation the clock does not restart and the
// network model cannot change, so every simulation runs in a forked child process that sends
// its result back through a pipe. The parent never touches SimGrid.
#pragma once

#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/sim/analytic_engine.hpp"
#include "ddlsim/sim/flow/flow_spec.hpp"
#include "ddlsim/topologies/router.hpp"
#include "ddlsim/topologies/topology.hpp"

namespace ddlsim::sim::flow {

struct FlowOptions {
  FlowEngineSpec model;
  Picoseconds per_step_overhead = 0;  // charged once per transfer and once per local step
  double reduce_bytes_per_second = 0; // 0 = from each GPU's model (gpu_rates.hpp)
  double copy_bytes_per_second = 0;   // 0 = from each GPU's model
  std::uint64_t seed = 1;             // ECMP path choice
  bool record_steps = false;          // fill CollectiveTiming::steps_recorded
  // Compute slowed by the communication kernels beside it, by the analytic engine's rule
  // (AnalyticOptions::compute_slowdown, ddlsim/sim/compute_slowdown.hpp).
  bool compute_slowdown = false;
  std::uint16_t compute_channel = 0;
  // Called every kProgressInterval completed steps (in the child process, which inherits the
  // caller's state); returning false stops the run (CollectiveTiming::complete is then false).
  std::function<bool(Picoseconds simulated, std::uint64_t steps_done)> progress;
};

// Rank r runs on topology.gpus()[r]. Throws InputError when the schedule has more ranks than the
// topology has GPUs or a flow has no route, std::logic_error if the schedule deadlocks, and
// std::runtime_error if the simulation process dies.
CollectiveTiming simulate_flow(const topo::Topology& topology, topo::Router& router,
                               const coll::Schedule& schedule, const FlowOptions& options);

} // namespace ddlsim::sim::flow
