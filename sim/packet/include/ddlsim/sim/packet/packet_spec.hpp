// PacketEngineSpec: the options of the packet-level engine (`engine.type = "packet"`), as plain
// data, and their strict JSON parser.
//
//   "engine": {"type": "packet", "mtu_bytes": 4096, "header_bytes": 64,
//              "switch": {"buffer_bytes": "1MiB", "priorities": 2, "scheduler": "strict",
//                         "drop_policy": "tail", "ecn_threshold_bytes": 0, "pfc": false,
//                         "buffer_sharing": "per_port"},
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
enum class CongestionControl : std::uint8_t { none, dctcp, dcqcn };
// Where a switch's packet buffer lives: a fixed share per egress port, or one pool per switch
// that every port draws from under a dynamic threshold (Choudhury and Hahne).
enum class BufferSharing : std::uint8_t { per_port, shared };

std::string_view to_string(Scheduler scheduler);
std::string_view to_string(DropPolicy policy);
std::string_view to_string(LoadBalancing balancing);
std::string_view to_string(CongestionControl control);
std::string_view to_string(BufferSharing sharing);

inline constexpr int kMaxPriorities = 8;

// Priority flow control (IEEE 802.1Qbb) on switch ports. A switch counts, per ingress link and
// class, the bytes that came in on that link and still wait in its egress queues; above
// xoff_bytes it sends a PAUSE for that class back up the link, below xon_bytes a RESUME. The
// frame takes the reverse link's latency (after the packet being serialized there) to arrive;
// the upstream port then stops starting packets of that class. Meanwhile packets keep coming:
// xoff + headroom is all an ingress class may hold, and a lossless packet beyond it is dropped
// (too little headroom). Lossless classes bypass the egress port's drop policy.
struct PfcSpec {
  bool enabled = false;
  std::uint8_t lossless_classes = 0xff; // bit c: class c is lossless (default: all)
  std::uint64_t xoff_bytes = 0;         // 0 = a quarter of the port buffer
  std::uint64_t xon_bytes = 0;          // 0 = half of xoff
  // Per ingress link and class; -1 = from the link: 2 x (latency x bandwidth) + 2 packets + a
  // pause frame, what arrives between crossing xoff and the upstream port going quiet.
  std::int64_t headroom_bytes = -1;
  bool lossless(int priority) const { return enabled && ((lossless_classes >> priority) & 1u); }
};

struct SwitchSpec {
  // Per egress port of a network switch; a link's own buffer_bytes (topology) overrides it.
  std::uint64_t buffer_bytes = 1 << 20;
  int priorities = 1; // data classes; 0 is the highest
  Scheduler scheduler = Scheduler::strict;
  std::vector<std::uint32_t> dwrr_weights; // per class, only with dwrr (default all 1)
  DropPolicy drop_policy = DropPolicy::tail;
  std::uint64_t ecn_threshold_bytes = 0; // mark ECN above this queue depth; 0 = never
  PfcSpec pfc;
  BufferSharing buffer_sharing = BufferSharing::per_port;
  // shared: the pool of each switch (0 = buffer_bytes x its ports, the per-port total) and the
  // dynamic threshold: a port may queue up to alpha x (pool - bytes in the pool) bytes.
  std::uint64_t shared_buffer_bytes = 0;
  double dynamic_threshold_alpha = 1;
};

// DCQCN (Zhu et al., SIGCOMM 2015): the receiver (notification point) answers ECN-marked data
// with a congestion notification packet, at most one per flow per cnp_interval; the sender
// (reaction point) paces each queue pair at its current rate RC, cuts it on a CNP to
// RC x (1 - alpha/2) (remembering the target RT = old RC) and raises alpha = (1-g) alpha + g;
// alpha decays by (1-g) every alpha_timer without CNP. It recovers on a timer and a byte
// counter: each expiry moves RC halfway to RT (fast recovery, the first F expiries), then also
// raises RT by the additive step (once either count passed F) or by i x the hyper step (both
// passed F, i = expiries beyond F). Defaults are the paper's, except the hyper step (ours).
struct DcqcnSpec {
  double g = 1.0 / 256;
  Picoseconds cnp_interval = 50 * kPsPerUs;
  Picoseconds alpha_timer = 55 * kPsPerUs;
  Picoseconds rate_timer = 55 * kPsPerUs;
  std::uint64_t byte_counter = 10'000'000;
  int fast_recovery_steps = 5;                 // F
  double additive_bytes_per_second = 40e6 / 8; // R_AI 40 Mb/s
  double hyper_bytes_per_second = 400e6 / 8;   // R_HAI 400 Mb/s
  double min_bytes_per_second = 100e6 / 8;     // RC never below 100 Mb/s
};

