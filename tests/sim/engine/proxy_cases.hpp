// Shared by the proxy tests (net_post_test, net_flush_test): network steps on several channels
// between two ranks, and their time on each engine with copies free and no TCP model, so that
// only the step costs under test and the wire remain.
#pragma once

#include "../uniform_star.hpp"
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/sim/analytic_engine.hpp"
#include "ddlsim/sim/flow/flow_engine.hpp"
#include "ddlsim/sim/packet/packet_engine.hpp"
#include "ddlsim/topologies/router.hpp"
#include "step_builders.hpp"

#include <cstdint>
#include <vector>

namespace ddlsim::sim::test {

// On each of `channels` channels rank 0 sends `sends` messages of `bytes` to rank 1 in turn,
// under `protocol` (its proxy costs).
inline coll::Schedule sends_on_channels(int channels, int sends, std::uint64_t bytes,
                                        const coll::Protocol& protocol) {
  coll::MaterializedSchedule m;
  m.call = make_call(coll::Op::send_recv, "direct", 2, bytes);
  m.call.root = 1; // the receiver: its output buffer holds what it receives
  m.call.protocol = protocol;
  m.algorithm = "channel_sends";
  m.ranks = 2;
  m.channels = channels;
  m.scratch_bytes = {0, 0};
  m.programs.assign(2, std::vector<std::vector<coll::Step>>(static_cast<std::size_t>(channels)));
  for (int c = 0; c < channels; ++c)
    for (int i = 0; i < sends; ++i) {
      coll::Step send = test_support::transfer_step(coll::StepKind::send, 1, bytes);
      coll::Step receive = test_support::transfer_step(coll::StepKind::recv, 0, bytes);
      send.channel = receive.channel = static_cast<std::uint16_t>(c);
      m.programs[0][static_cast<std::size_t>(c)].push_back(send);
      m.programs[1][static_cast<std::size_t>(c)].push_back(receive);
    }
  return coll::Schedule::from_materialized(std::move(m));
}

enum class Engine { analytic, flow, packet };

inline const char* name(Engine engine) {
  return engine == Engine::analytic ? "analytic" : engine == Engine::flow ? "flow" : "packet";
}

// The schedule's time on `engine`: copies free; the flow engine on CM02 without crosstraffic or
// a TCP window, so its transfers take what the other engines' do.
inline double time_ps(Engine engine, const topo::Topology& topology,
                      const coll::Schedule& schedule) {
  topo::Router router(topology);
  if (engine == Engine::analytic) {
    AnalyticOptions options;
    options.copy_bytes_per_second = 1e300;
    return static_cast<double>(simulate_analytic(topology, router, schedule, options).time);
  }
  if (engine == Engine::flow) {
    flow::FlowOptions options;
    options.model.network_model = flow::NetworkModel::cm02;
    options.model.crosstraffic = false;
    options.model.tcp_gamma_bytes = 1e12;
    options.copy_bytes_per_second = 1e300;
    return static_cast<double>(flow::simulate_flow(topology, router, schedule, options).time);
  }
  packet::PacketOptions options;
  options.copy_bytes_per_second = 1e300;
  return static_cast<double>(packet::simulate_packet(topology, router, schedule, options).time);
}

} // namespace ddlsim::sim::test
