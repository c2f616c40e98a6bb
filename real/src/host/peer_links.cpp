#include "peer_links.hpp"

#include "wire_protocol.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

namespace ddlsim::real::host {

using namespace wire;

PeerLinks::PeerLinks(std::vector<int> sockets, int channels, const coll::CollectiveCall& call,
                     LinkEvents& events, std::chrono::milliseconds timeout,
                     std::chrono::microseconds spin)
    : call_(call), events_(events), timeout_(timeout), spin_(spin), inbox_(kInboxBytes) {
  peers_.resize(sockets.size());
  for (std::size_t p = 0; p < sockets.size(); ++p) {
    peers_[p].fd = sockets[p];
    peers_[p].channels.resize(std::size_t(channels));
  }
}

PeerLinks::~PeerLinks() {
  drop_connections();
}

void PeerLinks::post_send(int peer, int channel, const PostedSend& send) {
  peers_[std::size_t(peer)].channels[std::size_t(channel)].waiting_sends.push_back(send);
  pump_sends(peer, channel);
}

void PeerLinks::post_receive(int peer, int channel, const PostedReceive& receive) {
  ChannelLink& link = peers_[std::size_t(peer)].channels[std::size_t(channel)];
  link.posted.push_back(receive);
  enqueue(peer, kClearToSend, channel, link.cts_out++, nullptr, 0);
}

void PeerLinks::drop_connections() {
  for (Peer& peer : peers_)
    if (peer.fd >= 0) {
      ::close(peer.fd);
      peer.fd = -1;
    }
}

void PeerLinks::flush_acks(Clock::time_point last_progress) {
  for (;;) {
    bool pending = false;
    for (std::size_t p = 0; p < peers_.size(); ++p)
      if (peers_[p].fd >= 0 && !peers_[p].out.empty()) {
        if (write_peer(int(p))) last_progress = Clock::now();
        pending |= !peers_[p].out.empty();
      }
    if (!pending) return;
    if (Clock::now() - last_progress > timeout_)
      events_.fail("could not hand the last acknowledgements to the kernel within " +
                   std::to_string(timeout_.count()) + " ms");
    pump(10);
  }
}

bool PeerLinks::needs(int peer_rank) const {
  const Peer& peer = peers_[std::size_t(peer_rank)];
  if (peer.in_payload || peer.header_got > 0) return true;
  for (const ChannelLink& link : peer.channels)
    if (!link.waiting_sends.empty() || !link.unacked.empty() || !link.posted.empty()) return true;
  return false;
}

void PeerLinks::pump_sends(int peer_rank, int channel) {
  ChannelLink& link = peers_[std::size_t(peer_rank)].channels[std::size_t(channel)];
  while (link.credits > 0 && !link.waiting_sends.empty()) {
    const PostedSend send = link.waiting_sends.front();
    link.waiting_sends.pop_front();
    --link.credits;
    enqueue(peer_rank, kData, channel, link.data_out++, send.payload, send.bytes);
    bytes_sent_ += send.bytes;
    link.unacked.push_back(send.ref);
  }
}

void PeerLinks::enqueue(int peer_rank, std::uint8_t type, int channel, std::uint32_t seq,
                        const std::byte* payload, std::uint64_t bytes) {
  OutItem item;
  item.header.type = type;
  item.header.channel = std::uint16_t(channel);
  item.header.seq = seq;
  item.header.bytes = bytes;
  item.payload = payload;
  peers_[std::size_t(peer_rank)].out.push_back(item);
}

bool PeerLinks::pump(int wait_ms) {
  std::vector<pollfd>& fds = poll_fds_;
  std::vector<int>& owners = poll_owners_;
  fds.clear();
  owners.clear();
  bool progress = false;
  // Write first without waiting: most sockets have room.
  for (std::size_t p = 0; p < peers_.size(); ++p)
    if (peers_[p].fd >= 0 && !peers_[p].out.empty()) progress |= write_peer(int(p));
  // Sleep only on the sockets whose next message unblocks a step: a wake-up costs a wait in the
  // run queue, which on a loaded machine is most of a step's time (the rest are read in passing).
  update_wake_bytes();
  const std::vector<std::uint64_t>& wake = wake_;
  for (std::size_t p = 0; p < peers_.size(); ++p) {
    if (peers_[p].fd < 0) continue;
    short events = peers_[p].eof || wake[p] == 0 ? 0 : POLLIN;
    if (events && wake[p] != peers_[p].low_water) {
      const int bytes = int(wake[p]);
      if (::setsockopt(peers_[p].fd, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof bytes) == 0)
        peers_[p].low_water = wake[p];
    }
    if (!peers_[p].out.empty()) events |= POLLOUT;
    if (events == 0) continue;
    fds.push_back({peers_[p].fd, events, 0});
    owners.push_back(int(p));
  }
  if (fds.empty()) return progress;
  int n = ::poll(fds.data(), fds.size(), 0);
  if (n == 0 && !progress && wait_ms > 0) {
    const auto spin_until = Clock::now() + spin_;
    while (n == 0 && Clock::now() < spin_until) n = ::poll(fds.data(), fds.size(), 0);
    if (n == 0) n = ::poll(fds.data(), fds.size(), wait_ms);
  }
  if (n < 0) {
    if (errno == EINTR) return progress;
    events_.fail(std::string("poll: ") + std::strerror(errno));
  }
  for (std::size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents & (POLLIN | POLLERR | POLLHUP)) progress |= read_peer(owners[i]);
    if (fds[i].revents & POLLOUT) progress |= write_peer(owners[i]);
  }
  // Awake anyway: take what the other sockets hold (acknowledgements, clears to send).
  for (std::size_t p = 0; p < peers_.size(); ++p)
    if (peers_[p].fd >= 0 && !peers_[p].eof && wake[p] == 0) progress |= read_peer(int(p));
  return progress;
}

