// The packet engine's options: defaults, values, and errors that name the JSON pointer.
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/sim/packet/packet_spec.hpp"

#include <catch2/catch.hpp>

namespace ddlsim::sim::packet {
namespace {

PacketEngineSpec parse(const std::string& text) {
  const Json json = parse_json_text(text, "test");
  JsonObject engine(json, "/engine");
  engine.allow({"type"});
  PacketEngineSpec spec = parse_packet_engine_spec(engine);
  engine.finish();
  return spec;
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST_CASE("engine options parse with their defaults") {
  const PacketEngineSpec defaults = parse(R"({"type": "packet"})");
  CHECK(defaults.mtu_bytes == 4096);
  CHECK(defaults.header_bytes == 64);
  CHECK(defaults.switch_spec.drop_policy == DropPolicy::tail);
  CHECK(defaults.load_balancing == LoadBalancing::ecmp);
  CHECK(defaults.transport.reliable);

  const PacketEngineSpec spec = parse(R"({"type": "packet", "mtu_bytes": "8KiB",
      "switch": {"buffer_bytes": "2MiB", "priorities": 2, "scheduler": "dwrr",
                 "dwrr_weights": [3, 1], "drop_policy": "priority",
                 "ecn_threshold_bytes": "64KiB", "pfc": true},
      "load_balancing": "spray_random",
      "transport": {"congestion_control": "dctcp", "rto_us": 250, "loss_bound": 0.05,
                    "loss_timeout_us": 20, "priority": "by_channel"}})");
  CHECK(spec.mtu_bytes == 8192);
  CHECK(spec.switch_spec.buffer_bytes == (2u << 20));
  CHECK(spec.switch_spec.dwrr_weights == std::vector<std::uint32_t>{3, 1});
  CHECK(spec.switch_spec.pfc.enabled);
  CHECK(spec.switch_spec.pfc.lossless(1));

  const PacketEngineSpec rich = parse(R"({"type": "packet",
      "switch": {"priorities": 2, "ecn_threshold_bytes": "100KiB",
                 "pfc": {"classes": [0], "xoff_bytes": "40KiB", "xon_bytes": "20KiB",
                         "headroom_bytes": "30KiB"},
                 "buffer_sharing": "shared", "shared_buffer_bytes": "12MiB",
                 "dynamic_threshold_alpha": 0.5},
      "transport": {"congestion_control": "dcqcn", "priority": "by_layer",
                    "dcqcn": {"g": 0.0625, "cnp_interval_us": 4, "rate_timer_us": 300,
                              "byte_counter_bytes": "32KiB", "additive_increase_gbps": 5,
                              "hyper_increase_gbps": 50, "min_rate_gbps": 1,
                              "alpha_timer_us": 100, "fast_recovery_steps": 3}}})");
  CHECK(rich.switch_spec.pfc.lossless(0));
  CHECK_FALSE(rich.switch_spec.pfc.lossless(1));
  CHECK(rich.switch_spec.pfc.xoff_bytes == 40u << 10);
  CHECK(rich.switch_spec.pfc.headroom_bytes == 30 << 10);
  CHECK(rich.switch_spec.buffer_sharing == BufferSharing::shared);
  CHECK(rich.switch_spec.shared_buffer_bytes == 12u << 20);
  CHECK(rich.switch_spec.dynamic_threshold_alpha == 0.5);
  CHECK(rich.transport.congestion_control == CongestionControl::dcqcn);
  CHECK(rich.transport.priority_rule == TransportSpec::PriorityRule::by_layer);
  CHECK(rich.transport.dcqcn.g == 0.0625);
  CHECK(rich.transport.dcqcn.cnp_interval == 4 * kPsPerUs);
  CHECK(rich.transport.dcqcn.rate_timer == 300 * kPsPerUs);
  CHECK(rich.transport.dcqcn.byte_counter == 32u << 10);
  CHECK(rich.transport.dcqcn.additive_bytes_per_second == 5e9 / 8);
  CHECK(rich.transport.dcqcn.fast_recovery_steps == 3);
  CHECK(defaults.transport.ack_every_packets == 1);
  CHECK(parse(R"({"transport": {"ack_every_packets": 8}})").transport.ack_every_packets == 8);
  // The DCQCN paper's defaults.
  CHECK(defaults.transport.dcqcn.g == 1.0 / 256);
  CHECK(defaults.transport.dcqcn.cnp_interval == 50 * kPsPerUs);
  CHECK(defaults.transport.dcqcn.rate_timer == 55 * kPsPerUs);
  CHECK(spec.load_balancing == LoadBalancing::spray_random);
  CHECK(spec.transport.congestion_control == CongestionControl::dctcp);
  CHECK(spec.transport.rto == 250 * kPsPerUs);
  CHECK(spec.transport.loss_bound == 0.05);
  CHECK(spec.transport.loss_timeout == 20 * kPsPerUs);
  CHECK(defaults.transport.loss_timeout < 0); // from each message's path
  const PacketEngineSpec magnitude = parse(R"({"type": "packet", "switch": {"priorities": 2},
      "transport": {"priority": "by_magnitude", "magnitude_top_fraction": 0.25}})");
  CHECK(magnitude.transport.priority_rule == TransportSpec::PriorityRule::by_magnitude);
  CHECK(magnitude.transport.magnitude_top_fraction == 0.25);
  const PacketEngineSpec profiled = parse(R"({"type": "packet", "switch": {"priorities": 2},
      "transport": {"priority": "by_magnitude", "magnitude_top_fraction": 0.25,
                    "magnitude_profile": [1, 4], "rto_min_us": 5000}})");
  CHECK(profiled.transport.magnitude_profile == std::vector<double>{1, 4});
  CHECK(profiled.transport.rto_min == 5000 * kPsPerUs);
  CHECK(spec.transport.priority_rule == TransportSpec::PriorityRule::by_channel);
}

