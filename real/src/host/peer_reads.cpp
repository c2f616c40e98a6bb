// The receiving half of PeerLinks: reads from the sockets, parses messages, lands payloads in
// their destination (or reduces them as they arrive) and reports finished transfers.
#include "peer_links.hpp"

#include "element_kernels.hpp"
#include "wire_protocol.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/socket.h>

namespace ddlsim::real::host {

using namespace wire;

bool PeerLinks::read_peer(int peer_rank) {
  Peer& peer = peers_[std::size_t(peer_rank)];
  bool progress = false;
  for (int round = 0; round < kReadsPerWakeup && peer.fd >= 0 && !peer.eof; ++round) {
    const std::uint64_t remaining = peer.in_payload ? peer.header.bytes - peer.payload_got : 0;
    ssize_t n;
    if (remaining >= kDirectReadBytes) {
      const std::span<std::byte> room = payload_room(peer);
      n = ::recv(peer.fd, room.data(), room.size(), MSG_DONTWAIT);
      if (n > 0) {
        peer.payload_got += std::uint64_t(n);
        on_payload_progress(peer_rank);
        progress = true;
        continue;
      }
    } else {
      n = ::recv(peer.fd, inbox_.data(), inbox_.size(), MSG_DONTWAIT);
      if (n > 0) {
        consume(peer_rank, inbox_.data(), std::size_t(n));
        progress = true;
        continue;
      }
    }
    if (n == 0) {
      // A peer that finished all its steps closes its end: harmless unless we still need it.
      peer.eof = true;
      if (needs(peer_rank))
        events_.fail("the connection to rank " + std::to_string(peer_rank) +
                     " closed (that rank died or stopped): " + events_.stuck());
      break;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
    events_.fail("receiving from rank " + std::to_string(peer_rank) + " failed (" +
                 std::strerror(errno) + ", that rank died or closed): " + events_.stuck());
  }
  return progress;
}

void PeerLinks::consume(int peer_rank, const std::byte* data, std::size_t size) {
  Peer& peer = peers_[std::size_t(peer_rank)];
  while (size > 0) {
    if (peer.in_payload) {
      const std::span<std::byte> room = payload_room(peer);
      const std::uint64_t take = std::min<std::uint64_t>(size, room.size());
      std::memcpy(room.data(), data, take);
      peer.payload_got += take;
      data += take;
      size -= take;
      on_payload_progress(peer_rank);
      continue;
    }
    const std::size_t take = std::min(size, sizeof(Header) - peer.header_got);
    std::memcpy(peer.header_bytes.data() + peer.header_got, data, take);
    peer.header_got += take;
    data += take;
    size -= take;
    if (peer.header_got == sizeof(Header)) {
      peer.header_got = 0;
      std::memcpy(&peer.header, peer.header_bytes.data(), sizeof(Header));
      on_header(peer_rank);
    }
  }
}

void PeerLinks::on_header(int peer_rank) {
  Peer& peer = peers_[std::size_t(peer_rank)];
  const Header& h = peer.header;
  const std::string from = "rank " + std::to_string(peer_rank);
  if (h.channel >= peer.channels.size() || h.type < kData || h.type > kAck)
    events_.fail(from + " sent a malformed message (type " + std::to_string(h.type) + ", channel " +
                 std::to_string(h.channel) + ")");
  ChannelLink& link = peer.channels[h.channel];
  const auto expect_seq = [&](std::uint32_t& counter) {
    if (h.seq != counter)
      events_.fail(from + " sent " + kind_name(h.type) + " #" + std::to_string(h.seq) + " on ch " +
                   std::to_string(h.channel) + ", expected #" + std::to_string(counter));
    ++counter;
  };
  if (h.type == kClearToSend) {
    expect_seq(link.cts_in);
    ++link.credits;
    return pump_sends(peer_rank, h.channel);
  }
  if (h.type == kAck) {
    expect_seq(link.ack_in);
    if (link.unacked.empty()) events_.fail(from + " acknowledged a send this rank never made");
    const coll::StepRef ref = link.unacked.front();
    link.unacked.pop_front();
    return events_.transfer_done(ref);
  }
  expect_seq(link.data_in);
  if (link.posted.empty())
    events_.fail(from + " sent data on ch " + std::to_string(h.channel) +
                 " before this rank cleared it to send");
  const PostedReceive& receive = link.posted.front();
  if (receive.bytes != h.bytes)
    events_.fail(events_.where(receive.ref) + ": " + from + " sent " + std::to_string(h.bytes) +
                 " B, the step expects " + std::to_string(receive.bytes) + " B");
  peer.in_payload = true;
  peer.payload_got = 0;
  peer.reduced = 0;
  peer.windowed = false;
  if (!receive.reduce) {
    peer.payload = receive.dst.data();
  } else {
    peer.windowed = call_.reduction != coll::Reduction::adasum; // adasum needs all of it
    const std::uint64_t staging =
        peer.windowed ? std::min(receive.bytes, kReduceWindowBytes) : receive.bytes;
    if (peer.staging.size() < staging) peer.staging.resize(staging);
    peer.payload = peer.staging.data();
  }
  on_payload_progress(peer_rank);
}

std::span<std::byte> PeerLinks::payload_room(Peer& peer) {
  const std::uint64_t remaining = peer.header.bytes - peer.payload_got;
  if (!peer.windowed) return {peer.payload + peer.payload_got, remaining};
  const std::uint64_t held = peer.payload_got - peer.reduced;
  return {peer.payload + held, std::min(remaining, std::uint64_t(peer.staging.size()) - held)};
}

void PeerLinks::on_payload_progress(int peer_rank) {
  Peer& peer = peers_[std::size_t(peer_rank)];
  const PostedReceive& receive = peer.channels[peer.header.channel].posted.front();
  if (receive.reduce && call_.reduction != coll::Reduction::adasum) {
    // Reduce what has arrived, whole elements at a time, while it is still in cache.
    const std::uint64_t e = coll::element_size(call_.dtype);
    // The window holds payload bytes [reduced, payload_got) from its start.
    const std::uint64_t upto = peer.payload_got / e * e;
    if (upto > peer.reduced) {
      const std::uint64_t from = peer.reduced, count = upto - from;
      coll::detail::combine(call_.reduction, call_.dtype, receive.operand.subspan(from, count),
                            std::span<const std::byte>(peer.staging).first(count),
                            receive.dst.subspan(from, count));
      // A partial element waits at the window's start for the rest of its bytes.
      std::memmove(peer.staging.data(), peer.staging.data() + count, peer.payload_got - upto);
      peer.reduced = upto;
    }
  }
  if (peer.payload_got == peer.header.bytes) finish_receive(peer_rank);
}

void PeerLinks::finish_receive(int peer_rank) {
  Peer& peer = peers_[std::size_t(peer_rank)];
  ChannelLink& link = peer.channels[peer.header.channel];
  const PostedReceive receive = link.posted.front();
  if (receive.reduce && call_.reduction == coll::Reduction::adasum)
    coll::detail::combine(call_.reduction, call_.dtype, receive.operand, peer.staging, receive.dst);
  peer.in_payload = false;
  link.posted.pop_front();
  enqueue(peer_rank, kAck, peer.header.channel, link.ack_out++, nullptr, 0);
  events_.transfer_done(receive.ref);
}

} // namespace ddlsim::real::host
