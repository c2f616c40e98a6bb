// Message: the transport state of one send-receive pair, both ends in one record, as the
// elements that work on it read and write it: the sending side (sender.hpp: packets numbered
// 0..packets-1, an ACK bitmap, the queue of packets to send again), the congestion control
// (congestion_control.hpp: DCTCP's window, DCQCN's rate), and the receiving side (receiver.hpp:
// a bitmap of the packets it has, done when every packet arrived or, loss-tolerant, when its
// give-up timer fired with at most loss_bound of the bytes missing).
#pragma once

#include "ddlsim/core/units.hpp"
#include "ddlsim/topologies/ecmp.hpp"
#include "ddlsim/topologies/router.hpp"

#include <cstdint>
#include <vector>

namespace ddlsim::sim::packet {

struct StepRef {
  std::uint32_t program;
  std::uint32_t index;
};

class Bitmap {
public:
  void reset(std::uint32_t bits) { words_.assign((bits + 63) / 64, 0); }
  bool test(std::uint32_t i) const { return (words_[i >> 6] >> (i & 63)) & 1u; }
  // Sets bit i; returns whether it was clear.
  bool set(std::uint32_t i) {
    std::uint64_t& word = words_[i >> 6];
    const std::uint64_t mask = std::uint64_t{1} << (i & 63);
    const bool was_clear = (word & mask) == 0;
    word |= mask;
    return was_clear;
  }
  void clear(std::uint32_t i) { words_[i >> 6] &= ~(std::uint64_t{1} << (i & 63)); }

private:
  std::vector<std::uint64_t> words_;
};

struct Message {
  // The steps it serves (rendezvous of a send with its receive).
  StepRef send{};
  StepRef recv{};
  std::uint64_t bytes = 0;      // sent bytes
  std::uint64_t recv_bytes = 0; // the receive's bytes (reduced by a recv_reduce)
  std::int32_t send_rank = 0;
  std::int32_t recv_rank = 0;
  bool recv_reduce = false;
  bool reduce_in_flight = false; // the protocol's (protocol_cost.hpp): reduce from first_arrival
  Picoseconds net_flush = 0;     // its receiver's proxy flushes it for this long (ProxyPosts)
  Picoseconds first_arrival = 0; // when the first data packet reached the receiver
  // Paths.
  const std::vector<topo::Path>* paths = nullptr;
  // The links of paths[ecmp], read without going through `paths` and the path's own vector:
  // every hop of every packet of a flow on its hashed path looks its next link up here.
  const topo::LinkId* ecmp_links = nullptr;
  std::uint16_t ecmp_hops = 0;
  std::uint16_t path_lo = 0; // the paths through the source port
  std::uint16_t path_hi = 0;
  std::uint16_t ecmp = 0;    // the flow's hashed path
  std::uint32_t sprayed = 0; // round-robin counter
  std::uint32_t port = 0;    // the source port (first link)
  std::uint8_t priority = 0; // by_magnitude: the class of the packets not in its top share
  bool droppable = false;
  // by_magnitude: the packets in the top share (class 0, never droppable; sender.hpp,
  // mark_top_packets); the receiver waits for all top_packets of them.
  bool by_magnitude = false;
  Bitmap top_bits;
  std::uint32_t top_packets = 0;
  std::uint32_t top_received = 0;
  // Sender.
  std::uint32_t packets = 0;
  std::uint32_t next_new = 0; // first packet never sent
  std::uint32_t acked = 0;
  Bitmap acked_bits;
  Bitmap resend_bits; // queued in `resend`
  std::vector<std::uint32_t> resend;
  std::size_t resend_head = 0;
  bool sender_done = false;
  bool in_list = false; // on its source port's round-robin list
  std::uint32_t rr_prev = 0;
  std::uint32_t rr_next = 0;
  Picoseconds last_progress = 0;
  std::uint32_t timer_generation = 0;
  bool timer_armed = false;
  // Estimated timer (TransportSpec::rto_min > 0): its sender-receiver pair's estimate, the
  // packet being timed (kNil: none) and when it left, and the expiries since the last sample
  // (each doubles the RTO).
  std::uint32_t rtt_pair = 0;
  std::uint32_t timed_seq = 0xffffffffu;
  Picoseconds timed_at = 0;
  std::uint32_t backoffs = 0;
  // dctcp
  double cwnd = 0;
  double alpha = 1;
  std::uint32_t window_acks = 0;
  std::uint32_t window_marks = 0;
  std::uint32_t window_end = 0; // acked count that closes the current observation window
  std::uint32_t cut_until = 0;  // no second window cut before this many packets are acked
  // dcqcn, reaction point (sender): rates in bytes per second; line = the source port's.
  double rate = 0;   // RC, the pacing rate
  double target = 0; // RT
  double line_rate = 0;
  double dcqcn_alpha = 1;
  Picoseconds alpha_since = -1; // last CNP (alpha decays once per alpha_timer since then)
  Picoseconds next_send_at = 0; // pacing: no packet before this
  Picoseconds rate_timer_due = -1;
  std::uint64_t byte_count = 0; // bytes sent since the byte counter last expired
  int timer_stage = 0;          // rate timer expiries since the last CNP
  int byte_stage = 0;           // byte counter expiries since the last CNP
  // Coalesced ACKs (ack_every_packets > 1): the receiver logs each new packet (index, and the
  // ECN bit) and an ACK covers the log entries [ack_sent, its end) when it leaves.
  std::vector<std::uint32_t> ack_log;
  std::uint32_t ack_sent = 0;
  // dcqcn, notification point (receiver).
  Picoseconds last_cnp = -1;
  // Receiver.
  std::uint32_t received = 0;
  std::uint64_t received_payload = 0;
  std::uint64_t needed_payload = 0;
  std::uint32_t highest = 0; // one past the highest packet index seen
  Bitmap received_bits;
  bool receiver_done = false;
  bool steps_done = false;
  // Loss-tolerant receiver: its give-up timer (armed once 1 - loss_bound of the bytes arrived;
  // it fires loss_timeout after the latest new packet), the latest new packet (its index and
  // path, for the completing ACK), and the packets dropped in the network (so that the loss it
  // accepts counts only bytes that were really dropped, not ones still on their way).
  Picoseconds loss_timeout = 0;
  Picoseconds last_arrival = 0;
  std::uint32_t last_seq = 0;
  std::uint16_t last_path = 0;
  bool loss_timer_armed = false;
  std::uint32_t receive_generation = 0; // kept across reuse: stale timers see it moved on
  Bitmap dropped_bits;
  // Lifetime: packets of this message (data or control) still in the network.
  std::uint32_t alive = 0;

  bool has_resend() const { return resend_head < resend.size(); }
  bool top(std::uint32_t seq) const { return by_magnitude && top_bits.test(seq); }
  // The links of paths[index] and their count.
  const topo::LinkId* links(std::uint16_t index, std::size_t& hops) const {
    if (index == ecmp) {
      hops = ecmp_hops;
      return ecmp_links;
    }
    const topo::Path& path = (*paths)[index];
    hops = path.size();
    return path.data();
  }
};

} // namespace ddlsim::sim::packet
