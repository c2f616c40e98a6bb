#include "ddlsim/sim/packet/packet_spec.hpp"

#include "ddlsim/core/input_error.hpp"

#include <array>
#include <string>

namespace ddlsim::sim::packet {
namespace {

template <typename Enum, std::size_t N>
Enum parse_choice(const JsonValue& value, const std::array<Enum, N>& all) {
  std::vector<std::string> names;
  for (Enum e : all) names.emplace_back(to_string(e));
  const std::string chosen = value.choice(names);
  for (Enum e : all)
    if (to_string(e) == chosen) return e;
  return all[0];
}

SwitchSpec parse_switch(const JsonValue& section) {
  SwitchSpec spec;
  JsonObject object = section.object();
  if (auto v = object.optional("buffer_bytes")) spec.buffer_bytes = v->bytes(64, 1ull << 40);
  if (auto v = object.optional("priorities"))
    spec.priorities = static_cast<int>(v->integer(1, kMaxPriorities));
  if (auto v = object.optional("scheduler"))
    spec.scheduler = parse_choice(*v, std::array{Scheduler::strict, Scheduler::dwrr});
  if (auto v = object.optional("dwrr_weights")) {
    for (const JsonValue& w : v->array(1, kMaxPriorities))
      spec.dwrr_weights.push_back(static_cast<std::uint32_t>(w.integer(1, 1 << 20)));
    if (spec.dwrr_weights.size() != static_cast<std::size_t>(spec.priorities))
      v->fail("expected one weight per priority class (" + std::to_string(spec.priorities) +
              "), found " + std::to_string(spec.dwrr_weights.size()));
    if (spec.scheduler != Scheduler::dwrr)
      v->fail("dwrr_weights only apply with \"scheduler\": \"dwrr\"");
  }
  if (auto v = object.optional("drop_policy"))
    spec.drop_policy = parse_choice(
        *v, std::array{DropPolicy::tail, DropPolicy::priority, DropPolicy::loss_tolerant});
  if (auto v = object.optional("ecn_threshold_bytes"))
    spec.ecn_threshold_bytes = v->bytes(0, 1ull << 40);
  if (auto v = object.optional("pfc")) spec.pfc = v->boolean();
  object.finish();
  return spec;
}

TransportSpec parse_transport(const JsonValue& section, const SwitchSpec& switch_spec) {
  TransportSpec spec;
  JsonObject object = section.object();
  if (auto v = object.optional("reliable")) spec.reliable = v->boolean();
  if (auto v = object.optional("congestion_control")) {
    if (v->raw() == "dcqcn")
      v->fail("DCQCN-style rate control is not part of this version of the packet engine yet; "
              "use \"none\" or \"dctcp\"");
    spec.congestion_control =
        parse_choice(*v, std::array{CongestionControl::none, CongestionControl::dctcp});
  }
  if (auto v = object.optional("rto_us")) spec.rto = ns_to_ps(v->positive_number(1e9) * 1e3);
  if (auto v = object.optional("initial_window_packets"))
    spec.initial_window_packets = static_cast<std::uint32_t>(v->integer(1, 1 << 24));
  if (auto v = object.optional("loss_bound")) spec.loss_bound = v->number(0, 0.5);
  if (auto v = object.optional("priority")) {
    if (v->raw().is_string()) {
      spec.priority_rule =
          v->choice(std::vector<std::string>{"by_channel", "by_offset"}) == "by_channel"
              ? TransportSpec::PriorityRule::by_channel
              : TransportSpec::PriorityRule::by_offset;
    } else {
      spec.priority = static_cast<int>(v->integer(0, kMaxPriorities - 1));
      if (spec.priority >= switch_spec.priorities)
        v->fail("expected a class below switch.priorities (" +
                std::to_string(switch_spec.priorities) + "), found " +
                std::to_string(spec.priority));
    }
  }
  if (spec.congestion_control == CongestionControl::dctcp && !spec.reliable)
    throw InputError(object.child_path("congestion_control"),
                     "dctcp needs ACKs: set \"reliable\": true or use \"none\"");
  object.finish();
  return spec;
}

} // namespace

std::string_view to_string(Scheduler scheduler) {
  return scheduler == Scheduler::strict ? "strict" : "dwrr";
}
std::string_view to_string(DropPolicy policy) {
  switch (policy) {
  case DropPolicy::tail:
    return "tail";
  case DropPolicy::priority:
    return "priority";
  case DropPolicy::loss_tolerant:
    return "loss_tolerant";
  }
  return "tail";
}
std::string_view to_string(LoadBalancing balancing) {
  switch (balancing) {
  case LoadBalancing::ecmp:
    return "ecmp";
  case LoadBalancing::spray_random:
    return "spray_random";
  case LoadBalancing::spray_round_robin:
    return "spray_round_robin";
  case LoadBalancing::adaptive:
    return "adaptive";
  }
  return "ecmp";
}
std::string_view to_string(CongestionControl control) {
  return control == CongestionControl::none ? "none" : "dctcp";
}

PacketEngineSpec parse_packet_engine_spec(JsonObject& engine) {
  PacketEngineSpec spec;
  if (auto v = engine.optional("mtu_bytes"))
    spec.mtu_bytes = static_cast<std::uint32_t>(v->bytes(64, 1 << 20));
  if (auto v = engine.optional("header_bytes"))
    spec.header_bytes = static_cast<std::uint32_t>(v->bytes(0, 4096));
  if (auto v = engine.optional("control_bytes"))
    spec.control_bytes = static_cast<std::uint32_t>(v->bytes(1, 4096));
  if (auto v = engine.optional("node_buffer_bytes"))
    spec.node_buffer_bytes = v->bytes(64, 1ull << 40);
  if (auto v = engine.optional("switch")) spec.switch_spec = parse_switch(*v);
  if (auto v = engine.optional("load_balancing"))
    spec.load_balancing =
        parse_choice(*v, std::array{LoadBalancing::ecmp, LoadBalancing::spray_random,
                                    LoadBalancing::spray_round_robin, LoadBalancing::adaptive});
  if (auto v = engine.optional("transport")) spec.transport = parse_transport(*v, spec.switch_spec);
  if (auto v = engine.optional("queue_sample_interval_ns"))
    spec.queue_sample_interval = ns_to_ps(v->positive_number(1e12));
  if (spec.transport.loss_bound > 0 && !spec.transport.reliable)
    throw InputError(engine.child_path("transport") + "/loss_bound",
                     "loss_bound needs \"reliable\": true (the receiver's ACKs say when enough "
                     "arrived)");
  if (spec.switch_spec.buffer_bytes < spec.mtu_bytes + spec.header_bytes)
    throw InputError(engine.child_path("switch") + "/buffer_bytes",
                     "expected room for at least one packet (" +
                         std::to_string(spec.mtu_bytes + spec.header_bytes) +
                         " bytes with its header), found " +
                         std::to_string(spec.switch_spec.buffer_bytes));
  return spec;
}

} // namespace ddlsim::sim::packet
