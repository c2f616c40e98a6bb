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

// "pfc": true (every class lossless, thresholds from the buffer and the links) or
// {"classes": [0, ...], "xoff_bytes", "xon_bytes", "headroom_bytes"}.
PfcSpec parse_pfc(const JsonValue& value, int priorities) {
  PfcSpec pfc;
  if (value.raw().is_boolean()) {
    pfc.enabled = value.boolean();
    return pfc;
  }
  pfc.enabled = true;
  JsonObject object = value.object();
  if (auto v = object.optional("classes")) {
    pfc.lossless_classes = 0;
    for (const JsonValue& c : v->array(1, kMaxPriorities))
      pfc.lossless_classes |= static_cast<std::uint8_t>(1u << c.integer(0, priorities - 1));
  }
  if (auto v = object.optional("xoff_bytes")) pfc.xoff_bytes = v->bytes(1, 1ull << 40);
  if (auto v = object.optional("xon_bytes")) {
    pfc.xon_bytes = v->bytes(0, 1ull << 40);
    if (pfc.xoff_bytes > 0 && pfc.xon_bytes > pfc.xoff_bytes)
      v->fail("expected xon_bytes at most xoff_bytes (" + std::to_string(pfc.xoff_bytes) +
              "), found " + std::to_string(pfc.xon_bytes));
  }
  if (auto v = object.optional("headroom_bytes"))
    pfc.headroom_bytes = static_cast<std::int64_t>(v->bytes(0, 1ull << 40));
  object.finish();
  return pfc;
}

DcqcnSpec parse_dcqcn(const JsonValue& section) {
  DcqcnSpec spec;
  JsonObject object = section.object();
  const auto us = [](const JsonValue& v) { return ns_to_ps(v.positive_number(1e9) * 1e3); };
  const auto gbps = [](const JsonValue& v) { return v.positive_number(1e6) * 1e9 / 8; };
  if (auto v = object.optional("g")) spec.g = v->positive_number(1);
  if (auto v = object.optional("cnp_interval_us")) spec.cnp_interval = us(*v);
  if (auto v = object.optional("alpha_timer_us")) spec.alpha_timer = us(*v);
  if (auto v = object.optional("rate_timer_us")) spec.rate_timer = us(*v);
  if (auto v = object.optional("byte_counter_bytes")) spec.byte_counter = v->bytes(1, 1ull << 50);
  if (auto v = object.optional("fast_recovery_steps"))
    spec.fast_recovery_steps = static_cast<int>(v->integer(0, 1000));
  if (auto v = object.optional("additive_increase_gbps")) spec.additive_bytes_per_second = gbps(*v);
  if (auto v = object.optional("hyper_increase_gbps")) spec.hyper_bytes_per_second = gbps(*v);
  if (auto v = object.optional("min_rate_gbps")) spec.min_bytes_per_second = gbps(*v);
  object.finish();
  return spec;
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
  if (auto v = object.optional("pfc")) spec.pfc = parse_pfc(*v, spec.priorities);
  if (auto v = object.optional("buffer_sharing"))
    spec.buffer_sharing =
        parse_choice(*v, std::array{BufferSharing::per_port, BufferSharing::shared});
  if (auto v = object.optional("shared_buffer_bytes")) {
    spec.shared_buffer_bytes = v->bytes(64, 1ull << 44);
    if (spec.buffer_sharing != BufferSharing::shared)
      v->fail("shared_buffer_bytes only applies with \"buffer_sharing\": \"shared\"");
  }
  if (auto v = object.optional("dynamic_threshold_alpha")) {
    spec.dynamic_threshold_alpha = v->positive_number(1e6);
    if (spec.buffer_sharing != BufferSharing::shared)
      v->fail("dynamic_threshold_alpha only applies with \"buffer_sharing\": \"shared\"");
  }
  object.finish();
  return spec;
}

