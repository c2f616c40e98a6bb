// PacketEngineSpec: the options of the packet-level engine (`engine.type = "packet"`), as plain
// data, and their strict JSON parser.
//
//   "engine": {"type": "packet", "mtu_bytes": 4096, "header_bytes": 64,
//              "switch": {"buffer_bytes": "1MiB", "priorities": 2, "scheduler": "strict",
//                         "drop_policy": "tail", "ecn_threshold_bytes": 0, "pfc": false},
//              "load_balancing": "ecmp",
//              "transport": {"reliable": true, "congestion_control": "none", "rto_us": 100,
//                            "loss_bound": 0, "priority": 0}}
#pragma once

#include "ddlsim/core/json_reader.hpp"
#include "ddlsim/core/units.hpp"

#include <cstdint>
#include <string_view>
#include <vector>

namespace ddlsim::sim::packet {

// How a port picks the next data packet among its priority classes (control packets first).
enum class Scheduler : std::uint8_t { strict, dwrr };
// What a switch port does when an arriving packet does not fit in its buffer.
enum class DropPolicy : std::uint8_t {
  tail,          // drop the arriving packet
  priority,      // evict queued packets of lower priority (latest first) to make room
  loss_tolerant, // evict queued droppable packets first (latest first), else drop the arrival
};
// How a packet's path is chosen among the equal-cost paths of its flow.
enum class LoadBalancing : std::uint8_t { ecmp, spray_random, spray_round_robin, adaptive };
enum class CongestionControl : std::uint8_t { none, dctcp };

std::string_view to_string(Scheduler scheduler);
std::string_view to_string(DropPolicy policy);
std::string_view to_string(LoadBalancing balancing);
std::string_view to_string(CongestionControl control);

inline constexpr int kMaxPriorities = 8;

struct SwitchSpec {
  // Per egress port of a network switch; a link's own buffer_bytes (topology) overrides it.
  std::uint64_t buffer_bytes = 1 << 20;
  int priorities = 1; // data classes; 0 is the highest
  Scheduler scheduler = Scheduler::strict;
  std::vector<std::uint32_t> dwrr_weights; // per class, only with dwrr (default all 1)
  DropPolicy drop_policy = DropPolicy::tail;
  std::uint64_t ecn_threshold_bytes = 0; // mark ECN above this queue depth; 0 = never
  bool pfc = false; // lossless: a full port pauses the ports feeding it instead of dropping
};

struct TransportSpec {
  bool reliable = true; // ACKs, selective retransmission on NACK or timeout
  CongestionControl congestion_control = CongestionControl::none;
  // Retransmission timeout (no ACK progress for this long). Keep it above the worst queueing
  // delay (a full node buffer drains in buffer / NIC rate: 1 MiB at 25 Gb/s is 335 us), or
  // spurious timeouts resend packets that were only queued.
  Picoseconds rto = 1000 * kPsPerUs;
  std::uint32_t initial_window_packets = 16; // dctcp only
  // Loss-tolerant messages: data packets are marked droppable and a receive completes once
  // 1 - loss_bound of its bytes arrived. 0 = every byte must arrive.
  double loss_bound = 0;
  // Priority class of data packets: a constant, the program's channel (clamped to the last
  // class), or where the bytes land in the receiver's buffer ("by_offset": the first 1/N of the
  // buffer is class 0, the next class 1, ...). A gradient buffer laid out from the first layer
  // to the last makes by_offset DLCP's by-layer priority: the gradients the next forward pass
  // needs first travel first.
  enum class PriorityRule : std::uint8_t { constant, by_channel, by_offset };
  int priority = 0;
  PriorityRule priority_rule = PriorityRule::constant;
};

struct PacketEngineSpec {
  std::uint32_t mtu_bytes = 4096;   // payload per packet
  std::uint32_t header_bytes = 64;  // added to every data packet on the wire
  std::uint32_t control_bytes = 64; // ACK / NACK packets
  // Egress buffer of the ports inside a server (NVLink, PCIe, NIC); these are lossless
  // (credit-based): a full port holds back the ports feeding it.
  std::uint64_t node_buffer_bytes = 1 << 20;
  SwitchSpec switch_spec;
  LoadBalancing load_balancing = LoadBalancing::ecmp;
  TransportSpec transport;
  Picoseconds queue_sample_interval = 1 * kPsPerUs; // trace counters: at most one per port per
};

// Reads the packet engine's keys from the `engine` object (the caller reads "type" and the
// engine-independent keys and calls finish()). Throws InputError naming the JSON pointer.
PacketEngineSpec parse_packet_engine_spec(JsonObject& engine);

} // namespace ddlsim::sim::packet