void PeerLinks::update_wake_bytes() {
  std::vector<std::uint64_t>& wake = wake_;
  wake.assign(peers_.size(), 0);
  bool any = false;
  const auto blocks = [this](const coll::StepRef& ref) { return events_.blocks(ref); };
  for (std::size_t p = 0; p < peers_.size(); ++p) {
    const Peer& peer = peers_[p];
    bool control = false; // a CTS or ACK from this peer would unblock a step
    bool data = peer.header_got > 0;
    for (const ChannelLink& link : peer.channels) {
      control = control || !link.waiting_sends.empty() ||
                std::any_of(link.unacked.begin(), link.unacked.end(), blocks);
      data = data || !link.posted.empty();
    }
    if (control || (data && !peer.in_payload)) {
      wake[p] = 1;
    } else if (peer.in_payload) {
      // Only the rest of this payload matters: sleep until all of it is in (the kernel still
      // wakes us early when its receive buffer fills).
      wake[p] = std::min<std::uint64_t>(peer.header.bytes - peer.payload_got, kMaxWakeBytes);
    }
    any = any || wake[p] > 0;
  }
  // Nothing blocks on a particular peer (the last acknowledgements, between iterations): all are.
  if (!any) std::fill(wake.begin(), wake.end(), 1);
}

bool PeerLinks::write_peer(int peer_rank) {
  Peer& peer = peers_[std::size_t(peer_rank)];
  bool progress = false;
  for (int round = 0; round < kWritesPerWakeup && !peer.out.empty(); ++round) {
    iovec iov[kIovecs];
    int count = 0;
    for (auto it = peer.out.begin(); it != peer.out.end() && count + 2 <= kIovecs; ++it) {
      const std::uint64_t payload = it->header.type == kData ? it->header.bytes : 0;
      if (it->sent < sizeof(Header)) {
        iov[count++] = {reinterpret_cast<char*>(&it->header) + it->sent, sizeof(Header) - it->sent};
        if (payload > 0) iov[count++] = {const_cast<std::byte*>(it->payload), payload};
      } else {
        const std::uint64_t done = it->sent - sizeof(Header);
        iov[count++] = {const_cast<std::byte*>(it->payload) + done, payload - done};
      }
    }
    msghdr message{};
    message.msg_iov = iov;
    message.msg_iovlen = std::size_t(count);
    const ssize_t n = ::sendmsg(peer.fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
      events_.fail("sending to rank " + std::to_string(peer_rank) + " failed (" +
                   std::strerror(errno) + ", rank " + std::to_string(peer_rank) +
                   " died or closed): " + events_.stuck());
    }
    progress = n > 0;
    auto written = std::uint64_t(n);
    while (written > 0) {
      OutItem& item = peer.out.front();
      const std::uint64_t total =
          sizeof(Header) + (item.header.type == kData ? item.header.bytes : 0);
      const std::uint64_t take = std::min(written, total - item.sent);
      item.sent += take;
      written -= take;
      if (item.sent == total) peer.out.pop_front();
    }
  }
  return progress;
}

void PeerLinks::finish() {
  // Everything peers still need from us is queued: flush it, then half-close and read to the end
  // of every stream, so that no connection is torn down while a peer still reads from it.
  auto last_progress = Clock::now();
  for (;;) {
    bool pending = false;
    for (std::size_t p = 0; p < peers_.size(); ++p) {
      Peer& peer = peers_[p];
      if (peer.fd < 0) continue;
      if (!peer.out.empty()) {
        if (write_peer(int(p))) last_progress = Clock::now();
      }
      if (!peer.out.empty()) {
        pending = true;
        continue;
      }
      if (!peer.half_closed) {
        ::shutdown(peer.fd, SHUT_WR);
        peer.half_closed = true;
      }
      char sink[256];
      const ssize_t n = ::recv(peer.fd, sink, sizeof sink, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        ::close(peer.fd);
        peer.fd = -1;
        last_progress = Clock::now();
        continue;
      }
      pending = true;
    }
    if (!pending) return;
    if (Clock::now() - last_progress > timeout_)
      events_.fail("closing the connections: a peer did not close its end within " +
                   std::to_string(timeout_.count()) + " ms");
    std::vector<pollfd> fds;
    for (const Peer& peer : peers_)
      if (peer.fd >= 0) fds.push_back({peer.fd, short(peer.out.empty() ? POLLIN : POLLOUT), 0});
    ::poll(fds.data(), fds.size(), 100);
  }
}

void PeerLinks::describe_in_flight(std::vector<std::string>& lines) const {
  for (std::size_t p = 0; p < peers_.size(); ++p) {
    const Peer& peer = peers_[p];
    for (std::size_t c = 0; c < peer.channels.size(); ++c) {
      const ChannelLink& link = peer.channels[c];
      for (const PostedSend& send : link.waiting_sends)
        lines.push_back(events_.where(send.ref) + " waits for rank " + std::to_string(p) +
                        " to post the receive");
      for (const coll::StepRef& ref : link.unacked)
        lines.push_back(events_.where(ref) + " waits for rank " + std::to_string(p) +
                        " to acknowledge its bytes");
      for (const PostedReceive& receive : link.posted) {
        const bool arriving =
            peer.in_payload && peer.header.channel == c && &receive == &link.posted.front();
        lines.push_back(events_.where(receive.ref) + " waits for bytes from rank " +
                        std::to_string(p) +
                        (arriving ? " (" + std::to_string(peer.payload_got) + " of " +
                                        std::to_string(peer.header.bytes) + " B arrived)"
                                  : " (none arrived)"));
      }
    }
  }
}

} // namespace ddlsim::real::host
