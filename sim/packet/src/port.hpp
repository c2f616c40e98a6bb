// Port: one directed link seen from its source vertex: the output queue in front of it
// (a control queue and N priority classes), the packet being serialized onto it, and its
// statistics. A switch's egress port, a NIC's, a GPU's NVLink or PCIe port are all Ports; what
// differs is their buffer and whether a full buffer drops (switch ports without PFC) or holds
// back the ports feeding it (lossless: ports inside servers, and switch ports with PFC).
#pragma once

#include "ddlsim/core/units.hpp"
#include "ddlsim/sim/huge_page_allocator.hpp"
#include "ddlsim/sim/packet/packet_spec.hpp"
#include "packet_pool.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ddlsim::sim::packet {

// One class's queue: an intrusive list of pool indices. (The port counts the queued bytes of
// all data classes; no decision reads a class's own byte count, so none is kept.)
struct ClassQueue {
  std::uint32_t head = kNil;
  std::uint32_t tail = kNil;
};

// Hot and cold: the first two cache lines hold everything a packet's crossing, arrival and
// transmit-done read or write with the control class and data classes 0-2 (the link, the
// queue totals, the flags, the waiter and source lists, the per-packet statistics, the queue
// heads; the opposite direction of a link is in Network::reverse_of); the lines after them hold
// what only some configurations touch (data classes 3-7, DWRR deficits, pacing, PFC accounting) and
// the drop and sample statistics. A port starts on a cache line, so a packet event touches two
// lines of a port. With 13,312 ports of 384 bytes at 1,024 GPUs (5 MiB) ports do not stay in
// the core's caches.
struct alignas(64) Port {
  // Line 0: the link and the queue.
  double ps_per_byte = 0;
  Picoseconds latency = 0;
  std::uint64_t limit = 0;      // bytes that may wait here
  std::uint64_t queued = 0;     // bytes waiting (the packet on the wire not included)
  std::uint64_t reserved = 0;   // bytes on the wire towards this port from lossless upstreams
  Picoseconds free_at = 0;      // when the packet being serialized has left
  std::uint32_t pool = kNil;    // switch ports with a shared buffer: their switch's pool
  std::uint32_t sources = kNil; // source ports: round-robin cursor over active messages
  bool tx_pending = false;      // a tx_done event is scheduled at free_at
  bool lossless = false;
  bool switch_port = false; // egress of a network switch (drops, ECN, samples)
  bool source = false;      // egress of a GPU: pulls new packets from its messages
  bool blocked = false;     // waiting for room at the next port
  std::uint8_t dwrr_class = 0;
  bool dwrr_fresh = true;
  // PFC: classes the next switch told this port to hold (bit per class).
  std::uint8_t paused = 0;
  // Line 1: the per-packet statistics, the waiters, the first queues.
  std::uint64_t tx_bytes = 0;
  std::uint64_t peak_queued = 0;
  std::uint32_t waiters = kNil;      // lossless ports blocked on this one, first blocked first:
  std::uint32_t waiters_tail = kNil; // woken in that order, they share the room round robin
  std::uint32_t next_waiter = kNil;  // link in the list of the port this one waits on
  std::array<ClassQueue, kMaxPriorities + 1> classes{}; // [0] control, [1 + c] data class c
  // Cold.
  std::array<std::int64_t, kMaxPriorities> deficit{}; // DWRR, per data class
  Picoseconds pace_at = -1; // source ports: a pace event is due then (-1: none)
  // The next switch's PFC ingress accounting for this link, kept here because it is per link:
  // bytes that came in by this link and still wait there, per class, and the classes paused.
  std::uint8_t pause_sent = 0;
  std::uint64_t xoff = 0;
  std::uint64_t xon = 0;
  std::uint64_t ingress_limit = 0; // xoff + headroom
  std::array<std::uint64_t, kMaxPriorities> ingress{};
  // Other statistics.
  std::uint64_t drops = 0;
  Picoseconds last_sample = -1;

  Picoseconds serialization(std::uint32_t bytes) const {
    return static_cast<Picoseconds>(static_cast<double>(bytes) * ps_per_byte + 0.5);
  }
  bool has_queued() const { return queued > 0 || classes[0].head != kNil; }
  bool fits(std::uint64_t bytes) const { return queued + reserved + bytes <= limit; }
};

static_assert(offsetof(Port, classes) + 4 * sizeof(ClassQueue) <= 128,
              "the hot part (through data class 2's queue) fills the first two cache lines");
static_assert(sizeof(Port) == 384, "six cache lines: update the size in the comment above");

// 13,312 ports at 1,024 GPUs: on huge pages, a port's first touch does not also miss the
// translation buffer.
using Ports = std::vector<Port, HugePageAllocator<Port>>;

inline std::size_t queue_index(const Packet& packet) {
  return packet.kind == PacketKind::data ? 1u + packet.priority : 0u;
}

