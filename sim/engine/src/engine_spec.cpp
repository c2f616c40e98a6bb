#include "ddlsim/sim/engine_spec.hpp"

namespace ddlsim::sim {
namespace {

std::string_view name_of(const AnalyticEngineSpec&) {
  return "analytic";
}
std::string_view name_of(const flow::FlowEngineSpec&) {
  return "flow";
}
std::string_view name_of(const packet::PacketEngineSpec&) {
  return "packet";
}

} // namespace

std::string_view engine_name(const EngineSpec& spec) {
  return std::visit([](const auto& kind) { return name_of(kind); }, spec.kind);
}

std::string_view progress_unit(const EngineSpec& spec) {
  return std::holds_alternative<packet::PacketEngineSpec>(spec.kind) ? "events" : "steps";
}

bool runs_in_child_process(const EngineSpec& spec) {
  return std::holds_alternative<flow::FlowEngineSpec>(spec.kind);
}

} // namespace ddlsim::sim
