// PeerLinks: the socket side of one rank of the host backend. One non-blocking TCP connection per
// peer carries the wire protocol of host_backend.hpp: a receiver posts a receive and sends CTS;
// the sender sends DATA once it holds a CTS; the receiver sends ACK once the bytes are in (and
// reduced). Messages of each (peer, channel) pair carry sequence numbers, so the k-th send meets
// the k-th receive (rule 2 of step.hpp) across processes. The step interpreter (RankEngine) posts
// sends and receives and hears back through LinkEvents when each is done.
#pragma once

#include "ddlsim/collectives/call.hpp"
#include "ddlsim/collectives/step.hpp"
#include "ddlsim/collectives/step_runner.hpp"

#include "transport.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <poll.h>
#include <span>
#include <string>
#include <vector>

namespace ddlsim::real::host {

// What the socket side tells the step interpreter and asks of it. One call per message at most:
// a socket call costs far more.
class LinkEvents {
public:
  // A send's bytes were acknowledged by its receiver, or a receive's bytes are in (and reduced).
  virtual void transfer_done(coll::StepRef ref) = 0;
  // Whether a step waits (a dep or a cross-program wait) for started step `ref` to complete.
  virtual bool blocks(coll::StepRef ref) const = 0;
  // "rank R ch C step I (the step)".
  virtual std::string where(coll::StepRef ref) const = 0;
  // What the rank's steps wait for, for an error message.
  virtual std::string stuck() const = 0;
  // Throws the rank's failure, naming the rank.
  [[noreturn]] virtual void fail(const std::string& what) const = 0;

protected:
  ~LinkEvents() = default;
};

// A started send: what goes on the wire.
struct PostedSend {
  coll::StepRef ref;
  const std::byte* payload = nullptr;
  std::uint64_t bytes = 0;
};
// A started recv or recv_reduce: where its bytes go.
struct PostedReceive {
  coll::StepRef ref;
  bool reduce = false; // recv_reduce: dst = operand (op) incoming
  std::uint64_t bytes = 0;
  std::span<const std::byte> operand;
  std::span<std::byte> dst;
};

class PeerLinks {
public:
  // Takes ownership of `sockets` (one per rank, -1 for this rank's own).
  PeerLinks(std::vector<int> sockets, int channels, const coll::CollectiveCall& call,
            LinkEvents& events, std::chrono::milliseconds timeout, std::chrono::microseconds spin);
  ~PeerLinks();
  PeerLinks(const PeerLinks&) = delete;
  PeerLinks& operator=(const PeerLinks&) = delete;

  void post_send(int peer, int channel, const PostedSend& send);
  void post_receive(int peer, int channel, const PostedReceive& receive);
  // Whether `peer` closed its end (it finished, died or stopped).
  bool closed_by(int peer) const { return peers_[std::size_t(peer)].eof; }

  // Writes what it can, waits up to `wait_ms` for a message that unblocks a step, and handles
  // what arrived. Returns whether any byte moved.
  bool pump(int wait_ms);
  // Hands the acknowledgements still queued to the kernel (between iterations nobody services
  // the sockets), bounded by the timeout from `last_progress`.
  void flush_acks(Clock::time_point last_progress);
  // Flushes what peers still need, then closes every connection in order (half-close, read to
  // end of stream), bounded by the timeout.
  void finish();
  // Closes every socket at once.
  void drop_connections();

  // One line per send or receive in flight, for error messages.
  void describe_in_flight(std::vector<std::string>& lines) const;
  std::uint64_t bytes_sent() const { return bytes_sent_; }

private:
  // The state of one (peer, channel) pair, kept across iterations.
  struct ChannelLink {
    std::uint32_t credits = 0;            // CTS received and not yet used by a send
    std::deque<PostedSend> waiting_sends; // started sends without a CTS yet
    std::deque<coll::StepRef> unacked;    // sends on the wire, completed by the peer's ACK
    std::deque<PostedReceive> posted;     // receives whose CTS went out, in order
    std::uint32_t data_out = 0, data_in = 0, cts_out = 0, cts_in = 0, ack_out = 0, ack_in = 0;
  };
  struct Header {
    std::uint8_t type = 0;
    std::uint8_t pad = 0;
    std::uint16_t channel = 0;
    std::uint32_t seq = 0;
    std::uint64_t bytes = 0;
  };
  static_assert(sizeof(Header) == 16);
  struct OutItem {
    Header header;
    const std::byte* payload = nullptr;
    std::uint64_t sent = 0; // of sizeof(Header) + header.bytes (payload only for DATA)
  };
  struct Peer {
    int fd = -1;
    std::vector<ChannelLink> channels;
    std::deque<OutItem> out;
    // Incoming message being parsed.
    std::array<std::byte, sizeof(Header)> header_bytes{};
    std::size_t header_got = 0;
    bool in_payload = false;
    Header header;
    std::byte* payload = nullptr;
    std::uint64_t payload_got = 0, reduced = 0;
    std::vector<std::byte> staging; // recv_reduce: the incoming operand (or a window of it)
    bool windowed = false;          // staging is a window, reduced as it fills (not adasum)
    bool eof = false;
    bool half_closed = false;    // finish() sent our end of stream
    std::uint64_t low_water = 1; // the socket's SO_RCVLOWAT
  };

  void pump_sends(int peer, int channel);
  void enqueue(int peer, std::uint8_t type, int channel, std::uint32_t seq,
               const std::byte* payload, std::uint64_t bytes);
  // Fills wake_, per peer: how many incoming bytes are worth waking up for (SO_RCVLOWAT): 0
  // when nothing from it unblocks a step now, 1 for any message, the rest of a payload when only
  // that matters.
  void update_wake_bytes();
  bool read_peer(int peer);
  bool write_peer(int peer);
  void consume(int peer, const std::byte* data, std::size_t size);
  void on_header(int peer);
  // Where the next payload bytes of this peer's incoming DATA go, and how many fit there.
  std::span<std::byte> payload_room(Peer& peer);
  void on_payload_progress(int peer);
  void finish_receive(int peer);
  // Whether a step of ours still waits for something from that peer.
  bool needs(int peer_rank) const;

  coll::CollectiveCall call_;
  LinkEvents& events_;
  std::chrono::milliseconds timeout_;
  std::chrono::microseconds spin_;
  std::vector<Peer> peers_;
  std::vector<std::byte> inbox_;
  // pump's per-call state, kept so that the loop allocates nothing per wake-up.
  std::vector<pollfd> poll_fds_;
  std::vector<int> poll_owners_;
  std::vector<std::uint64_t> wake_;
  std::uint64_t bytes_sent_ = 0;
};

} // namespace ddlsim::real::host