TEST_CASE("bad engine options name their JSON pointer") {
  CHECK_THAT(error_of(R"({"switch": {"drop_policy": "random"}})"),
             Catch::Contains("/engine/switch/drop_policy"));
  CHECK_THAT(error_of(R"({"switch": {"bufer_bytes": 1}})"),
             Catch::Contains("did you mean \"buffer_bytes\""));
  CHECK_THAT(error_of(R"({"load_balancing": "spray"})"), Catch::Contains("/engine/load_balancing"));
  CHECK_THAT(error_of(R"({"transport": {"congestion_control": "dcqcn"}})"),
             Catch::Contains("ecn_threshold_bytes"));
  CHECK_THAT(error_of(R"({"transport": {"dcqcn": {"g": 0.1}}})"),
             Catch::Contains("/engine/transport/dcqcn"));
  CHECK_THAT(error_of(R"({"switch": {"ecn_threshold_bytes": 1000},
                          "transport": {"congestion_control": "dcqcn", "dcqcn": {"gain": 1}}})"),
             Catch::Contains("/engine/transport/dcqcn"));
  CHECK_THAT(error_of(R"({"switch": {"pfc": {"classes": [1]}}})"),
             Catch::Contains("/engine/switch/pfc/classes/0"));
  CHECK_THAT(error_of(R"({"switch": {"pfc": {"xoff_bytes": 100, "xon_bytes": 200}}})"),
             Catch::Contains("/engine/switch/pfc/xon_bytes"));
  CHECK_THAT(error_of(R"({"switch": {"dynamic_threshold_alpha": 2}})"),
             Catch::Contains("buffer_sharing"));
  CHECK_THAT(error_of(R"({"transport": {"ack_every_packets": 0}})"),
             Catch::Contains("/engine/transport/ack_every_packets"));
  CHECK_THAT(error_of(R"({"transport": {"reliable": false, "ack_every_packets": 4}})"),
             Catch::Contains("/engine/transport/ack_every_packets"));
  CHECK_THAT(error_of(R"({"transport": {"priority": 1}})"),
             Catch::Contains("/engine/transport/priority"));
  CHECK_THAT(error_of(R"({"switch": {"priorities": 2, "dwrr_weights": [1, 1]}})"),
             Catch::Contains("scheduler"));
  CHECK_THAT(error_of(R"({"switch": {"buffer_bytes": 1000}})"),
             Catch::Contains("/engine/switch/buffer_bytes"));
  CHECK_THAT(error_of(R"({"transport": {"reliable": false, "loss_bound": 0.1}})"),
             Catch::Contains("/engine/transport/loss_bound"));
  CHECK_THAT(error_of(R"({"transport": {"loss_timeout_us": 20}})"),
             Catch::Contains("/engine/transport/loss_timeout_us"));
  CHECK_THAT(
      error_of(R"({"switch": {"priorities": 2}, "transport": {"priority": "by_magnitude"}})"),
      Catch::Contains("magnitude_top_fraction"));
  CHECK_THAT(error_of(R"({"transport": {"priority": "by_magnitude",
                                        "magnitude_top_fraction": 0.1}})"),
             Catch::Contains("switch.priorities"));
  CHECK_THAT(error_of(R"({"transport": {"magnitude_top_fraction": 0.1}})"),
             Catch::Contains("/engine/transport/magnitude_top_fraction"));
  CHECK_THAT(error_of(R"({"switch": {"priorities": 2}, "transport": {"priority": "by_magnitude",
                                        "magnitude_top_fraction": 1}})"),
             Catch::Contains("/engine/transport/magnitude_top_fraction"));
  CHECK_THAT(error_of(R"({"transport": {"magnitude_profile": [1, 2]}})"),
             Catch::Contains("/engine/transport/magnitude_profile"));
  CHECK_THAT(error_of(R"({"switch": {"priorities": 2}, "transport": {"priority": "by_magnitude",
                          "magnitude_top_fraction": 0.1, "magnitude_profile": [1, 0]}})"),
             Catch::Contains("/engine/transport/magnitude_profile/1"));
  CHECK_THAT(error_of(R"({"switch": {"priorities": 2}, "transport": {"priority": "by_magnitude",
                          "magnitude_top_fraction": 0.1, "magnitude_profile": []}})"),
             Catch::Contains("/engine/transport/magnitude_profile"));
  CHECK_THAT(error_of(R"({"transport": {"reliable": false, "rto_min_us": 5000}})"),
             Catch::Contains("/engine/transport/rto_min_us"));
  CHECK_THAT(error_of(R"({"transport": {"reliable": false, "congestion_control": "dctcp"}})"),
             Catch::Contains("/engine/transport/congestion_control"));
  CHECK_THAT(error_of(R"({"mtu": 4096})"), Catch::Contains("mtu_bytes"));
}

} // namespace
} // namespace ddlsim::sim::packet
