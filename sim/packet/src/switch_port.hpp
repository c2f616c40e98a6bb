// SwitchPorts: the ports of the network at work — store-and-forward crossing of a link, buffer
// admission (a port's own limit, or its switch's shared pool under the dynamic threshold), the
// drop policies, ECN marking, lossless back-pressure inside servers, and PFC between switches.
// The data of one port and its queue disciplines (priority classes, DWRR, eviction) are in
// port.hpp; load_balancer.hpp picks the next hop.
//
// `Engine` is the run that wires the elements (packet_engine.cpp): a template parameter, so
// the calls between elements resolve at compile time and inline.
#pragma once

#include "ddlsim/core/input_error.hpp"
#include "load_balancer.hpp"
#include "network.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace ddlsim::sim::packet {

template <typename Engine> class SwitchPorts {
public:
  void build() {
    const topo::Topology& topology = net().topology;
    const SwitchSpec& sw = net().sw;
    const PacketEngineSpec& spec = net().spec;
    Ports& ports = net().ports;
    ports.resize(topology.link_count());
    net().reverse_of.resize(topology.link_count());
    net().lossless.resize(topology.link_count());
    for (topo::LinkId id = 0; id < topology.link_count(); ++id) {
      const topo::Link& link = topology.link(id);
      Port& port = ports[id];
      net().reverse_of[id] = link.reverse;
      port.ps_per_byte = 1e12 / link.bandwidth_bytes_per_second;
      port.latency = link.latency;
      const topo::VertexKind kind = topology.vertex(link.src).kind;
      port.switch_port = kind == topo::VertexKind::network_switch;
      port.source = kind == topo::VertexKind::gpu;
      if (port.switch_port) {
        port.lossless = false; // PFC pauses by class (below), not by credit
        port.limit = link.buffer_bytes > 0 ? link.buffer_bytes : sw.buffer_bytes;
      } else {
        port.lossless = true;
        port.limit = spec.node_buffer_bytes;
      }
      net().lossless[id] = port.lossless ? 1 : 0;
      if (sw.pfc.enabled && topology.vertex(link.dst).kind == topo::VertexKind::network_switch) {
        // The next switch's ingress thresholds for this link.
        port.xoff = sw.pfc.xoff_bytes > 0 ? sw.pfc.xoff_bytes : sw.buffer_bytes / 4;
        port.xon = sw.pfc.xon_bytes > 0 ? std::min(sw.pfc.xon_bytes, port.xoff) : port.xoff / 2;
        const double in_flight = static_cast<double>(link.latency) / port.ps_per_byte;
        const std::uint64_t headroom = sw.pfc.headroom_bytes >= 0
                                           ? static_cast<std::uint64_t>(sw.pfc.headroom_bytes)
                                           : static_cast<std::uint64_t>(std::ceil(2 * in_flight)) +
                                                 2ull * (spec.mtu_bytes + spec.header_bytes) +
                                                 spec.control_bytes;
        port.ingress_limit = port.xoff + headroom;
      }
    }
    if (sw.buffer_sharing == BufferSharing::shared) {
      // One pool per switch: the given size, or the sum of its ports' own buffers.
      std::vector<std::uint32_t> pool_of(topology.vertex_count(), kNil);
      for (topo::LinkId id = 0; id < topology.link_count(); ++id) {
        Port& port = ports[id];
        if (!port.switch_port) continue;
        const topo::VertexId sw_vertex = topology.link(id).src;
        if (pool_of[sw_vertex] == kNil) {
          pool_of[sw_vertex] = static_cast<std::uint32_t>(pools_.size());
          pools_.push_back(SharedPool{sw.shared_buffer_bytes, 0});
        }
        port.pool = pool_of[sw_vertex];
        if (sw.shared_buffer_bytes == 0) pools_[port.pool].size += port.limit;
      }
    }
  }

  // Starts serializing the next packet of an idle port, if it has one and the next port (when
  // lossless) has room for it; otherwise the port waits on that next port. A packet's crossing
  // is one event, its arrival at the far end; a port gets a tx_done event (to start the next
  // packet when the current one has left) only while it has something waiting, so a packet that
  // finds its port idle costs one event per hop.
  //
  // A port has at most one tx_done pending. When a packet reaches a port at the very instant
  // its previous packet leaves, and the arrival is handled before that instant's tx_done, the
  // tx_done is still pending though the port is free: the next packet is left to it (it runs
  // at this same instant), instead of starting here and scheduling a second tx_done beside the
  // stale one. Each such pair re-armed itself at every later packet while the port stayed busy
  // (two tx_done per packet, then three, ...): 48.6 M of 51.7 M tx_done events of a 1,024-host
  // permutation started nothing.
  void try_send(std::uint32_t port_id) {
    Ports& ports = net().ports;
    PacketPool& pool = net().pool;
    const Picoseconds now = net().now;
    Port& port = ports[port_id];
    if (port.blocked || port.tx_pending) return;
    if (now < port.free_at) {
      if (port.has_queued() || port.sources != kNil) {
        port.tx_pending = true;
        net().events.push(port.free_at, Event::tx_done(port_id));
      }
      return;
    }
    std::uint32_t id = peek_next(port, pool, net().sw);
    const bool queued = id != kNil;
    if (!queued && port.source) id = engine().sender().pull(port_id);
    if (id == kNil) return;
    Packet& packet = pool[id];
    if (packet.next_port == kNil) packet.next_port = choose_next_port(packet);
    const std::uint32_t next = packet.next_port;
    const bool known = next < kChooseOnArrival; // a port (not the GPU, not chosen later)
    const bool credit = known && net().lossless[next] != 0;
    const std::uint32_t charge = packet.kind == PacketKind::data ? packet.bytes : 0;
    if (credit && !ports[next].fits(charge)) {
      if (!queued) enqueue(port, pool, id);
      port.blocked = true;
      port.next_waiter = kNil;
      Port& full = ports[next];
      if (full.waiters == kNil)
        full.waiters = port_id;
      else
        ports[full.waiters_tail].next_waiter = port_id;
      full.waiters_tail = port_id;
      return;
    }
    if (queued) {
      take(port, pool, net().sw, id);
      if (packet.kind == PacketKind::data) pool_remove(port, packet.bytes);
      release_ingress(packet);
    }
    if (credit) ports[next].reserved += charge;
    port.free_at = now + port.serialization(packet.bytes);
    net().last_tx_end = std::max(net().last_tx_end, port.free_at);
    port.tx_bytes += packet.bytes;
    net().events.push(
        port.free_at + port.latency,
        Event::arrival(id, known ? next : kNil, known ? credit_port_after(packet) : kNil));
    if (port.has_queued() || port.sources != kNil) { // none is pending (checked above)
      port.tx_pending = true;
      net().events.push(port.free_at, Event::tx_done(port_id));
    }
    if (queued) {
      sample(port_id);
      wake_waiters(port_id);
    }
  }

  void on_tx_done(std::uint32_t port_id) {
    Port& port = net().ports[port_id];
    port.tx_pending = false;
    const Picoseconds busy_until = port.free_at;
    try_send(port_id);
    ++net().result.tx_done_events;
    if (port.free_at == busy_until) ++net().result.idle_tx_done_events;
  }

  // A packet reached the far end of its link: delivered at its destination GPU, or admitted to
  // the next port's queue (or dropped there).
  void on_arrive(std::uint32_t id) {
    Packet& packet = net().pool[id];
    if (packet.next_port == kChooseOnArrival) packet.next_port = choose_on_arrival(packet);
    const std::uint32_t next = packet.next_port;
    if (next == kNil) {
      engine().receiver().deliver(id);
      return;
    }
    const std::uint32_t came_by = packet.port;
    packet.hop = static_cast<std::uint16_t>(packet.reverse ? packet.hop - 1 : packet.hop + 1);
    packet.port = next;
    packet.next_port = kNil;
    packet.in_port = kNil;
    Port& port = net().ports[next];
    const bool data = packet.kind == PacketKind::data;
    if (port.lossless) {
      if (data) port.reserved -= packet.bytes;
    } else if (data) {
      if (port.switch_port && net().sw.pfc.lossless(packet.priority)) {
        if (!admit_lossless(packet, id, came_by, next)) return;
      } else {
        while (!admits(port, packet.bytes)) {
          const std::uint32_t victim = eviction_victim(port, net().pool, net().sw, packet);
          if (victim == kNil) {
            drop(id, next);
            return;
          }
          unlink(port, net().pool, victim);
          pool_remove(port, net().pool[victim].bytes);
          drop(victim, next);
        }
      }
      if (net().sw.ecn_threshold_bytes > 0 && port.queued >= net().sw.ecn_threshold_bytes) {
        packet.flags |= kEcn;
        ++net().result.ecn_marks;
      }
      pool_add(port, packet.bytes);
    }
    enqueue(port, net().pool, id);
    sample(next);
    try_send(next);
  }

  // A PFC frame reached the port it addresses: the class stops, or resumes sending.
  void on_pfc_frame(const PfcFrameEvent& frame) {
    Port& port = net().ports[frame.port];
    const auto bit = static_cast<std::uint8_t>(1u << frame.priority);
    if (frame.pause) {
      port.paused |= bit;
      return;
    }
    port.paused &= static_cast<std::uint8_t>(~bit);
    try_send(frame.port);
  }

private:
  struct SharedPool {
    std::uint64_t size = 0;
    std::uint64_t used = 0;
  };

  // Whether a switch port's buffer takes `bytes` more data: its own limit, or the shared pool
  // under the dynamic threshold alpha x (free pool).
  bool admits(const Port& port, std::uint64_t bytes) const {
    if (port.pool == kNil) return port.queued + bytes <= port.limit;
    const SharedPool& pool = pools_[port.pool];
    if (pool.used + bytes > pool.size) return false;
    const double threshold =
        net().sw.dynamic_threshold_alpha * static_cast<double>(pool.size - pool.used);
    return static_cast<double>(port.queued + bytes) <= threshold;
  }
  void pool_add(const Port& port, std::uint64_t bytes) {
    if (port.pool != kNil) pools_[port.pool].used += bytes;
  }
  void pool_remove(const Port& port, std::uint64_t bytes) {
    if (port.pool != kNil) pools_[port.pool].used -= bytes;
  }

  // Lossless class at a switch: admitted by its ingress link's count (xoff + headroom), not by
  // the egress drop policy; crossing xoff pauses the class upstream. False when it was dropped.
  bool admit_lossless(Packet& packet, std::uint32_t id, std::uint32_t came_by, std::uint32_t next) {
    Port& in = net().ports[came_by];
    const std::size_t c = packet.priority;
    if (in.ingress[c] + packet.bytes > in.ingress_limit) {
      ++net().result.headroom_drops;
      drop(id, next);
      return false;
    }
    in.ingress[c] += packet.bytes;
    packet.in_port = came_by;
    if (in.ingress[c] > in.xoff && !((in.pause_sent >> c) & 1u)) {
      in.pause_sent |= static_cast<std::uint8_t>(1u << c);
      send_pfc_frame(came_by, static_cast<int>(c), true);
    }
    return true;
  }

  // A PFC frame from the switch at the end of link `port_id` back to that link's source port:
  // it waits for the packet being serialized on the reverse link, then crosses it.
  void send_pfc_frame(std::uint32_t port_id, int priority, bool pause) {
    const Port& reverse = net().ports[net().reverse_of[port_id]];
    const Picoseconds start = std::max(net().now, reverse.free_at);
    const Picoseconds arrival =
        start + reverse.serialization(net().spec.control_bytes) + reverse.latency;
    net().events.push(arrival, Event::pfc_frame(port_id, priority, pause));
    if (pause) {
      ++net().result.pfc_pauses;
      ++net().result.pfc_pauses_by_priority[static_cast<std::size_t>(priority)];
    }
  }

  // A lossless packet leaves its switch's queue: the ingress count of its link goes down, and
  // a paused class resumes below xon.
  void release_ingress(Packet& packet) {
    if (packet.in_port == kNil) return;
    Port& in = net().ports[packet.in_port];
    const std::size_t c = packet.priority;
    in.ingress[c] -= packet.bytes;
    packet.in_port = kNil;
    if (((in.pause_sent >> c) & 1u) && in.ingress[c] <= in.xon) {
      in.pause_sent &= static_cast<std::uint8_t>(~(1u << c));
      send_pfc_frame(static_cast<std::uint32_t>(&in - net().ports.data()), static_cast<int>(c),
                     false);
    }
  }

  void drop(std::uint32_t id, std::uint32_t port_id) {
    const Packet packet = net().pool[id];
    net().pool.release(id);
    ++net().ports[port_id].drops;
    PacketTiming& result = net().result;
    ++result.drops;
    result.bytes_dropped += net().payload_of(packet);
    if (packet.kind == PacketKind::data) {
      ++result.drops_by_priority[packet.priority];
      Message& m = net().messages[packet.transfer];
      if (m.droppable) m.dropped_bits.set(packet.seq);
    }
    if (!net().spec.transport.reliable) {
      const topo::Topology& topology = net().topology;
      throw InputError("/engine/transport/reliable",
                       "a packet was dropped at the port of link " +
                           topology.vertex(topology.link(port_id).src).name + " -> " +
                           topology.vertex(topology.link(port_id).dst).name +
                           " but the transport is unreliable; set \"reliable\": true, enable "
                           "\"pfc\", or give the switches more buffer");
    }
    --net().messages[packet.transfer].alive;
    engine().sender().maybe_free(packet.transfer);
  }

  void sample(std::uint32_t port_id) {
    Port& port = net().ports[port_id];
    if (!net().options.record_queues || !port.switch_port) return;
    const Picoseconds now = net().now;
    if (port.last_sample >= 0 && now - port.last_sample < net().spec.queue_sample_interval) return;
    port.last_sample = now;
    net().result.queue_samples.push_back(QueueSample{port_id, now, port.queued});
  }

  // The port a packet crosses after the one it is at, or kNil when that one ends at its
  // destination GPU; chosen when the packet starts crossing. Adaptive with several next hops
  // open: inside a server (a GPU or NIC picking among its links) by the queues now; at a switch
  // kChooseOnArrival, the switch picks when the packet arrives (choose_on_arrival).
  std::uint32_t choose_next_port(Packet& packet) {
    if (packet.links != nullptr) { // one path: its own links
      if (packet.reverse)
        return packet.hop == 0 ? kNil : net().reverse_of[packet.links[packet.hop - 1u]];
      const auto hop = static_cast<std::uint16_t>(packet.hop + 1);
      return hop >= packet.hops ? kNil : packet.links[hop];
    }
    const Message& m = net().messages[packet.transfer];
    std::size_t hops = 0;
    const topo::LinkId* path = m.links(packet.path_lo, hops);
    if (packet.reverse) return packet.hop == 0 ? kNil : net().reverse_of[path[packet.hop - 1u]];
    const std::uint16_t hop = static_cast<std::uint16_t>(packet.hop + 1);
    if (hop >= hops) return kNil;
    if (packet.path_hi - packet.path_lo > 1) {
      if (net().ports[path[hop]].switch_port) return kChooseOnArrival;
      return least_queued(*m.paths, hop, packet.path_lo, packet.path_hi, net().ports, net().now,
                          net().rng);
    }
    return path[hop];
  }

  // The port after the one `packet` is about to cross towards when that one gives credit, or
  // kNil (a switch port, the GPU, or not known yet): a prefetch hint for the arrival.
  std::uint32_t credit_port_after(const Packet& packet) const {
    if (packet.links == nullptr) return kNil;
    std::uint32_t after;
    if (packet.reverse) {
      if (packet.hop < 2) return kNil;
      after = net().reverse_of[packet.links[packet.hop - 2u]];
    } else {
      const std::uint32_t hop = packet.hop + 2u;
      if (hop >= packet.hops) return kNil;
      after = packet.links[hop];
    }
    return net().lossless[after] != 0 ? after : kNil;
  }

  // Adaptive routing at a switch: the packet that just arrived takes, among the egress ports of
  // its open paths, the one with the least data queued now (DRILL, Ghorbani et al., SIGCOMM
  // 2017: per-packet choice by local egress queue occupancy). Deciding here, not when the
  // packet left the upstream port a link latency earlier, lets each choice see the packets the
  // choices before it queued: chosen ahead, every packet on the wire saw the same momentarily
  // short queue and they all went there (see docs/engines.md, "Load balancing").
  std::uint32_t choose_on_arrival(Packet& packet) {
    const Message& m = net().messages[packet.transfer];
    const std::uint16_t hop = static_cast<std::uint16_t>(packet.hop + 1);
    return least_queued(*m.paths, hop, packet.path_lo, packet.path_hi, net().ports, net().now,
                        net().rng);
  }

  void wake_waiters(std::uint32_t port_id) {
    std::uint32_t waiter = net().ports[port_id].waiters;
    net().ports[port_id].waiters = net().ports[port_id].waiters_tail = kNil;
    while (waiter != kNil) {
      Port& port = net().ports[waiter];
      const std::uint32_t next = port.next_waiter;
      port.blocked = false;
      port.next_waiter = kNil;
      try_send(waiter);
      waiter = next;
    }
  }

  Engine& engine() { return static_cast<Engine&>(*this); }
  const Engine& engine() const { return static_cast<const Engine&>(*this); }
  Network& net() { return engine().network(); }
  const Network& net() const { return engine().network(); }
  std::vector<SharedPool> pools_; // shared switch buffers, one per switch
};

} // namespace ddlsim::sim::packet
