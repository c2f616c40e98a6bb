#include "schedule_run.hpp"

#include "ddlsim/sim/flow/flow_engine.hpp"
#include "ddlsim/sim/packet/packet_engine.hpp"
#include "ddlsim/sim/packet/packet_report.hpp"

#include <cstdint>

namespace ddlsim::sim {
namespace {

// The settings every engine's options struct has alike.
template <class Options>
Options shared_options(const EngineSpec& spec, const CommonOptions& common, bool record_steps) {
  Options options;
  options.per_step_overhead = spec.per_step_overhead;
  options.reduce_bytes_per_second = spec.reduce_bytes_per_second;
  options.copy_bytes_per_second = spec.copy_bytes_per_second;
  options.seed = common.seed;
  options.progress = common.progress;
  options.record_steps = record_steps;
  return options;
}

// The fields every engine's timing has (CollectiveTiming or packet::PacketTiming).
template <class Timing> EngineResult common_result(Timing&& timing) {
  EngineResult result;
  result.complete = timing.complete;
  result.time = timing.time;
  result.steps = timing.steps;
  result.transfers = timing.transfers;
  result.bytes_sent = timing.bytes_sent;
  result.steps_recorded = std::move(timing.steps_recorded);
  return result;
}

EngineResult common_result(CollectiveTiming&& timing) {
  const std::size_t peak_flows_per_link = timing.peak_flows_per_link;
  EngineResult result = common_result<CollectiveTiming>(std::move(timing));
  result.peak_flows_per_link = peak_flows_per_link;
  return result;
}

// The engines other than the analytic one hand steps over only as kept records.
void hand_over_steps(EngineResult& result, const CommonOptions& common, const StepSink& on_step) {
  if (!on_step) return;
  for (const StepRecord& record : result.steps_recorded) on_step(record);
  if (!common.record_steps) result.steps_recorded = {};
}

// Queue depths of the switch ports as trace counters, one track per port in order of first
// sample.
void add_queue_counters(const std::vector<packet::QueueSample>& samples,
                        const topo::Topology& topology, EngineDetails& details) {
  std::vector<std::uint32_t> track_of(topology.link_count(), UINT32_MAX);
  for (const packet::QueueSample& sample : samples) {
    std::uint32_t& track = track_of[sample.link];
    if (track == UINT32_MAX) {
      track = static_cast<std::uint32_t>(details.counter_names.size());
      details.counter_names.push_back("queue bytes " + packet::link_name(topology, sample.link));
    }
    details.counters.push_back({track, sample.time, static_cast<double>(sample.bytes)});
  }
}

struct ScheduleRun {
  const coll::Schedule& schedule;
  const topo::Topology& topology;
  topo::Router& router;
  const EngineSpec& spec;
  const CommonOptions& common;
  const StepSink& on_step;
  const std::function<void()>& on_restart;
  std::uint64_t on_step_channels;

  EngineResult operator()(const AnalyticEngineSpec&) const {
    auto options = shared_options<AnalyticOptions>(spec, common, common.record_steps);
    options.on_step = on_step;
    options.on_restart = on_restart;
    options.on_step_channels = on_step_channels;
    options.compute_slowdown = spec.compute_slowdown;
    return common_result(simulate_analytic(topology, router, schedule, options));
  }

  EngineResult operator()(const flow::FlowEngineSpec& model) const {
    auto options =
        shared_options<flow::FlowOptions>(spec, common, common.record_steps || bool(on_step));
    options.model = model;
    options.compute_slowdown = spec.compute_slowdown;
    EngineResult result = common_result(flow::simulate_flow(topology, router, schedule, options));
    hand_over_steps(result, common, on_step);
    return result;
  }

  EngineResult operator()(const packet::PacketEngineSpec& packet_spec) const {
    auto options =
        shared_options<packet::PacketOptions>(spec, common, common.record_steps || bool(on_step));
    options.spec = packet_spec;
    options.record_queues = common.record_counters;
    options.compute_slowdown = spec.compute_slowdown;
    packet::PacketTiming timing = packet::simulate_packet(topology, router, schedule, options);
    EngineDetails details;
    details.json = packet::packet_details(timing, topology);
    details.summary = packet::packet_summary(timing, topology);
    add_queue_counters(timing.queue_samples, topology, details);
    EngineResult result = common_result(std::move(timing));
    result.details = std::move(details);
    hand_over_steps(result, common, on_step);
    return result;
  }
};

} // namespace

AnalyticOptions analytic_options(const EngineSpec& spec, const CommonOptions& options) {
  auto analytic = shared_options<AnalyticOptions>(spec, options, false);
  analytic.compute_slowdown = spec.compute_slowdown;
  return analytic;
}

EngineResult run_schedule(const coll::Schedule& schedule, const topo::Topology& topology,
                          topo::Router& router, const EngineSpec& spec,
                          const CommonOptions& options, const StepSink& on_step,
                          const std::function<void()>& on_restart, std::uint64_t on_step_channels) {
  return std::visit(
      ScheduleRun{schedule, topology, router, spec, options, on_step, on_restart, on_step_channels},
      spec.kind);
}

} // namespace ddlsim::sim
