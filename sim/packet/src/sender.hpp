// Sender: the sending side of the transport. A message's packets leave its GPU's source port
// round robin among the port's active messages, new ones in order, within the congestion
// window and the pacing rate (congestion_control.hpp) and unless PFC paused their class.
// Reliable delivery: ACKs mark packets in a bitmap; a NACK (a gap on an in-order path) or a
// timeout (no ACK progress for rto) queues the unacknowledged ones again, selectively; an ACK
// that says the receive completed stops the sender. It also owns the messages' lifetime: a
// message opens when its send meets its receive and is freed when both ends are done and none
// of its packets is left in the network. The fields of a message are in transport.hpp.
#pragma once

#include "congestion_control.hpp"
#include "ddlsim/core/input_error.hpp"
#include "load_balancer.hpp"
#include "magnitude_profile.hpp"
#include "network.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

namespace ddlsim::sim::packet {

// A coalescing receiver's log entry: the packet index, and this bit when it came ECN-marked.
constexpr std::uint32_t kLogEcn = 1u << 31;

// What opens a message: the send and receive steps it serves and what the schedule driver
// decided about them.
struct MessageSetup {
  StepRef send;
  StepRef recv;
  std::uint64_t bytes = 0;         // bytes on the wire (the protocol's, protocol_cost.hpp)
  std::uint64_t payload_bytes = 0; // the send's bytes
  std::uint64_t recv_bytes = 0;    // the receive's bytes
  std::int32_t send_rank = 0;
  std::int32_t recv_rank = 0;
  bool recv_reduce = false;
  bool reduce_in_flight = false; // the protocol's
  Picoseconds net_flush = 0;     // the receiver's proxy's flush of it (ProxyPosts), or 0
  Picoseconds hop_latency =
      0; // the protocol's beyond the path's latency, waited with the per-step overhead
  Picoseconds post_wait = 0; // until its sender's proxy has posted it (ProxyPosts), before both
  std::uint16_t channel = 0;
  std::uint8_t priority = 0;
  // by_magnitude: where the receive's first and last bytes lie in its buffer, as shares of the
  // buffer read as by_layer reads it (0 = the buffer's end, so from > to); 0 to 1 when unknown.
  double span_from = 0;
  double span_to = 1;
  const std::vector<topo::Path>* paths = nullptr; // non-empty
};

template <typename Engine> class Sender {
public:
  // Opens a message; its packets may go after the per-step overhead and the hop latency.
  void open(const MessageSetup& setup) {
    std::vector<Message>& messages = net().messages;
    std::uint32_t id;
    if (free_messages_.empty()) {
      id = static_cast<std::uint32_t>(messages.size());
      messages.emplace_back();
    } else {
      id = free_messages_.back();
      free_messages_.pop_back();
    }
    const std::vector<topo::Path>& paths = *setup.paths;
    Message& m = messages[id];
    m.send = setup.send;
    m.recv = setup.recv;
    m.bytes = setup.bytes;
    m.recv_bytes = setup.recv_bytes;
    m.send_rank = setup.send_rank;
    m.recv_rank = setup.recv_rank;
    m.recv_reduce = setup.recv_reduce;
    m.reduce_in_flight = setup.reduce_in_flight;
    m.net_flush = setup.net_flush;
    m.first_arrival = 0;
    m.paths = &paths;
    const std::size_t count = std::min<std::size_t>(paths.size(), 0xffff);
    m.ecmp = static_cast<std::uint16_t>(
        ecmp_choice(net().options.seed, setup.send_rank, setup.recv_rank, setup.channel, count));
    m.path_lo = 0;
    m.path_hi = static_cast<std::uint16_t>(count);
    m.ecmp_links = paths[m.ecmp].data();
    m.ecmp_hops = static_cast<std::uint16_t>(paths[m.ecmp].size());
    narrow(paths, m.ecmp, 0, m.path_lo, m.path_hi);
    m.sprayed = 0;
    m.port = paths[m.ecmp][0];
    const TransportSpec& transport = net().spec.transport;
    m.priority = setup.priority;
    m.droppable = transport.loss_bound > 0;
    const std::uint64_t mtu = net().spec.mtu_bytes;
    const std::uint64_t packets = std::max<std::uint64_t>(1, (m.bytes + mtu - 1) / mtu);
    if (packets >= kLogEcn) // indices leave the top bit for the coalesced-ACK log
      throw InputError("/engine/mtu_bytes",
                       "a message of " + format_bytes(m.bytes) + " needs " +
                           std::to_string(packets) +
                           " packets, more than the engine numbers; raise mtu_bytes");
    m.packets = static_cast<std::uint32_t>(packets);
    m.needed_payload = m.droppable ? static_cast<std::uint64_t>(std::ceil(
                                         static_cast<double>(m.bytes) * (1 - transport.loss_bound)))
                                   : m.bytes;
    m.next_new = m.acked = 0;
    m.acked_bits.reset(m.packets);
    m.resend_bits.reset(m.packets);
    m.resend.clear();
    m.resend_head = 0;
    m.sender_done = false;
    m.in_list = false;
    m.timer_armed = false;
    if (transport.rto_min > 0) {
      const std::uint64_t pair =
          (std::uint64_t(std::uint32_t(setup.send_rank)) << 32) | std::uint32_t(setup.recv_rank);
      const auto [slot, added] =
          rtt_pairs_.try_emplace(pair, static_cast<std::uint32_t>(rtt_.size()));
      if (added) rtt_.emplace_back();
      m.rtt_pair = slot->second;
    }
    m.timed_seq = kNil;
    m.backoffs = 0;
    m.line_rate = 1e12 / net().ports[m.port].ps_per_byte;
    Congestion<Engine>::reset(m, transport);
    m.ack_log.clear();
    m.ack_sent = 0;
    m.received = 0;
    m.received_payload = 0;
    m.highest = 0;
    m.received_bits.reset(m.packets);
    m.receiver_done = m.steps_done = false;
    m.by_magnitude = transport.priority_rule == TransportSpec::PriorityRule::by_magnitude;
    m.top_packets = m.top_received = 0;
    if (m.by_magnitude) {
      std::uint64_t key = mix64(net().options.seed ^ 0x6d61676e69747564ull); // "magnitud"
      for (const std::uint64_t part :
           {std::uint64_t(std::uint32_t(setup.send_rank)), std::uint64_t(setup.send.program),
            std::uint64_t(setup.send.index)})
        key = mix64(key ^ part);
      mark_top_packets(m, key, setup.span_from, setup.span_to);
    }
    m.loss_timer_armed = false;
    ++m.receive_generation;
    m.last_arrival = 0;
    m.last_seq = 0;
    m.last_path = m.ecmp;
    if (m.droppable) {
      m.dropped_bits.reset(m.packets);
      m.loss_timeout =
          transport.loss_timeout >= 0 ? transport.loss_timeout : buffer_drain_time(paths[m.ecmp]);
    }
    m.alive = 0;
    ++net().result.transfers;
    net().result.bytes_sent += setup.payload_bytes;
    if (const Picoseconds wait =
            setup.post_wait + net().options.per_step_overhead + setup.hop_latency;
        wait > 0)
      net().events.push(net().now + wait, Event::message_start(id));
    else
      activate(id);
  }

  // The message may have packets to send: it joins its source port's round robin.
  void activate(std::uint32_t id) {
    if (!net().messages[id].in_list && !net().messages[id].sender_done) list_insert(id);
    engine().switch_ports().try_send(net().messages[id].port);
  }

  // The next packet of the source port's messages, round robin; kNil when none may send (then
  // a paced message's next time is booked as a pace event).
  std::uint32_t pull(std::uint32_t port_id) {
    Port& port = net().ports[port_id];
    std::uint32_t first = port.sources;
    Picoseconds wake = kNever;
    while (port.sources != kNil) {
      const std::uint32_t id = port.sources;
      Message& m = net().messages[id];
      const Want want = wants(m, port.paused);
      if (want == Want::nothing) {
        const bool was_first = id == first;
        const std::uint32_t after = m.rr_next;
        list_remove(id);
        if (was_first) first = port.sources == kNil ? kNil : after;
        continue;
      }
      port.sources = m.rr_next;
      if (want == Want::window_full || want == Want::paced || want == Want::class_paused) {
        if (want == Want::paced) wake = std::min(wake, m.next_send_at);
        if (port.sources == first) break;
        continue;
      }
      return make_data_packet(id, want == Want::resend);
    }
    if (wake != kNever && (port.pace_at < 0 || wake < port.pace_at)) {
      port.pace_at = wake;
      net().events.push(wake, Event::pace(port_id));
    }
    return kNil;
  }

  void on_pace(std::uint32_t port_id) {
    if (net().ports[port_id].pace_at != net().now) return; // superseded by an earlier one
    net().ports[port_id].pace_at = -1;
    engine().switch_ports().try_send(port_id);
  }

  void on_timeout(const TimerEvent& timer) {
    const std::uint32_t id = timer.message;
    Message& m = net().messages[id];
    if (timer.generation != m.timer_generation || m.sender_done) return;
    const Picoseconds now = net().now;
    if (const Picoseconds rto = timeout_of(m); now - m.last_progress < rto) {
      net().events.push(m.last_progress + rto, Event::timeout(id, timer.generation));
      return;
    }
    for (std::uint32_t s = 0; s < m.next_new; ++s)
      if (!m.acked_bits.test(s) && m.resend_bits.set(s)) m.resend.push_back(s);
    m.last_progress = now;
    // RFC 6298 (5.5): back off; the timed packet is resent, so its ACK is no sample (Karn).
    if (net().spec.transport.rto_min > 0) {
      m.backoffs = std::min<std::uint32_t>(m.backoffs + 1, 31);
      m.timed_seq = kNil;
    }
    engine().congestion().on_timeout(m);
    net().events.push(now + timeout_of(m), Event::timeout(id, timer.generation));
    activate(id);
  }

  void on_ack(std::uint32_t id, const Packet& ack) {
    Message& m = net().messages[id];
    if (m.sender_done) return;
    if (net().spec.transport.ack_every_packets == 1) {
      acknowledge(m, ack.seq, (ack.flags & kEcn) != 0);
    } else {
      // A coalesced ACK covers entries [seq, aux) of the receiver's log (written before it
      // left, so reading them here tells the sender nothing it could not know).
      for (std::uint32_t i = ack.seq; i < ack.aux; ++i)
        acknowledge(m, m.ack_log[i] & ~kLogEcn, (m.ack_log[i] & kLogEcn) != 0);
    }
    if (ack.flags & kComplete) {
      m.sender_done = true;
      ++m.timer_generation;
      if (m.in_list) list_remove(id);
      return;
    }
    activate(id);
  }

  void on_nack(std::uint32_t id, const Packet& nack) {
    Message& m = net().messages[id];
    if (m.sender_done) return;
    for (std::uint32_t s = nack.seq; s < nack.aux && s < m.next_new; ++s)
      if (!m.acked_bits.test(s) && m.resend_bits.set(s)) m.resend.push_back(s);
    activate(id);
  }

  // Frees the message once its steps and its sender are done and no packet of it is left.
  void maybe_free(std::uint32_t id) {
    Message& m = net().messages[id];
    if (!m.steps_done || !m.sender_done || m.alive != 0 || m.paths == nullptr) return;
    if (m.in_list) list_remove(id);
    ++m.timer_generation;
    m.paths = nullptr;
    free_messages_.push_back(id);
  }

private:
  // by_magnitude: marks the message's top share (magnitude_profile.hpp).
  void mark_top_packets(Message& m, std::uint64_t key, double from, double to) {
    const TransportSpec& transport = net().spec.transport;
    const std::vector<std::uint32_t> top = top_packets(
        transport.magnitude_profile, transport.magnitude_top_fraction, m.packets, from, to, key);
    m.top_bits.reset(m.packets);
    for (const std::uint32_t seq : top) m.top_bits.set(seq);
    m.top_packets = static_cast<std::uint32_t>(top.size());
  }

  // A sender-receiver pair's round-trip estimate (RFC 6298); srtt < 0 until its first sample.
  struct RttEstimate {
    Picoseconds srtt = -1;
    Picoseconds rttvar = 0;
  };
  // RFC 6298 (2.5): an RTO above 60 s may be capped at 60 s.
  static constexpr Picoseconds kMaxRto = 60'000'000 * kPsPerUs;

  // The retransmission timeout of message m now: the fixed rto, or its pair's estimate (the
  // initial rto before a sample) doubled for each expiry since its last sample.
  Picoseconds timeout_of(const Message& m) const {
    const TransportSpec& transport = net().spec.transport;
    if (transport.rto_min <= 0) return transport.rto;
    const RttEstimate& e = rtt_[m.rtt_pair];
    Picoseconds rto =
        e.srtt < 0 ? transport.rto : std::max(transport.rto_min, e.srtt + 4 * e.rttvar);
    for (std::uint32_t i = 0; i < m.backoffs && rto < kMaxRto; ++i) rto *= 2;
    return std::min(rto, kMaxRto);
  }

  // RFC 6298 (2.2, 2.3): the first sample R sets SRTT = R, RTTVAR = R / 2; later ones
  // RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|, then SRTT = 7/8 SRTT + 1/8 R.
  void sample_rtt(Message& m, Picoseconds r) {
    RttEstimate& e = rtt_[m.rtt_pair];
    if (e.srtt < 0) {
      e.srtt = r;
      e.rttvar = r / 2;
    } else {
      e.rttvar = (3 * e.rttvar + (e.srtt > r ? e.srtt - r : r - e.srtt)) / 4;
      e.srtt = (7 * e.srtt + r) / 8;
    }
    m.backoffs = 0;
  }

  // The time to drain a full buffer at every switch hop of `path`: the most a packet can be
  // queued beyond the packets ahead of it (the default loss_timeout, packet_spec.hpp).
  Picoseconds buffer_drain_time(const topo::Path& path) const {
    Picoseconds total = 0;
    for (const topo::LinkId link : path) {
      const Port& port = net().ports[link];
      if (port.switch_port)
        total += static_cast<Picoseconds>(static_cast<double>(port.limit) * port.ps_per_byte + 0.5);
    }
    return std::max<Picoseconds>(total, 1);
  }

  // What a message's sender may do next. window_full, paced (DCQCN's rate) and class_paused
  // (PFC) mean it has packets but must wait.
  enum class Want : std::uint8_t { nothing, resend, send_new, window_full, paced, class_paused };

  Want wants(Message& m, std::uint8_t paused_classes) {
    if (m.sender_done) return Want::nothing;
    while (m.has_resend() && m.acked_bits.test(m.resend[m.resend_head])) {
      m.resend_bits.clear(m.resend[m.resend_head]);
      ++m.resend_head;
    }
    Want want = Want::nothing;
    if (m.has_resend())
      want = Want::resend;
    else if (m.next_new < m.packets)
      want =
          static_cast<double>(m.next_new - m.acked) < m.cwnd ? Want::send_new : Want::window_full;
    if (want == Want::resend || want == Want::send_new) {
      if ((paused_classes >> m.priority) & 1u) return Want::class_paused;
      if (m.next_send_at > net().now) return Want::paced;
    }
    return want;
  }

  std::uint32_t make_data_packet(std::uint32_t message_id, bool resend) {
    const std::uint32_t id = net().pool.allocate();
    Message& m = net().messages[message_id];
    PacketTiming& result = net().result;
    const PacketEngineSpec& spec = net().spec;
    std::uint32_t seq;
    if (resend) {
      seq = m.resend[m.resend_head++];
      m.resend_bits.clear(seq);
      ++result.retransmissions;
      if (seq == m.timed_seq) m.timed_seq = kNil; // Karn: a resent packet is never timed
    } else {
      seq = m.next_new++;
      if (spec.transport.rto_min > 0 && m.timed_seq == kNil) {
        m.timed_seq = seq;
        m.timed_at = net().now;
      }
    }
    const bool top = m.top(seq); // by_magnitude: one of the message's largest gradients
    const std::uint8_t priority = top ? 0 : m.priority;
    if (!resend) {
      ++result.data_packets;
      ++result.data_packets_by_priority[priority];
    }
    const std::uint64_t mtu = spec.mtu_bytes;
    const std::uint32_t payload = static_cast<std::uint32_t>(
        seq + 1 < m.packets ? mtu : m.bytes - static_cast<std::uint64_t>(seq) * mtu);
    Packet& packet = net().pool[id];
    packet.transfer = message_id;
    packet.seq = seq;
    packet.aux = 0;
    packet.bytes = payload + spec.header_bytes;
    packet.port = m.port;
    packet.next_port = kNil;
    packet.in_port = kNil;
    packet.hop = 0;
    packet.kind = PacketKind::data;
    packet.priority = priority;
    packet.flags = (m.droppable && !resend && !top) ? kDroppable : 0;
    packet.reverse = false;
    const std::uint32_t choices = m.path_hi - m.path_lo;
    switch (spec.load_balancing) {
    case LoadBalancing::ecmp:
      packet.path_lo = m.ecmp;
      break;
    case LoadBalancing::spray_random:
      net().rng = mix64(net().rng);
      packet.path_lo = static_cast<std::uint16_t>(m.path_lo + net().rng % choices);
      break;
    case LoadBalancing::spray_round_robin:
      packet.path_lo = static_cast<std::uint16_t>(m.path_lo + m.sprayed++ % choices);
      break;
    case LoadBalancing::adaptive:
      packet.path_lo = m.path_lo;
      packet.path_hi = m.path_hi;
      break;
    }
    if (spec.load_balancing != LoadBalancing::adaptive)
      packet.path_hi = static_cast<std::uint16_t>(packet.path_lo + 1);
    if (packet.path_hi - packet.path_lo == 1) {
      std::size_t hops = 0;
      packet.links = m.links(packet.path_lo, hops);
      packet.hops = static_cast<std::uint16_t>(hops);
    } else {
      packet.links = nullptr;
      packet.hops = 0;
    }
    ++m.alive;
    if (m.rate < m.line_rate) engine().congestion().on_send(m, packet.bytes);
    if (!spec.transport.reliable) {
      if (m.next_new == m.packets) m.sender_done = true;
    } else if (!m.timer_armed) {
      m.timer_armed = true;
      m.last_progress = net().now;
      net().events.push(net().now + timeout_of(m), Event::timeout(message_id, m.timer_generation));
    }
    return id;
  }

  void acknowledge(Message& m, std::uint32_t seq, bool marked) {
    if (!m.acked_bits.set(seq)) return;
    ++m.acked;
    m.last_progress = net().now;
    if (seq == m.timed_seq) {
      sample_rtt(m, net().now - m.timed_at);
      m.timed_seq = kNil;
    }
    engine().congestion().on_ack(m, marked);
  }

  // The source port's round-robin list of messages with something to send.
  void list_insert(std::uint32_t id) {
    std::vector<Message>& messages = net().messages;
    Message& m = messages[id];
    Port& port = net().ports[m.port];
    m.in_list = true;
    if (port.sources == kNil) {
      m.rr_prev = m.rr_next = id;
      port.sources = id;
      return;
    }
    const std::uint32_t head = port.sources;
    const std::uint32_t tail = messages[head].rr_prev;
    m.rr_prev = tail;
    m.rr_next = head;
    messages[tail].rr_next = id;
    messages[head].rr_prev = id;
  }
  void list_remove(std::uint32_t id) {
    std::vector<Message>& messages = net().messages;
    Message& m = messages[id];
    Port& port = net().ports[m.port];
    m.in_list = false;
    if (m.rr_next == id) {
      port.sources = kNil;
      return;
    }
    messages[m.rr_prev].rr_next = m.rr_next;
    messages[m.rr_next].rr_prev = m.rr_prev;
    if (port.sources == id) port.sources = m.rr_next;
  }

  Engine& engine() { return static_cast<Engine&>(*this); }
  const Engine& engine() const { return static_cast<const Engine&>(*this); }
  Network& net() { return engine().network(); }
  const Network& net() const { return engine().network(); }
  std::vector<std::uint32_t> free_messages_;
  std::vector<RttEstimate> rtt_;                               // per sender-receiver pair
  std::unordered_map<std::uint64_t, std::uint32_t> rtt_pairs_; // (send rank, recv rank) -> slot
};

} // namespace ddlsim::sim::packet
