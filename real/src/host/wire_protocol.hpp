// The host backend's wire format (message types) and the bounds PeerLinks keeps its I/O within;
// shared by its sending and its receiving half.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ddlsim::real::host::wire {

enum MessageType : std::uint8_t { kData = 1, kClearToSend = 2, kAck = 3 };

constexpr std::size_t kInboxBytes = 256 << 10;
// Payload reads of at least this size go straight into the destination, not through the inbox.
constexpr std::uint64_t kDirectReadBytes = 64 << 10;
// Bounds on the work of one wake-up per peer, so that no socket starves the others.
constexpr int kReadsPerWakeup = 32;
constexpr int kWritesPerWakeup = 32;
constexpr int kIovecs = 64;
// A streamed recv_reduce lands in a staging window of this size and is reduced from there while
// the window is still in the core's L2 cache (a whole-payload staging buffer of a few MiB is
// not: the reduction then reads it back from memory).
constexpr std::uint64_t kReduceWindowBytes = 256 << 10;
// Largest SO_RCVLOWAT asked for (the kernel caps it at half the receive buffer anyway).
constexpr std::uint64_t kMaxWakeBytes = 4 << 20;

inline std::string kind_name(std::uint8_t type) {
  return type == kData ? "DATA" : type == kClearToSend ? "CTS" : type == kAck ? "ACK" : "?";
}

} // namespace ddlsim::real::host::wire