struct TransportSpec {
  bool reliable = true; // ACKs, selective retransmission on NACK or timeout
  CongestionControl congestion_control = CongestionControl::none;
  // Retransmission timeout (no ACK progress for this long). Keep it above the worst queueing
  // delay (a full node buffer drains in buffer / NIC rate: 1 MiB at 25 Gb/s is 335 us), or
  // spurious timeouts resend packets that were only queued.
  Picoseconds rto = 1000 * kPsPerUs;
  // With rto_min > 0 the timer is estimated as TCP does (RFC 6298, "Computing TCP's
  // Retransmission Timer"): per sender-receiver pair (Linux caches it per destination,
  // tcp_metrics), one packet of a message timed at a time and never a resent one (Karn's rule),
  // SRTT and RTTVAR with gains 1/8 and 1/4, RTO = max(rto_min, SRTT + 4 RTTVAR), doubled at
  // every expiry (at most 60 s) until an ACK brings a new sample. `rto` is then the initial
  // RTO, used until the pair has its first sample. 0 (the default): `rto` is a fixed timer.
  Picoseconds rto_min = 0;
  std::uint32_t initial_window_packets = 16; // dctcp only
  DcqcnSpec dcqcn;                           // dcqcn only
  // One ACK per this many new data packets of a message (and at once when the receive
  // completes or a duplicate arrives). RoCE's RC transport lets one ACK acknowledge several
  // packets and NICs coalesce; 1 (the default) keeps one ACK per packet.
  std::uint32_t ack_every_packets = 1;
  // Loss-tolerant messages (DLCP's bounded loss tolerance): data packets are marked droppable;
  // a receive completes when every packet arrived, or when no new packet came for
  // loss_timeout and at most loss_bound of its bytes are missing (those are never resent).
  // 0 = every byte must arrive.
  double loss_bound = 0;
  // The receiver's give-up timer. Negative (the default): per message, the time to drain every
  // switch buffer on its path (the sum over its switch hops of buffer / link rate): a packet
  // still in flight can trail the one before it by at most its extra queueing, which a full
  // buffer at each hop bounds (strict priority can starve a low class for longer; DLCP's paper
  // gives no value, so this is ddlsim's bound). Keep it under rto, or the sender resends first.
  Picoseconds loss_timeout = -1;
  // Priority class of data packets: a constant, the program's channel (clamped to the last
  // class), or where the bytes land in the receiver's buffer ("by_offset": the first 1/N of the
  // buffer is class 0, the next class 1, ...). A gradient buffer laid out from the first layer
  // to the last makes by_offset DLCP's by-layer priority: the gradients the next forward pass
  // needs first travel first.
  // "by_layer" is by_offset reversed (the buffer's end is class 0): a training iteration lays
  // its gradient buffer out bucket after bucket in backward order, last layer first, so the
  // end holds the first layers, which the next forward pass needs first.
  // "by_magnitude" is DLCP's priority by gradient magnitude: in every message the packets that
  // carry the largest gradients, a share magnitude_top_fraction of them, are class 0 and never
  // droppable; the rest are the last class (droppable under a loss bound), and a loss-tolerant
  // receive waits for every class-0 packet. Which packets those are depends on the gradients'
  // values, which a Schedule does not carry: each packet is drawn high with that probability
  // (seeded per message and packet), uncorrelated with its position.
  enum class PriorityRule : std::uint8_t {
    constant,
    by_channel,
    by_offset,
    by_layer,
    by_magnitude
  };
  int priority = 0;
  PriorityRule priority_rule = PriorityRule::constant;
  double magnitude_top_fraction = 0; // by_magnitude only: (0, 1), no default (data-dependent)
  // by_magnitude: the gradients' RMS magnitude over the receiver's buffer, as relative scales of
  // equal shares of its bytes read as by_layer reads them (entry 0 is the buffer's end: for a
  // training iteration the first layers). Each message's top share is ceil(fraction x packets)
  // of its packets, those lying where the profile is highest; packets at the same scale are
  // picked at random (seeded per message and packet): a 4 KiB packet's RMS over ~1,000
  // gradients of one layer lies within a few percent of the layer's, so within a layer only
  // noise tells packets apart. Empty (the default): one scale everywhere, the top share drawn
  // at random from every packet of the message.
  std::vector<double> magnitude_profile{};
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
