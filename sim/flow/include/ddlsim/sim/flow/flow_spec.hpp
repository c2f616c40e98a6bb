// FlowEngineSpec: what a scenario says about the flow-level engine (engine.type = "flow"), and
// its strict parser. Kept free of SimGrid so that the scenario library can hold it without
// linking the simulator.
#pragma once

#include "ddlsim/core/json_reader.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ddlsim::sim::flow {

// SimGrid's network models. lv08: the validated TCP model of Velho & Legrand (latency x13.01,
// bandwidth x0.97, RTT-weighted max-min sharing, 5% reverse traffic for TCP acks). cm02: plain
// max-min sharing with the latency and bandwidth given (with crosstraffic off and a large TCP
// window it is exactly alpha-beta). ns3: SimGrid's ns-3 packet model (not usable with our
// platforms; the parser says why).
enum class NetworkModel : std::uint8_t { lv08, cm02, ns3 };
std::string_view to_string(NetworkModel model);

// SimGrid's ways of switching between actors; raw is its fastest.
enum class ContextFactory : std::uint8_t { raw, ucontext, boost, thread };
std::string_view to_string(ContextFactory factory);

struct FlowEngineSpec {
  NetworkModel network_model = NetworkModel::lv08;
  // network/TCP-gamma: the TCP window in bytes; a flow's rate is capped at window / (2 x route
  // latency). Unset: SimGrid's default (4 MiB).
  std::optional<double> tcp_gamma_bytes;
  // network/crosstraffic: each flow loads the reverse route with 5% of its rate (TCP acks).
  // Unset: SimGrid's default (on).
  std::optional<bool> crosstraffic;
  ContextFactory context_factory = ContextFactory::raw;
  bool simgrid_log = false; // let SimGrid's own log messages through to stderr

  bool operator==(const FlowEngineSpec&) const = default;
};

// Reads the flow engine's keys (network_model, tcp_gamma_bytes, crosstraffic, context_factory,
// simgrid_log) from the engine object; the caller reads the keys shared with other engines and
// calls finish(). Throws InputError naming the JSON pointer.
FlowEngineSpec parse_flow_engine(JsonObject& engine);

} // namespace ddlsim::sim::flow