// Appends packet `id` to its class queue. Control packets do not count against the buffer
// (switches keep headroom for them), so they are never dropped.
inline void enqueue(Port& port, PacketPool& pool, std::uint32_t id) {
  Packet& packet = pool[id];
  ClassQueue& q = port.classes[queue_index(packet)];
  packet.next = kNil;
  packet.prev = q.tail;
  if (q.tail == kNil)
    q.head = id;
  else
    pool[q.tail].next = id;
  q.tail = id;
  if (packet.kind == PacketKind::data) {
    port.queued += packet.bytes;
    if (port.queued > port.peak_queued) port.peak_queued = port.queued;
  }
}

inline void unlink(Port& port, PacketPool& pool, std::uint32_t id) {
  Packet& packet = pool[id];
  ClassQueue& q = port.classes[queue_index(packet)];
  if (packet.prev == kNil)
    q.head = packet.next;
  else
    pool[packet.prev].next = packet.next;
  if (packet.next == kNil)
    q.tail = packet.prev;
  else
    pool[packet.next].prev = packet.prev;
  if (packet.kind == PacketKind::data) port.queued -= packet.bytes;
}

// Whether the data classes are served by deficit weighted round robin (else strict priority).
inline bool dwrr(const SwitchSpec& spec) {
  return spec.scheduler != Scheduler::strict && spec.priorities > 1;
}

// The packet the scheduler serves next (without removing it), or kNil: control first, then the
// data classes by strict priority or deficit weighted round robin.
inline std::uint32_t peek_next(Port& port, const PacketPool& pool, const SwitchSpec& spec) {
  if (port.classes[0].head != kNil) return port.classes[0].head;
  if (port.queued == 0) return kNil;
  const int classes = spec.priorities;
  const unsigned paused = port.paused;
  if (!dwrr(spec)) {
    for (int c = 0; c < classes; ++c)
      if (port.classes[1 + c].head != kNil && !((paused >> c) & 1u))
        return port.classes[1 + c].head;
    return kNil;
  }
  // DWRR: a class visited afresh gets its quantum (weight x MTU-sized packets); it is served
  // while its deficit covers its head packet, then the turn passes on.
  constexpr std::int64_t kQuantum = 4096 + 64;
  for (int visits = 0; visits < 2 * classes + 2; ++visits) {
    const ClassQueue& q = port.classes[1 + port.dwrr_class];
    std::int64_t& deficit = port.deficit[port.dwrr_class];
    if (q.head == kNil) {
      deficit = 0;
    } else if (!((paused >> port.dwrr_class) & 1u)) { // a paused class keeps its deficit
      if (port.dwrr_fresh) {
        const std::uint32_t weight =
            spec.dwrr_weights.empty() ? 1 : spec.dwrr_weights[port.dwrr_class];
        deficit += kQuantum * static_cast<std::int64_t>(weight);
        port.dwrr_fresh = false;
      }
      if (deficit >= static_cast<std::int64_t>(pool[q.head].bytes)) return q.head;
    }
    port.dwrr_class = static_cast<std::uint8_t>((port.dwrr_class + 1) % classes);
    port.dwrr_fresh = true;
  }
  for (int c = 0; c < classes; ++c) // unreachable with positive weights; keeps it total
    if (port.classes[1 + c].head != kNil && !((paused >> c) & 1u)) return port.classes[1 + c].head;
  return kNil;
}

// Removes the packet peek_next returned and, under DWRR (the only reader of the deficits),
// charges it to its class's deficit.
inline void take(Port& port, PacketPool& pool, const SwitchSpec& spec, std::uint32_t id) {
  const Packet& packet = pool[id];
  if (packet.kind == PacketKind::data && dwrr(spec)) port.deficit[packet.priority] -= packet.bytes;
  unlink(port, pool, id);
}

// The queued data packet a full buffer gives up for an arriving packet, or kNil to drop the
// arrival itself. priority: the latest packet of the lowest class below the arrival's;
// loss_tolerant: the latest droppable packet, if the arrival is not droppable itself. Packets
// of PFC's lossless classes are never evicted.
inline std::uint32_t eviction_victim(const Port& port, const PacketPool& pool,
                                     const SwitchSpec& spec, const Packet& arriving) {
  if (spec.drop_policy == DropPolicy::priority) {
    for (int c = spec.priorities - 1; c > arriving.priority; --c)
      if (port.classes[1 + c].tail != kNil && !spec.pfc.lossless(c))
        return port.classes[1 + c].tail;
    return kNil;
  }
  if (spec.drop_policy == DropPolicy::loss_tolerant && !(arriving.flags & kDroppable)) {
    for (int c = spec.priorities - 1; c >= 0; --c)
      if (!spec.pfc.lossless(c))
        for (std::uint32_t id = port.classes[1 + c].tail; id != kNil; id = pool[id].prev)
          if (pool[id].flags & kDroppable) return id;
  }
  return kNil;
}

} // namespace ddlsim::sim::packet
