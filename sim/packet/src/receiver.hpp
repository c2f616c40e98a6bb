// Receiver: the receiving end of the network. A packet that reaches its destination GPU is
// delivered here: ACKs, NACKs and CNPs go to the sending side; data is marked in the message's
// bitmap. A receive completes when every byte arrived, or, loss-tolerant (loss_bound > 0), once
// 1 - loss_bound of them did: the rest is never resent and counted as accepted loss. The
// receiver answers data with ACKs (one per packet, or coalesced), with a NACK when a gap shows
// on an in-order (ECMP) path, and with a CNP for ECN-marked data under DCQCN. Control packets
// walk the data packet's path backwards.
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
      if (packet.seq + 1 < m.highest) ++result.reordered;
      if (packet.seq > m.highest && net().spec.load_balancing == LoadBalancing::ecmp &&
          !m.droppable) {
        gap = true;
        gap_from = m.highest;
      }
      m.highest = std::max(m.highest, packet.seq + 1);
    }
    if (!m.receiver_done && m.received > 0 && m.received_payload >= m.needed_payload) {
      m.receiver_done = true;
      if (m.droppable) {
        const std::uint64_t lost = m.bytes - std::min(m.bytes, m.received_payload);
        result.bytes_lost_accepted += lost;
        if (m.bytes > 0)
          result.max_lost_fraction_ppm =
              std::max(result.max_lost_fraction_ppm, lost * 1'000'000 / m.bytes);
      }
      engine().driver().receive_complete(id);
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
