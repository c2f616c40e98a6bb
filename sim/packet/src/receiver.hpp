// Receiver: the receiving end of the network. A packet that reaches its destination GPU is
// delivered here: ACKs, NACKs and CNPs go to the sending side; data is marked in the message's
// bitmap. A receive completes when every packet arrived. Loss-tolerant (loss_bound > 0, DLCP's
// bounded loss tolerance), it may also complete without some: once 1 - loss_bound of the bytes
// arrived it arms a give-up timer, which fires loss_timeout after the latest new packet; the
// receive then completes with the rest missing, never resent. Missing packets that were dropped
// count as lost and accepted; ones still on their way (late) are counted apart and discarded
// when they come. The receiver answers data with ACKs (one per packet, or coalesced), with a NACK
// when a gap shows on an in-order (ECMP) path, and with a CNP for ECN-marked data under DCQCN.
// Control packets walk the data packet's path backwards.
#pragma once

#include "network.hpp"
#include "sender.hpp"

#include <algorithm>
#include <cstdint>

namespace ddlsim::sim::packet {

template <typename Engine> class Receiver {
public:
  // Packet `id` reached the GPU at the end of its path.
  void deliver(std::uint32_t id) {
    const Packet packet = net().pool[id];
    net().pool.release(id);
    --net().messages[packet.transfer].alive;
    switch (packet.kind) {
    case PacketKind::data:
      on_data(packet);
      break;
    case PacketKind::ack:
      engine().sender().on_ack(packet.transfer, packet);
      break;
    case PacketKind::nack:
      engine().sender().on_nack(packet.transfer, packet);
      break;
    case PacketKind::cnp:
      engine().congestion().on_cnp(packet.transfer);
      break;
    }
    engine().sender().maybe_free(packet.transfer);
  }

  // The give-up timer of a loss-tolerant receive: it completes with the missing bytes (within the
  // bound, which arming the timer checked) once no new packet came for loss_timeout.
  void on_loss_timeout(const TimerEvent& timer) {
    const std::uint32_t id = timer.message;
    Message& m = net().messages[id];
    if (timer.generation != m.receive_generation || m.receiver_done) return;
    if (const Picoseconds due = m.last_arrival + m.loss_timeout; due > net().now) {
      net().events.push(due, Event::loss_timeout(id, timer.generation));
      return;
    }
    m.receiver_done = true;
    ++m.receive_generation;
    PacketTiming& result = net().result;
    const std::uint64_t mtu = net().spec.mtu_bytes;
    std::uint64_t dropped = 0, late = 0;
    for (std::uint32_t s = 0; s < m.packets; ++s) {
      if (m.received_bits.test(s)) continue;
      const std::uint64_t payload =
          s + 1 < m.packets ? mtu : m.bytes - static_cast<std::uint64_t>(s) * mtu;
      (m.dropped_bits.test(s) ? dropped : late) += payload;
    }
    result.bytes_lost_accepted += dropped;
    result.bytes_late_discarded += late;
    if (m.bytes > 0)
      result.max_lost_fraction_ppm =
          std::max(result.max_lost_fraction_ppm, (dropped + late) * 1'000'000 / m.bytes);
    Packet last{};
    last.path_lo = m.last_path;
    last.seq = m.last_seq;
    engine().driver().receive_complete(id);
    Message& again = net().messages[id]; // receive_complete may have started new messages
    if (!net().spec.transport.reliable) return;
    // Tell the sender at once (what it has not had acknowledged is not wanted any more).
    if (net().spec.transport.ack_every_packets == 1) {
      send_control(id, last, PacketKind::ack, again.last_seq, 0, kComplete);
    } else {
      const auto logged = static_cast<std::uint32_t>(again.ack_log.size());
      send_control(id, last, PacketKind::ack, again.ack_sent, logged, kComplete);
      again.ack_sent = logged;
    }
  }

private:
  void on_data(const Packet& packet) {
    const std::uint32_t id = packet.transfer;
    Message& m = net().messages[id];
    PacketTiming& result = net().result;
    const TransportSpec& transport = net().spec.transport;
    bool gap = false;
    std::uint32_t gap_from = 0;
    const bool fresh = !m.received_bits.test(packet.seq);
    if (!m.received_bits.set(packet.seq)) {
      ++result.duplicates;
    } else {
      if (m.received++ == 0) m.first_arrival = net().now;
      m.received_payload += net().payload_of(packet);
      if (m.top(packet.seq)) ++m.top_received;
      m.last_arrival = net().now;
      m.last_seq = packet.seq;
      m.last_path = packet.path_lo;
      if (packet.seq + 1 < m.highest) ++result.reordered;
      // On an in-order path a gap means drops. A loss-tolerant receive asks for them only once
      // the packets missing so far exceed what its bound lets it go without. A by_magnitude
      // message is not in order on one path (its class-0 packets overtake the others at
      // strict-priority ports): a gap means nothing, its losses wait for the sender's timeout.
      if (packet.seq > m.highest && net().spec.load_balancing == LoadBalancing::ecmp &&
          !m.by_magnitude && (!m.droppable || missing_beyond_bound(m, packet.seq))) {
        gap = true;
        gap_from = m.highest;
      }
      m.highest = std::max(m.highest, packet.seq + 1);
    }
    if (!m.receiver_done) {
      if (m.received == m.packets) {
        m.receiver_done = true;
        ++m.receive_generation;
        engine().driver().receive_complete(id);
      } else if (m.droppable && !m.loss_timer_armed && m.received_payload >= m.needed_payload &&
                 m.top_received == m.top_packets) {
        m.loss_timer_armed = true;
        net().events.push(net().now + m.loss_timeout,
                          Event::loss_timeout(id, m.receive_generation));
      }
    }
    Message& again = net().messages[id]; // receive_complete may have started new messages
    if ((packet.flags & kEcn) && engine().congestion().cnp_due(again))
      send_control(id, packet, PacketKind::cnp, packet.seq, 0, 0);
    if (!transport.reliable) return;
    if (gap && !again.receiver_done)
      send_control(id, packet, PacketKind::nack, gap_from, packet.seq, 0);
    const std::uint8_t flags =
        static_cast<std::uint8_t>((packet.flags & kEcn) | (again.receiver_done ? kComplete : 0));
    const std::uint32_t every = transport.ack_every_packets;
    if (every == 1) {
      send_control(id, packet, PacketKind::ack, packet.seq, 0, flags);
      return;
    }
    // Coalesced: one ACK per `every` new packets, and at once when the receive completes or a
    // duplicate shows that the sender is resending.
    if (fresh) again.ack_log.push_back(packet.seq | ((packet.flags & kEcn) ? kLogEcn : 0));
    const auto logged = static_cast<std::uint32_t>(again.ack_log.size());
    if (logged - again.ack_sent < every && !again.receiver_done && fresh) return;
    if (logged == again.ack_sent && !again.receiver_done) return;
    send_control(id, packet, PacketKind::ack, again.ack_sent, logged, flags);
    again.ack_sent = logged;
  }

  // Whether the packets a loss-tolerant receive lacks below `seq` (which just arrived, on an
  // in-order path) are more bytes than its bound allows to be missing.
  bool missing_beyond_bound(const Message& m, std::uint32_t seq) const {
    const std::uint64_t missing = static_cast<std::uint64_t>(seq) + 1 - m.received;
    return missing * net().spec.mtu_bytes > m.bytes - m.needed_payload;
  }

  // A control packet for `data`, walking its path back from the receiver.
  void send_control(std::uint32_t message_id, const Packet& data, PacketKind kind,
                    std::uint32_t seq, std::uint32_t aux, std::uint8_t flags) {
    const std::uint32_t id = net().pool.allocate();
    std::size_t hops = 0;
    const topo::LinkId* path = net().messages[message_id].links(data.path_lo, hops);
    Packet& packet = net().pool[id];
    packet.transfer = message_id;
    packet.seq = seq;
    packet.aux = aux;
    packet.bytes = net().spec.control_bytes;
    packet.hop = static_cast<std::uint16_t>(hops - 1);
    packet.port = net().reverse_of[path[hops - 1]];
    packet.next_port = kNil;
    packet.in_port = kNil;
    packet.path_lo = data.path_lo;
    packet.path_hi = static_cast<std::uint16_t>(data.path_lo + 1);
    packet.kind = kind;
    packet.priority = 0;
    packet.flags = flags;
    packet.reverse = true;
    packet.hops = static_cast<std::uint16_t>(hops);
    packet.links = path;
    ++net().messages[message_id].alive;
    ++net().result.control_packets;
    enqueue(net().ports[packet.port], net().pool, id);
    engine().switch_ports().try_send(packet.port);
  }

  Engine& engine() { return static_cast<Engine&>(*this); }
  const Engine& engine() const { return static_cast<const Engine&>(*this); }
  Network& net() { return engine().network(); }
  const Network& net() const { return engine().network(); }
};

} // namespace ddlsim::sim::packet
