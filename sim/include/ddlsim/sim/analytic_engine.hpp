// The analytic engine: times a Schedule on a Topology.
//
// Two evaluations give the same times to the picosecond (tests/sim/dependency_order_test.cpp):
// the event-driven one (events over step completions, in time order), and the dependency-order
// one, tried first: it computes each step's times from its dependencies program by program,
// without an event queue, and times event-driven only the transfers on link classes where it
// found sharing (simulate_dependency_order below). The second was 1.3 to 2.5 times faster on the
// 4k and 16k-rank benchmarks (docs/benchmarks.md).
//
// What it models: a transfer waits out its path latency (sum of link latencies) plus the
// per-step overhead, then moves its bytes at the max-min fair share of every link it crosses
// (FlowNetwork); one equal-cost path per transfer, chosen by a seeded hash of (source rank,
// destination rank, channel). A recv_reduce reduces the received bytes after they arrive, at the
// GPU's reduction rate; local steps cost overhead + bytes / rate. A call's protocol adds its wire
// bytes, hop latency and reduction in flight (protocol_cost.hpp). A group of switch steps (NVLS,
// rule 4 of step.hpp) is one flow over every member's links to the reducing NVSwitch and the
// switch's links out (sim/src/switch_routes.hpp), with no GPU reduction. Steps follow the execution
// rules of collectives/step.hpp, and a send and its receive start moving data once both have
// started (rendezvous). What it does not model: packets, queues, congestion control, loss,
// protocol headers beyond the protocol's wire bytes, or contention between compute and
// communication for GPU memory bandwidth; compute slowed by communication kernels' SMs only with
// AnalyticOptions::compute_slowdown.
#pragma once

#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/topologies/router.hpp"
#include "ddlsim/topologies/topology.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace ddlsim::sim {

struct StepRecord {
  std::int32_t rank = 0;
  std::uint16_t channel = 0;
  coll::StepKind kind = coll::StepKind::send;
  std::int32_t peer = -1;
  std::uint64_t bytes = 0;
  Picoseconds start = 0;
  Picoseconds end = 0;
};

struct AnalyticOptions {
  Picoseconds per_step_overhead = 0;  // charged once per transfer and once per local step
  double reduce_bytes_per_second = 0; // 0 = from each GPU's model (gpu_rates.hpp)
  double copy_bytes_per_second = 0;   // 0 = from each GPU's model
  std::uint64_t seed = 1;             // ECMP path choice
  bool record_steps = false;          // fill CollectiveTiming::steps (for traces)
  // When set, called with each step's record as it is made (the order of steps_recorded), with
  // or without record_steps: a training iteration's metrics need every step once, and keeping
  // them all took 1.6 GB at 1,024 GPUs.
  std::function<void(const StepRecord&)> on_step;
  // The channels whose steps on_step needs, a bit per channel (channels from 64 on always):
  // the dependency-order evaluation keeps and hands over only those programs' records (the
  // others may be handed over or not). record_steps records every channel whatever this says.
  std::uint64_t on_step_channels = ~std::uint64_t{0};
  // Called when the dependency-order evaluation gave up after handing steps to on_step, before
  // the event-driven evaluation hands them all over again: a sink that counts steps starts over.
  std::function<void()> on_restart;
  // Compute slowed by the communication kernels beside it (compute_slowdown.hpp): compute steps
  // on channel `compute_channel` progress at 1 / compute_slowdown(thread blocks of the rank's
  // programs with a communication step in flight, the GPU's SMs) of their rate. Compute steps on
  // other channels (launch costs, markers) are never slowed. Runs the event-driven evaluation.
  bool compute_slowdown = false;
  std::uint16_t compute_channel = 0;
  // Try the dependency-order evaluation first (simulate_dependency_order); false = always the
  // event-driven one. Both give the same timing; tests compare them.
  bool try_dependency_order = true;
  // Called every kProgressInterval completed steps with the simulated time and the steps done;
  // returning false stops the run early (CollectiveTiming::complete is then false).
  std::function<bool(Picoseconds simulated, std::uint64_t steps_done)> progress;
};

inline constexpr std::uint64_t kProgressInterval = 1 << 16;

struct CollectiveTiming {
  bool complete = true; // false when options.progress stopped the run
  Picoseconds time = 0; // when the last step of any rank completed
  std::uint64_t steps = 0;
  std::uint64_t transfers = 0;
  std::uint64_t bytes_sent = 0;
  std::size_t peak_flows_per_link = 0;
  // Only with record_steps: every step, in completion order from the event-driven evaluation and
  // in the order it timed them from the dependency-order one (sort by `end` if order matters).
  std::vector<StepRecord> steps_recorded;
  bool evaluated_in_dependency_order = false; // which evaluation produced it (same result)
};

// Rank r runs on topology.gpus()[r]. Tries simulate_dependency_order first (unless
// !options.try_dependency_order) and runs the event-driven evaluation when it gives up. Throws
// InputError when the schedule has more ranks than the topology has GPUs, and std::logic_error if
// the schedule deadlocks (a generator bug).
CollectiveTiming simulate_analytic(const topo::Topology& topology, topo::Router& router,
                                   const coll::Schedule& schedule, const AnalyticOptions& options);

// The analytic engine's fast evaluation. A transfer alone on its links moves at its path's
// bottleneck bandwidth throughout, so each step's times follow from its dependencies alone and
// are computed program by program, without an event queue or a max-min solver; transfers on the
// link classes where it finds sharing are timed event-driven inside it (a new attempt per class
// found). Returns exactly the timing of the event-driven evaluation, or std::nullopt when it
// cannot order the schedule: a cross-program wait on an end it forgot before the first wait or on a
// missing channel, a schedule that cannot finish, more than 2^31 steps in a program, or
// options.compute_slowdown (the event-driven evaluation models it). Its
// steps_recorded come in the order it timed the steps, not in completion order.
std::optional<CollectiveTiming> simulate_dependency_order(const topo::Topology& topology,
                                                          topo::Router& router,
                                                          const coll::Schedule& schedule,
                                                          const AnalyticOptions& options);

} // namespace ddlsim::sim