TransportSpec parse_transport(const JsonValue& section, const SwitchSpec& switch_spec) {
  TransportSpec spec;
  JsonObject object = section.object();
  if (auto v = object.optional("reliable")) spec.reliable = v->boolean();
  if (auto v = object.optional("congestion_control")) {
    spec.congestion_control =
        parse_choice(*v, std::array{CongestionControl::none, CongestionControl::dctcp,
                                    CongestionControl::dcqcn});
  }
  if (auto v = object.optional("dcqcn")) {
    if (spec.congestion_control != CongestionControl::dcqcn)
      v->fail("dcqcn parameters only apply with \"congestion_control\": \"dcqcn\"");
    spec.dcqcn = parse_dcqcn(*v);
  }
  if (spec.congestion_control == CongestionControl::dcqcn && switch_spec.ecn_threshold_bytes == 0)
    throw InputError(object.child_path("congestion_control"),
                     "dcqcn reacts to ECN marks, but switch.ecn_threshold_bytes is 0 (never "
                     "mark); set it, e.g. \"ecn_threshold_bytes\": \"100KiB\"");
  if (auto v = object.optional("rto_us")) spec.rto = ns_to_ps(v->positive_number(1e9) * 1e3);
  if (auto v = object.optional("rto_min_us")) {
    if (!spec.reliable) v->fail("rto_min_us only applies to a reliable transport");
    spec.rto_min = ns_to_ps(v->positive_number(1e9) * 1e3);
  }
  if (auto v = object.optional("initial_window_packets"))
    spec.initial_window_packets = static_cast<std::uint32_t>(v->integer(1, 1 << 24));
  if (auto v = object.optional("loss_bound")) spec.loss_bound = v->number(0, 0.5);
  if (auto v = object.optional("loss_timeout_us")) {
    if (spec.loss_bound == 0) v->fail("loss_timeout_us only applies with \"loss_bound\" > 0");
    spec.loss_timeout = ns_to_ps(v->positive_number(1e9) * 1e3);
  }
  if (auto v = object.optional("ack_every_packets")) {
    spec.ack_every_packets = static_cast<std::uint32_t>(v->integer(1, 1 << 16));
    if (spec.ack_every_packets > 1 && !spec.reliable) v->fail("ACKs need \"reliable\": true");
  }
  if (auto v = object.optional("priority")) {
    if (v->raw().is_string()) {
      const std::string rule = v->choice(
          std::vector<std::string>{"by_channel", "by_offset", "by_layer", "by_magnitude"});
      spec.priority_rule = rule == "by_channel"  ? TransportSpec::PriorityRule::by_channel
                           : rule == "by_offset" ? TransportSpec::PriorityRule::by_offset
                           : rule == "by_layer"  ? TransportSpec::PriorityRule::by_layer
                                                 : TransportSpec::PriorityRule::by_magnitude;
      if (spec.priority_rule == TransportSpec::PriorityRule::by_magnitude) {
        if (switch_spec.priorities < 2)
          v->fail("by_magnitude needs two classes or more: set switch.priorities to 2");
        if (!object.has("magnitude_top_fraction"))
          v->fail("by_magnitude needs transport.magnitude_top_fraction, the share of each "
                  "message's packets that carry its largest gradients (e.g. 0.1)");
      }
    } else {
      spec.priority = static_cast<int>(v->integer(0, kMaxPriorities - 1));
      if (spec.priority >= switch_spec.priorities)
        v->fail("expected a class below switch.priorities (" +
                std::to_string(switch_spec.priorities) + "), found " +
                std::to_string(spec.priority));
    }
  }
  if (auto v = object.optional("magnitude_top_fraction")) {
    if (spec.priority_rule != TransportSpec::PriorityRule::by_magnitude)
      v->fail("magnitude_top_fraction only applies with \"priority\": \"by_magnitude\"");
    spec.magnitude_top_fraction = v->number(0, 1);
    if (spec.magnitude_top_fraction <= 0 || spec.magnitude_top_fraction >= 1)
      v->fail("expected a share strictly between 0 and 1");
  }
  if (auto v = object.optional("magnitude_profile")) {
    if (spec.priority_rule != TransportSpec::PriorityRule::by_magnitude)
      v->fail("magnitude_profile only applies with \"priority\": \"by_magnitude\"");
    for (const JsonValue& scale : v->array(1, 4096))
      spec.magnitude_profile.push_back(scale.positive_number(1e300));
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
  switch (control) {
  case CongestionControl::none:
    return "none";
  case CongestionControl::dctcp:
    return "dctcp";
  case CongestionControl::dcqcn:
    return "dcqcn";
  }
  return "none";
}
std::string_view to_string(BufferSharing sharing) {
  return sharing == BufferSharing::per_port ? "per_port" : "shared";
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
