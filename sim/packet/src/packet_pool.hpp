// Packets and the pool they live in. A packet is a small record addressed by a 32-bit index;
// freed indices are reused, so memory follows the packets in flight and nothing is allocated
// per packet once the pool has grown to the peak.
#pragma once

#include "ddlsim/sim/huge_page_allocator.hpp"
#include "ddlsim/topologies/router.hpp"

#include <cstdint>
#include <vector>

namespace ddlsim::sim::packet {

inline constexpr std::uint32_t kNil = 0xffffffffu;
// Packet::next_port of an adaptively routed packet bound for a switch: the switch chooses its
// egress port when the packet arrives.
inline constexpr std::uint32_t kChooseOnArrival = kNil - 1;

// cnp: DCQCN's congestion notification, from the receiver of ECN-marked data to its sender.
enum class PacketKind : std::uint8_t { data, ack, nack, cnp };

enum PacketFlags : std::uint8_t {
  kEcn = 1,       // congestion experienced (set by a switch), echoed by the ACK
  kDroppable = 2, // loss-tolerant data: dropped first, never resent as droppable
  kComplete = 4,  // ACK: the receive has completed; the sender stops
};

// One cache line (64 bytes, aligned): the hot loop touches several per event, and a packet that
// straddled two lines (at 48 bytes, half of them did) cost two misses.
struct alignas(64) Packet {
  std::uint32_t transfer; // message it belongs to (whose paths it follows)
  std::uint32_t seq;      // data: packet index in the message; nack: first missing index
  std::uint32_t aux;      // nack: one past the last missing index
  std::uint32_t next;     // intrusive queue links (pool indices)
  std::uint32_t prev;
  std::uint32_t bytes;     // on the wire, header included
  std::uint32_t port;      // the port it is queued at or crossing
  std::uint32_t next_port; // the port after that (chosen when it starts crossing); kNil = deliver
  std::uint32_t in_port;   // PFC: the link it entered its switch by, while counted there
  std::uint16_t path_lo;   // candidate paths [path_lo, path_hi) consistent with the hops so far
  std::uint16_t path_hi;
  std::uint16_t hop; // index of the link it is queued for or crossing
  PacketKind kind;
  std::uint8_t priority; // data class (0 highest); control packets use their own queue
  std::uint8_t flags;
  bool reverse; // control packets walk their data path backwards
  // The links of path path_lo and their count while that is its only path (every packet but an
  // adaptive data packet with several paths open; else nullptr): a packet's next port is found
  // without loading its message, the miss that followed the packet's own.
  std::uint16_t hops;
  const topo::LinkId* links;
};

static_assert(sizeof(Packet) == 64);

class PacketPool {
public:
  std::uint32_t allocate() {
    if (free_.empty()) {
      packets_.emplace_back();
      return static_cast<std::uint32_t>(packets_.size() - 1);
    }
    const std::uint32_t id = free_.back();
    free_.pop_back();
    return id;
  }
  void release(std::uint32_t id) { free_.push_back(id); }
  Packet& operator[](std::uint32_t id) { return packets_[id]; }
  const Packet& operator[](std::uint32_t id) const { return packets_[id]; }
  std::size_t capacity() const { return packets_.size(); }
  std::size_t in_use() const { return packets_.size() - free_.size(); }

private:
  std::vector<Packet, HugePageAllocator<Packet>> packets_; // huge pages past 2 MiB
  std::vector<std::uint32_t> free_;
};

} // namespace ddlsim::sim::packet
