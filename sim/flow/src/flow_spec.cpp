#include "ddlsim/sim/flow/flow_spec.hpp"

#include <array>
#include <vector>

namespace ddlsim::sim::flow {

std::string_view to_string(NetworkModel model) {
  switch (model) {
  case NetworkModel::lv08:
    return "lv08";
  case NetworkModel::cm02:
    return "cm02";
  case NetworkModel::ns3:
    return "ns3";
  }
  return "?";
}

std::string_view to_string(ContextFactory factory) {
  switch (factory) {
  case ContextFactory::raw:
    return "raw";
  case ContextFactory::ucontext:
    return "ucontext";
  case ContextFactory::boost:
    return "boost";
  case ContextFactory::thread:
    return "thread";
  }
  return "?";
}

FlowEngineSpec parse_flow_engine(JsonObject& engine) {
  FlowEngineSpec spec;
  if (auto v = engine.optional("network_model")) {
    const std::string name = v->choice(std::vector<std::string>{"lv08", "cm02", "ns3"});
    if (name == "ns3")
      v->fail("SimGrid's ns-3 model cannot run ddlsim's platforms: it builds its ns-3 network "
              "from routes declared one hop at a time, while ddlsim routes every flow itself "
              "(per-flow ECMP over multi-hop paths); use \"lv08\" or \"cm02\"");
    spec.network_model = name == "cm02" ? NetworkModel::cm02 : NetworkModel::lv08;
  }
  if (auto v = engine.optional("tcp_gamma_bytes")) spec.tcp_gamma_bytes = v->positive_number(1e18);
  if (auto v = engine.optional("crosstraffic")) spec.crosstraffic = v->boolean();
  if (auto v = engine.optional("context_factory")) {
    const std::string name =
        v->choice(std::vector<std::string>{"raw", "ucontext", "boost", "thread"});
    constexpr std::array kFactories{ContextFactory::raw, ContextFactory::ucontext,
                                    ContextFactory::boost, ContextFactory::thread};
    for (ContextFactory factory : kFactories)
      if (to_string(factory) == name) spec.context_factory = factory;
  }
  if (auto v = engine.optional("simgrid_log")) spec.simgrid_log = v->boolean();
  return spec;
}

} // namespace ddlsim::sim::flow
