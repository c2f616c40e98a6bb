#include "flow_run.hpp"

#include "flow_actors.hpp"

#include <stdexcept>

namespace ddlsim::sim::flow {
namespace run_detail {

FlowRun::FlowRun(const topo::Topology& topology, topo::Router& router,
                 const coll::Schedule& schedule, const FlowOptions& options,
                 const ReportNow& report_now)
    : options_(options), report_now_(report_now) {
  const int ranks = schedule.ranks();
  channels_ = schedule.channels();
  rates_ =
      rank_rates(topology, ranks, options.reduce_bytes_per_second, options.copy_bytes_per_second);
  protocols_ = protocol_costs(schedule);
  proxies_ = ProxyPosts(static_cast<std::size_t>(ranks));
  const std::size_t programs =
      static_cast<std::size_t>(ranks) * static_cast<std::size_t>(channels_);
  if (options.compute_slowdown) slowdown_.emplace(programs, rates_, schedule.protocols());
  start_simgrid(options.model, programs);
  platform_ = std::make_unique<Platform>(topology, router, ranks, channels_, options.seed,
                                         options.per_step_overhead);
  programs_.reserve(programs);
  for (int r = 0; r < ranks; ++r)
    for (int c = 0; c < channels_; ++c) {
      programs_.push_back(std::make_unique<Program>(*this, r, c, schedule.program(r, c)));
      Program* program = programs_.back().get();
      if (slows(c)) program->make_rate_mailbox();
      sg::Actor::create("rank" + std::to_string(r) + "#" + std::to_string(c), platform_->host(r, c),
                        [program] { (*program)(); });
    }
}

CollectiveTiming FlowRun::run() {
  Platform::run();
  if (!platform_->routing_error().empty()) throw InputError("topology", platform_->routing_error());
  if (input_error_) throw *input_error_;
  if (!input_why_.empty()) throw InputError("engine", input_why_);
  if (!error_.empty()) throw std::logic_error(error_);
  for (const auto& program : programs_)
    if (!program->finished()) throw std::logic_error(program->describe_stuck());
  return timing();
}

} // namespace run_detail

CollectiveTiming run_flow_in_this_process(const topo::Topology& topology, topo::Router& router,
                                          const coll::Schedule& schedule,
                                          const FlowOptions& options, const ReportNow& report_now) {
  return run_detail::FlowRun(topology, router, schedule, options, report_now).run();
}

} // namespace ddlsim::sim::flow
