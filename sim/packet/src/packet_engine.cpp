#include "ddlsim/sim/packet/packet_engine.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/sim/gpu_rates.hpp"
#include "event_core.hpp"
#include "load_balancer.hpp"
#include "packet_pool.hpp"
#include "port.hpp"
#include "programs.hpp"
#include "transport.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace ddlsim::sim::packet {
namespace {

using coll::Step;
using coll::StepKind;

Picoseconds duration(std::uint64_t bytes, double bytes_per_second) {
  return static_cast<Picoseconds>(
      std::llround(static_cast<double>(bytes) / bytes_per_second * 1e12));
}

// What a message's sender may do next. window_full, paced (DCQCN's rate) and class_paused
// (PFC) mean it has packets but must wait.
enum class Want : std::uint8_t { nothing, resend, send_new, window_full, paced, class_paused };

constexpr Picoseconds kNever = std::numeric_limits<Picoseconds>::max();
// A coalescing receiver's log entry: the packet index, and this bit when it came ECN-marked.
constexpr std::uint32_t kLogEcn = 1u << 31;

class PacketRun {
public:
  PacketRun(const topo::Topology& topology, topo::Router& router, const coll::Schedule& schedule,
            const PacketOptions& options)
      : topology_(topology), router_(router), schedule_(schedule), options_(options),
        spec_(options.spec), sw_(options.spec.switch_spec),
        rng_(mix64(options.seed ^ 0x5eed5eedull)) {
    const int ranks = schedule.ranks();
    rates_ =
        rank_rates(topology, ranks, options.reduce_bytes_per_second, options.copy_bytes_per_second);
    build_ports();
    channels_ = static_cast<std::uint32_t>(schedule.channels());
    programs_.resize(static_cast<std::size_t>(ranks) * channels_);
    for (int r = 0; r < ranks; ++r)
      for (std::uint32_t c = 0; c < channels_; ++c) {
        Program& program = programs_[static_cast<std::size_t>(r) * channels_ + c];
        program.stream = schedule.program(r, static_cast<int>(c));
        program.rank = r;
        program.channel = static_cast<std::uint16_t>(c);
      }
  }

  PacketTiming run() {
    for (std::uint32_t p = 0; p < programs_.size(); ++p) start_ready(p);
    while (!events_.empty() && !stopped_) {
      now_ = events_.next_time();
      const Event event = events_.pop();
      if (++result_.events % kProgressInterval == 0 && options_.progress &&
          !options_.progress(now_, result_.events))
        stopped_ = true;
      handle(event);
    }
    if (stopped_)
      result_.complete = false;
    else
      check_finished();
    result_.time = last_completion_;
    collect_link_stats();
    return std::move(result_);
  }

private:
  // ---- ports ---------------------------------------------------------------------------------

  void build_ports() {
    ports_.resize(topology_.link_count());
    for (topo::LinkId id = 0; id < topology_.link_count(); ++id) {
      const topo::Link& link = topology_.link(id);
      Port& port = ports_[id];
      port.ps_per_byte = 1e12 / link.bandwidth_bytes_per_second;
      port.latency = link.latency;
      port.dst_vertex = link.dst;
      port.reverse = link.reverse;
      const topo::VertexKind kind = topology_.vertex(link.src).kind;
      port.switch_port = kind == topo::VertexKind::network_switch;
      port.source = kind == topo::VertexKind::gpu;
      if (port.switch_port) {
        port.lossless = false; // PFC pauses by class (below), not by credit
        port.limit = link.buffer_bytes > 0 ? link.buffer_bytes : sw_.buffer_bytes;
      } else {
        port.lossless = true;
        port.limit = spec_.node_buffer_bytes;
      }
      if (sw_.pfc.enabled && topology_.vertex(link.dst).kind == topo::VertexKind::network_switch) {
        // The next switch's ingress thresholds for this link.
        port.xoff = sw_.pfc.xoff_bytes > 0 ? sw_.pfc.xoff_bytes : sw_.buffer_bytes / 4;
        port.xon = sw_.pfc.xon_bytes > 0 ? std::min(sw_.pfc.xon_bytes, port.xoff) : port.xoff / 2;
        const double in_flight = static_cast<double>(link.latency) / port.ps_per_byte;
        const std::uint64_t headroom = sw_.pfc.headroom_bytes >= 0
                                           ? static_cast<std::uint64_t>(sw_.pfc.headroom_bytes)
                                           : static_cast<std::uint64_t>(std::ceil(2 * in_flight)) +
                                                 2ull * (spec_.mtu_bytes + spec_.header_bytes) +
                                                 spec_.control_bytes;
        port.ingress_limit = port.xoff + headroom;
      }
    }
    if (sw_.buffer_sharing == BufferSharing::shared) {
      // One pool per switch: the given size, or the sum of its ports' own buffers.
      std::vector<std::uint32_t> pool_of(topology_.vertex_count(), kNil);
      for (topo::LinkId id = 0; id < topology_.link_count(); ++id) {
        Port& port = ports_[id];
        if (!port.switch_port) continue;
        const topo::VertexId sw = topology_.link(id).src;
        if (pool_of[sw] == kNil) {
          pool_of[sw] = static_cast<std::uint32_t>(pools_.size());
          pools_.push_back(SharedPool{sw_.shared_buffer_bytes, 0});
        }
        port.pool = pool_of[sw];
        if (sw_.shared_buffer_bytes == 0) pools_[port.pool].size += port.limit;
      }
    }
  }

  // Whether a switch port's buffer takes `bytes` more data: its own limit, or the shared pool
  // under the dynamic threshold alpha x (free pool).
  bool admits(const Port& port, std::uint64_t bytes) const {
    if (port.pool == kNil) return port.queued + bytes <= port.limit;
    const SharedPool& pool = pools_[port.pool];
    if (pool.used + bytes > pool.size) return false;
    const double threshold =
        sw_.dynamic_threshold_alpha * static_cast<double>(pool.size - pool.used);
    return static_cast<double>(port.queued + bytes) <= threshold;
  }
  void pool_add(const Port& port, std::uint64_t bytes) {
    if (port.pool != kNil) pools_[port.pool].used += bytes;
  }
  void pool_remove(const Port& port, std::uint64_t bytes) {
    if (port.pool != kNil) pools_[port.pool].used -= bytes;
  }

  // A PFC frame from the switch at the end of link `port_id` back to that link's source port:
  // it waits for the packet being serialized on the reverse link, then crosses it.
  void send_pfc_frame(std::uint32_t port_id, int priority, bool pause) {
    const Port& reverse = ports_[ports_[port_id].reverse];
    const Picoseconds start = std::max(now_, reverse.free_at);
    const Picoseconds arrival =
        start + reverse.serialization(spec_.control_bytes) + reverse.latency;
    events_.push(arrival, Event{EventKind::pfc_frame, port_id,
                                static_cast<std::uint32_t>(priority) | (pause ? 1u << 8 : 0u)});
    if (pause) {
      ++result_.pfc_pauses;
      ++result_.pfc_pauses_by_priority[static_cast<std::size_t>(priority)];
    }
  }

  void on_pfc_frame(std::uint32_t port_id, std::uint32_t aux) {
    Port& port = ports_[port_id];
    const auto bit = static_cast<std::uint8_t>(1u << (aux & 0xff));
    if (aux >> 8) {
      port.paused |= bit;
      return;
    }
    port.paused &= static_cast<std::uint8_t>(~bit);
    try_send(port_id);
  }

  // A lossless packet leaves its switch's queue: the ingress count of its link goes down, and
  // a paused class resumes below xon.
  void release_ingress(Packet& packet) {
    if (packet.in_port == kNil) return;
    Port& in = ports_[packet.in_port];
    const std::size_t c = packet.priority;
    in.ingress[c] -= packet.bytes;
    packet.in_port = kNil;
    if (((in.pause_sent >> c) & 1u) && in.ingress[c] <= in.xon) {
      in.pause_sent &= static_cast<std::uint8_t>(~(1u << c));
      send_pfc_frame(static_cast<std::uint32_t>(&in - ports_.data()), static_cast<int>(c), false);
    }
  }

  // The message bytes a packet carries: a data packet's size less its header (not stored, so
  // that a packet stays 48 bytes).
  std::uint32_t payload_of(const Packet& packet) const {
    return packet.kind == PacketKind::data ? packet.bytes - spec_.header_bytes : 0;
  }

  void sample(std::uint32_t port_id) {
    Port& port = ports_[port_id];
    if (!options_.record_queues || !port.switch_port) return;
    if (port.last_sample >= 0 && now_ - port.last_sample < spec_.queue_sample_interval) return;
    port.last_sample = now_;
    result_.queue_samples.push_back(QueueSample{port_id, now_, port.queued});
  }

  // The port a packet crosses after the one it is at, or kNil when that one ends at its
  // destination GPU. Chosen (adaptive: by the queues now) when the packet starts crossing.
  std::uint32_t choose_next_port(Packet& packet) {
    const std::vector<topo::Path>& paths = *messages_[packet.transfer].paths;
    const topo::Path& path = paths[packet.path_lo];
    if (packet.reverse) return packet.hop == 0 ? kNil : ports_[path[packet.hop - 1u]].reverse;
    const std::uint16_t hop = static_cast<std::uint16_t>(packet.hop + 1);
    if (hop >= path.size()) return kNil;
    if (packet.path_hi - packet.path_lo > 1)
      return least_queued(paths, hop, packet.path_lo, packet.path_hi, ports_, now_);
    return path[hop];
  }

  // Starts serializing the next packet of an idle port, if it has one and the next port (when
  // lossless) has room for it; otherwise the port waits on that next port. A packet's crossing
  // is one event, its arrival at the far end; a port gets a tx_done event (to start the next
  // packet when the current one has left) only while it has something waiting, so a packet that
  // finds its port idle costs one event per hop.
  void try_send(std::uint32_t port_id) {
    Port& port = ports_[port_id];
    if (port.blocked) return;
    if (now_ < port.free_at) {
      if (!port.tx_pending && (port.has_queued() || port.sources != kNil)) {
        port.tx_pending = true;
        events_.push(port.free_at, Event{EventKind::tx_done, port_id, 0});
      }
      return;
    }
    std::uint32_t id = peek_next(port, pool_, sw_);
    const bool queued = id != kNil;
    if (!queued && port.source) id = pull(port_id);
    if (id == kNil) return;
    Packet& packet = pool_[id];
    if (packet.next_port == kNil) packet.next_port = choose_next_port(packet);
    const std::uint32_t next = packet.next_port;
    const std::uint32_t charge = packet.kind == PacketKind::data ? packet.bytes : 0;
    if (next != kNil && ports_[next].lossless && !ports_[next].fits(charge)) {
      if (!queued) enqueue(port, pool_, id);
      port.blocked = true;
      port.next_waiter = kNil;
      Port& full = ports_[next];
      if (full.waiters == kNil)
        full.waiters = port_id;
      else
        ports_[full.waiters_tail].next_waiter = port_id;
      full.waiters_tail = port_id;
      return;
    }
    if (queued) {
      take(port, pool_, id);
      if (packet.kind == PacketKind::data) pool_remove(port, packet.bytes);
      release_ingress(packet);
    }
    if (next != kNil && ports_[next].lossless) ports_[next].reserved += charge;
    port.free_at = now_ + port.serialization(packet.bytes);
    last_tx_end_ = std::max(last_tx_end_, port.free_at);
    port.tx_bytes += packet.bytes;
    events_.push(port.free_at + port.latency, Event{EventKind::arrive, id, next});
    if (port.has_queued() || port.sources != kNil) {
      port.tx_pending = true;
      events_.push(port.free_at, Event{EventKind::tx_done, port_id, 0});
    }
    if (queued) {
      sample(port_id);
      wake_waiters(port_id);
    }
  }

  void wake_waiters(std::uint32_t port_id) {
    std::uint32_t waiter = ports_[port_id].waiters;
    ports_[port_id].waiters = ports_[port_id].waiters_tail = kNil;
    while (waiter != kNil) {
      Port& port = ports_[waiter];
      const std::uint32_t next = port.next_waiter;
      port.blocked = false;
      port.next_waiter = kNil;
      try_send(waiter);
      waiter = next;
    }
  }

  void on_tx_done(std::uint32_t port_id) {
    ports_[port_id].tx_pending = false;
    try_send(port_id);
  }

  void on_arrive(std::uint32_t id) {
    Packet& packet = pool_[id];
    const std::uint32_t next = packet.next_port;
    if (next == kNil) {
      deliver(id);
      return;
    }
    const std::uint32_t came_by = packet.port;
    packet.hop = static_cast<std::uint16_t>(packet.reverse ? packet.hop - 1 : packet.hop + 1);
    packet.port = next;
    packet.next_port = kNil;
    packet.in_port = kNil;
    Port& port = ports_[next];
    const bool data = packet.kind == PacketKind::data;
    if (port.lossless) {
      if (data) port.reserved -= packet.bytes;
    } else if (data) {
      if (port.switch_port && sw_.pfc.lossless(packet.priority)) {
        // Lossless class: admitted by its ingress link's count (xoff + headroom), not by the
        // egress drop policy; crossing xoff pauses the class upstream.
        Port& in = ports_[came_by];
        const std::size_t c = packet.priority;
        if (in.ingress[c] + packet.bytes > in.ingress_limit) {
          ++result_.headroom_drops;
          drop(id, next);
          return;
        }
        in.ingress[c] += packet.bytes;
        packet.in_port = came_by;
        if (in.ingress[c] > in.xoff && !((in.pause_sent >> c) & 1u)) {
          in.pause_sent |= static_cast<std::uint8_t>(1u << c);
          send_pfc_frame(came_by, static_cast<int>(c), true);
        }
      } else {
        while (!admits(port, packet.bytes)) {
          const std::uint32_t victim = eviction_victim(port, pool_, sw_, packet);
          if (victim == kNil) {
            drop(id, next);
            return;
          }
          unlink(port, pool_, victim);
          pool_remove(port, pool_[victim].bytes);
          drop(victim, next);
        }
      }
      if (sw_.ecn_threshold_bytes > 0 && port.queued >= sw_.ecn_threshold_bytes) {
        packet.flags |= kEcn;
        ++result_.ecn_marks;
      }
      pool_add(port, packet.bytes);
    }
    enqueue(port, pool_, id);
    sample(next);
    try_send(next);
  }

  void drop(std::uint32_t id, std::uint32_t port_id) {
    const Packet packet = pool_[id];
    pool_.release(id);
    ++ports_[port_id].drops;
    ++result_.drops;
    result_.bytes_dropped += payload_of(packet);
    if (packet.kind == PacketKind::data) ++result_.drops_by_priority[packet.priority];
    if (!spec_.transport.reliable)
      throw InputError("/engine/transport/reliable",
                       "a packet was dropped at the port of link " +
                           topology_.vertex(topology_.link(port_id).src).name + " -> " +
                           topology_.vertex(topology_.link(port_id).dst).name +
                           " but the transport is unreliable; set \"reliable\": true, enable "
                           "\"pfc\", or give the switches more buffer");
    --messages_[packet.transfer].alive;
    maybe_free(packet.transfer);
  }

  // ---- messages: the sending side --------------------------------------------------------------

  void list_insert(std::uint32_t id) {
    Message& m = messages_[id];
    Port& port = ports_[m.port];
    m.in_list = true;
    if (port.sources == kNil) {
      m.rr_prev = m.rr_next = id;
      port.sources = id;
      return;
    }
    const std::uint32_t head = port.sources;
    const std::uint32_t tail = messages_[head].rr_prev;
    m.rr_prev = tail;
    m.rr_next = head;
    messages_[tail].rr_next = id;
    messages_[head].rr_prev = id;
  }
  void list_remove(std::uint32_t id) {
    Message& m = messages_[id];
    Port& port = ports_[m.port];
    m.in_list = false;
    if (m.rr_next == id) {
      port.sources = kNil;
      return;
    }
    messages_[m.rr_prev].rr_next = m.rr_next;
    messages_[m.rr_next].rr_prev = m.rr_prev;
    if (port.sources == id) port.sources = m.rr_next;
  }

  void activate(std::uint32_t id) {
    if (!messages_[id].in_list && !messages_[id].sender_done) list_insert(id);
    try_send(messages_[id].port);
  }

  Want wants(Message& m, std::uint8_t paused_classes) {
    if (m.sender_done) return Want::nothing;
    while (m.has_resend() && m.acked_bits.test(m.resend[m.resend_head])) {
      m.resend_bits.clear(m.resend[m.resend_head]);
      ++m.resend_head;
    }
    Want want = Want::nothing;
    if (m.has_resend())
      want = Want::resend;
    else if (m.next_new < m.packets)
      want =
          static_cast<double>(m.next_new - m.acked) < m.cwnd ? Want::send_new : Want::window_full;
    if (want == Want::resend || want == Want::send_new) {
      if ((paused_classes >> m.priority) & 1u) return Want::class_paused;
      if (m.next_send_at > now_) return Want::paced;
    }
    return want;
  }

  // The next packet of the source port's messages, round robin; kNil when none may send (then
  // a paced message's next time is booked as a pace event).
  std::uint32_t pull(std::uint32_t port_id) {
    Port& port = ports_[port_id];
    std::uint32_t first = port.sources;
    Picoseconds wake = kNever;
    while (port.sources != kNil) {
      const std::uint32_t id = port.sources;
      Message& m = messages_[id];
      const Want want = wants(m, port.paused);
      if (want == Want::nothing) {
        const bool was_first = id == first;
        const std::uint32_t after = m.rr_next;
        list_remove(id);
        if (was_first) first = port.sources == kNil ? kNil : after;
        continue;
      }
      port.sources = m.rr_next;
      if (want == Want::window_full || want == Want::paced || want == Want::class_paused) {
        if (want == Want::paced) wake = std::min(wake, m.next_send_at);
        if (port.sources == first) break;
        continue;
      }
      return make_data_packet(id, want == Want::resend);
    }
    if (wake != kNever && (port.pace_at < 0 || wake < port.pace_at)) {
      port.pace_at = wake;
      events_.push(wake, Event{EventKind::pace, port_id, 0});
    }
    return kNil;
  }

  void on_pace(std::uint32_t port_id) {
    if (ports_[port_id].pace_at != now_) return; // superseded by an earlier one
    ports_[port_id].pace_at = -1;
    try_send(port_id);
  }

  std::uint32_t make_data_packet(std::uint32_t message_id, bool resend) {
    const std::uint32_t id = pool_.allocate();
    Message& m = messages_[message_id];
    std::uint32_t seq;
    if (resend) {
      seq = m.resend[m.resend_head++];
      m.resend_bits.clear(seq);
      ++result_.retransmissions;
    } else {
      seq = m.next_new++;
      ++result_.data_packets;
      ++result_.data_packets_by_priority[m.priority];
    }
    const std::uint64_t mtu = spec_.mtu_bytes;
    const std::uint32_t payload = static_cast<std::uint32_t>(
        seq + 1 < m.packets ? mtu : m.bytes - static_cast<std::uint64_t>(seq) * mtu);
    Packet& packet = pool_[id];
    packet.transfer = message_id;
    packet.seq = seq;
    packet.aux = 0;
    packet.bytes = payload + spec_.header_bytes;
    packet.port = m.port;
    packet.next_port = kNil;
    packet.in_port = kNil;
    packet.hop = 0;
    packet.kind = PacketKind::data;
    packet.priority = m.priority;
    packet.flags = (m.droppable && !resend) ? kDroppable : 0;
    packet.reverse = false;
    const std::uint32_t choices = m.path_hi - m.path_lo;
    switch (spec_.load_balancing) {
    case LoadBalancing::ecmp:
      packet.path_lo = m.ecmp;
      break;
    case LoadBalancing::spray_random:
      rng_ = mix64(rng_);
      packet.path_lo = static_cast<std::uint16_t>(m.path_lo + rng_ % choices);
      break;
    case LoadBalancing::spray_round_robin:
      packet.path_lo = static_cast<std::uint16_t>(m.path_lo + m.sprayed++ % choices);
      break;
    case LoadBalancing::adaptive:
      packet.path_lo = m.path_lo;
      packet.path_hi = m.path_hi;
      break;
    }
    if (spec_.load_balancing != LoadBalancing::adaptive)
      packet.path_hi = static_cast<std::uint16_t>(packet.path_lo + 1);
    ++m.alive;
    if (m.rate < m.line_rate) dcqcn_on_send(message_id, packet.bytes);
    if (!spec_.transport.reliable) {
      if (m.next_new == m.packets) m.sender_done = true;
    } else if (!m.timer_armed) {
      m.timer_armed = true;
      m.last_progress = now_;
      events_.push(now_ + spec_.transport.rto,
                   Event{EventKind::timeout, message_id, m.timer_generation});
    }
    return id;
  }

  void on_timeout(std::uint32_t id, std::uint32_t generation) {
    Message& m = messages_[id];
    if (generation != m.timer_generation || m.sender_done) return;
    const Picoseconds rto = spec_.transport.rto;
    if (now_ - m.last_progress < rto) {
      events_.push(m.last_progress + rto, Event{EventKind::timeout, id, generation});
      return;
    }
    for (std::uint32_t s = 0; s < m.next_new; ++s)
      if (!m.acked_bits.test(s) && m.resend_bits.set(s)) m.resend.push_back(s);
    m.last_progress = now_;
    if (spec_.transport.congestion_control == CongestionControl::dctcp) m.cwnd = 1;
    events_.push(now_ + rto, Event{EventKind::timeout, id, generation});
    activate(id);
  }

  void on_ack(std::uint32_t id, const Packet& ack) {
    Message& m = messages_[id];
    if (m.sender_done) return;
    if (spec_.transport.ack_every_packets == 1) {
      acknowledge(m, ack.seq, (ack.flags & kEcn) != 0);
    } else {
      // A coalesced ACK covers entries [seq, aux) of the receiver's log (written before it
      // left, so reading them here tells the sender nothing it could not know).
      for (std::uint32_t i = ack.seq; i < ack.aux; ++i)
        acknowledge(m, m.ack_log[i] & ~kLogEcn, (m.ack_log[i] & kLogEcn) != 0);
    }
    if (ack.flags & kComplete) {
      m.sender_done = true;
      ++m.timer_generation;
      if (m.in_list) list_remove(id);
      return;
    }
    activate(id);
  }

  void acknowledge(Message& m, std::uint32_t seq, bool marked) {
    if (!m.acked_bits.set(seq)) return;
    ++m.acked;
    m.last_progress = now_;
    if (spec_.transport.congestion_control == CongestionControl::dctcp) dctcp_on_ack(m, marked);
  }

  static void dctcp_on_ack(Message& m, bool marked) {
    constexpr double kGain = 1.0 / 16;
    ++m.window_acks;
    if (marked) ++m.window_marks;
    if (m.acked >= m.window_end) {
      const double fraction = static_cast<double>(m.window_marks) / m.window_acks;
      m.alpha = (1 - kGain) * m.alpha + kGain * fraction;
      m.window_acks = m.window_marks = 0;
      m.window_end = m.acked + static_cast<std::uint32_t>(std::ceil(m.cwnd));
    }
    if (marked && m.acked >= m.cut_until) {
      m.cwnd = std::max(1.0, m.cwnd * (1 - m.alpha / 2));
      m.cut_until = m.next_new;
    } else if (!marked) {
      m.cwnd += 1 / m.cwnd;
    }
  }

  // ---- DCQCN, reaction point ------------------------------------------------------------------

  // Pacing at RC (the gap a packet of `bytes` takes at that rate) and the byte counter.
  void dcqcn_on_send(std::uint32_t id, std::uint32_t bytes) {
    Message& m = messages_[id];
    m.next_send_at =
        now_ + static_cast<Picoseconds>(std::llround(static_cast<double>(bytes) * 1e12 / m.rate));
    m.byte_count += bytes;
    if (m.byte_count >= spec_.transport.dcqcn.byte_counter) {
      m.byte_count = 0;
      ++m.byte_stage;
      dcqcn_increase(m);
    }
  }

  void on_cnp(std::uint32_t id) {
    Message& m = messages_[id];
    if (m.sender_done) return;
    const DcqcnSpec& d = spec_.transport.dcqcn;
    ++result_.rate_cuts;
    if (m.alpha_since >= 0) // the alpha timer's expiries since the last CNP, applied now
      m.dcqcn_alpha *=
          std::pow(1 - d.g, static_cast<double>((now_ - m.alpha_since) / d.alpha_timer));
    m.alpha_since = now_;
    m.target = m.rate;
    m.rate = std::max(d.min_bytes_per_second, m.rate * (1 - m.dcqcn_alpha / 2));
    m.dcqcn_alpha = (1 - d.g) * m.dcqcn_alpha + d.g;
    m.timer_stage = m.byte_stage = 0;
    m.byte_count = 0;
    m.rate_timer_due = now_ + d.rate_timer;
    events_.push(m.rate_timer_due, Event{EventKind::rate_timer, id, m.timer_generation});
    // A packet already paced at the old rate keeps its time; later ones use the new rate.
  }

  void on_rate_timer(std::uint32_t id, std::uint32_t generation) {
    Message& m = messages_[id];
    if (generation != m.timer_generation || m.sender_done || m.rate_timer_due != now_) return;
    ++m.timer_stage;
    dcqcn_increase(m);
    if (m.rate < m.line_rate) {
      m.rate_timer_due = now_ + spec_.transport.dcqcn.rate_timer;
      events_.push(m.rate_timer_due, Event{EventKind::rate_timer, id, generation});
    } else {
      m.rate_timer_due = -1;
    }
  }

  // One increase event (timer or byte counter): fast recovery halves the distance to RT; past F
  // expiries RT itself rises, additively or (both counters past F) hyper-additively.
  void dcqcn_increase(Message& m) {
    const DcqcnSpec& d = spec_.transport.dcqcn;
    const int f = d.fast_recovery_steps;
    if (std::min(m.timer_stage, m.byte_stage) > f)
      m.target += d.hyper_bytes_per_second * (std::min(m.timer_stage, m.byte_stage) - f);
    else if (std::max(m.timer_stage, m.byte_stage) > f)
      m.target += d.additive_bytes_per_second;
    m.target = std::min(m.target, m.line_rate);
    m.rate = (m.rate + m.target) / 2;
    // Halving never closes the gap: within one additive step of the line rate, the limiter is
    // released (as a NIC does when RC reaches the line rate).
    if (m.line_rate - m.rate < d.additive_bytes_per_second) {
      m.rate = m.line_rate;
      m.next_send_at = 0;
    }
  }

  void on_nack(std::uint32_t id, const Packet& nack) {
    Message& m = messages_[id];
    if (m.sender_done) return;
    for (std::uint32_t s = nack.seq; s < nack.aux && s < m.next_new; ++s)
      if (!m.acked_bits.test(s) && m.resend_bits.set(s)) m.resend.push_back(s);
    activate(id);
  }

  // ---- messages: the receiving side ------------------------------------------------------------

  void deliver(std::uint32_t id) {
    const Packet packet = pool_[id];
    pool_.release(id);
    --messages_[packet.transfer].alive;
    switch (packet.kind) {
    case PacketKind::data:
      on_data(packet);
      break;
    case PacketKind::ack:
      on_ack(packet.transfer, packet);
      break;
    case PacketKind::nack:
      on_nack(packet.transfer, packet);
      break;
    case PacketKind::cnp:
      on_cnp(packet.transfer);
      break;
    }
    maybe_free(packet.transfer);
  }

  void on_data(const Packet& packet) {
    const std::uint32_t id = packet.transfer;
    Message& m = messages_[id];
    bool gap = false;
    std::uint32_t gap_from = 0;
    const bool fresh = !m.received_bits.test(packet.seq);
    if (!m.received_bits.set(packet.seq)) {
      ++result_.duplicates;
    } else {
      ++m.received;
      m.received_payload += payload_of(packet);
      if (packet.seq + 1 < m.highest) ++result_.reordered;
      if (packet.seq > m.highest && spec_.load_balancing == LoadBalancing::ecmp && !m.droppable) {
        gap = true;
        gap_from = m.highest;
      }
      m.highest = std::max(m.highest, packet.seq + 1);
    }
    if (!m.receiver_done && m.received > 0 && m.received_payload >= m.needed_payload) {
      m.receiver_done = true;
      if (m.droppable) {
        const std::uint64_t lost = m.bytes - std::min(m.bytes, m.received_payload);
        result_.bytes_lost_accepted += lost;
        if (m.bytes > 0)
          result_.max_lost_fraction_ppm =
              std::max(result_.max_lost_fraction_ppm, lost * 1'000'000 / m.bytes);
      }
      receive_complete(id);
    }
    Message& again = messages_[id]; // receive_complete may have started new messages
    if (spec_.transport.congestion_control == CongestionControl::dcqcn && (packet.flags & kEcn) &&
        (again.last_cnp < 0 || now_ - again.last_cnp >= spec_.transport.dcqcn.cnp_interval)) {
      again.last_cnp = now_;
      ++result_.cnps;
      send_control(id, packet, PacketKind::cnp, packet.seq, 0, 0);
    }
    if (!spec_.transport.reliable) return;
    if (gap && !again.receiver_done)
      send_control(id, packet, PacketKind::nack, gap_from, packet.seq, 0);
    const std::uint8_t flags =
        static_cast<std::uint8_t>((packet.flags & kEcn) | (again.receiver_done ? kComplete : 0));
    const std::uint32_t every = spec_.transport.ack_every_packets;
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

  // An ACK or NACK for `data`, walking its path back from the receiver.
  void send_control(std::uint32_t message_id, const Packet& data, PacketKind kind,
                    std::uint32_t seq, std::uint32_t aux, std::uint8_t flags) {
    const std::uint32_t id = pool_.allocate();
    const topo::Path& path = (*messages_[message_id].paths)[data.path_lo];
    Packet& packet = pool_[id];
    packet.transfer = message_id;
    packet.seq = seq;
    packet.aux = aux;
    packet.bytes = spec_.control_bytes;
    packet.hop = static_cast<std::uint16_t>(path.size() - 1);
    packet.port = ports_[path.back()].reverse;
    packet.next_port = kNil;
    packet.in_port = kNil;
    packet.path_lo = data.path_lo;
    packet.path_hi = static_cast<std::uint16_t>(data.path_lo + 1);
    packet.kind = kind;
    packet.priority = 0;
    packet.flags = flags;
    packet.reverse = true;
    ++messages_[message_id].alive;
    ++result_.control_packets;
    enqueue(ports_[packet.port], pool_, id);
    try_send(packet.port);
  }

  void receive_complete(std::uint32_t id) {
    const Message& m = messages_[id];
    if (m.recv_reduce) {
      const double rate = rates_[static_cast<std::size_t>(m.recv_rank)].reduce_bytes_per_second;
      events_.push(now_ + duration(m.recv_bytes, rate), Event{EventKind::reduce_done, id, 0});
      return;
    }
    finish_steps(id);
  }

  void finish_steps(std::uint32_t id) {
    Message& m = messages_[id];
    m.steps_done = true;
    const StepRef recv = m.recv, send = m.send;
    complete(recv);
    complete(send);
    maybe_free(id);
  }

  void maybe_free(std::uint32_t id) {
    Message& m = messages_[id];
    if (!m.steps_done || !m.sender_done || m.alive != 0 || m.paths == nullptr) return;
    if (m.in_list) list_remove(id);
    ++m.timer_generation;
    m.paths = nullptr;
    free_messages_.push_back(id);
  }

  // ---- the Schedule ----------------------------------------------------------------------------

  Slot& slot(StepRef ref) {
    Program& program = programs_[ref.program];
    return program.window[ref.index - program.base];
  }

  std::uint32_t program_of(std::int32_t rank, std::uint16_t channel) const {
    return static_cast<std::uint32_t>(rank) * channels_ + channel;
  }

  // Starts steps of program p in order while their dependencies are done (rule 1 of step.hpp).
  void start_ready(std::uint32_t p) {
    while (true) {
      Program& program = programs_[p];
      const std::uint32_t index = program.next_start;
      while (program.base + program.window.size() <= index) {
        Step step;
        if (!program.stream.next(step)) {
          program.exhausted = true;
          return;
        }
        program.window.push_back(Slot::of(step));
        ++result_.steps;
      }
      Slot& next = program.window[index - program.base];
      for (std::uint8_t d = 0; d < next.dep_count; ++d) {
        const std::uint32_t dep = next.deps[d];
        if (dep >= program.base && !program.window[dep - program.base].done) return;
      }
      if (next.wait_channel != coll::kNoWait && !wait_done(p, next)) return;
      next.start = now_;
      ++program.next_start;
      begin(next, StepRef{p, index}, program.rank, program.channel);
    }
  }

  // Whether the cross-program wait of `step` (next in program p) is satisfied; if not, p is
  // registered to retry when the awaited program completes a step.
  bool wait_done(std::uint32_t p, const Slot& step) {
    Program& program = programs_[p];
    if (step.wait_channel >= channels_)
      throw std::logic_error("rank " + std::to_string(program.rank) + " channel " +
                             std::to_string(program.channel) + " waits for channel " +
                             std::to_string(step.wait_channel) + " of a schedule with " +
                             std::to_string(channels_) + " channels");
    Program& awaited = programs_[program_of(program.rank, step.wait_channel)];
    const std::uint32_t k = step.wait_step;
    if (k < awaited.base) return true; // retired, hence done
    if (k - awaited.base < awaited.window.size() && awaited.window[k - awaited.base].done)
      return true;
    if (!program.registered_as_waiter) {
      program.registered_as_waiter = true;
      awaited.waiters.push_back(p);
    }
    return false;
  }

  void begin(const Slot step, StepRef ref, std::int32_t rank, std::uint16_t channel) {
    if (step.is_send()) {
      Program& receiver = programs_[program_of(step.peer, channel)];
      Waiting receive;
      if (take_waiting(receiver.receives, rank, receive))
        start_message(ref, receive.step, receive.bytes, receive.reduce);
      else
        receiver.sends_in.push_back(Waiting{rank, ref});
    } else if (step.is_receive()) {
      Program& self = programs_[ref.program];
      const bool reduce = step.kind == StepKind::recv_reduce;
      Waiting send;
      if (take_waiting(self.sends_in, step.peer, send))
        start_message(send.step, ref, step.bytes, reduce);
      else
        self.receives.push_back(Waiting{step.peer, ref, step.bytes, reduce});
    } else if (step.kind == StepKind::compute) {
      // A modelled duration: no per-step overhead on top (the workload model includes it).
      events_.push(now_ + static_cast<Picoseconds>(step.bytes),
                   Event{EventKind::local_done, ref.program, ref.index});
    } else {
      const double rate = local_step_rate(rates_[static_cast<std::size_t>(rank)], step.kind);
      events_.push(now_ + options_.per_step_overhead + duration(step.bytes, rate),
                   Event{EventKind::local_done, ref.program, ref.index});
    }
  }

  std::uint8_t priority_of(StepRef receive, std::uint16_t channel) {
    const TransportSpec& transport = spec_.transport;
    const int classes = sw_.priorities;
    switch (transport.priority_rule) {
    case TransportSpec::PriorityRule::constant:
      return static_cast<std::uint8_t>(transport.priority);
    case TransportSpec::PriorityRule::by_channel:
      return static_cast<std::uint8_t>(std::min<int>(channel, classes - 1));
    case TransportSpec::PriorityRule::by_offset:
    case TransportSpec::PriorityRule::by_layer: {
      const Slot& step = slot(receive);
      const std::uint64_t size =
          schedule_.buffer_bytes(programs_[receive.program].rank, step.dst_buffer);
      if (size == 0) return 0;
      const auto c = static_cast<int>(static_cast<double>(step.dst_offset) * classes /
                                      static_cast<double>(size));
      const int by_offset = std::clamp(c, 0, classes - 1);
      return static_cast<std::uint8_t>(transport.priority_rule ==
                                               TransportSpec::PriorityRule::by_offset
                                           ? by_offset
                                           : classes - 1 - by_offset);
    }
    }
    return 0;
  }

  void start_message(StepRef send, StepRef receive, std::uint64_t receive_bytes, bool reduce) {
    const Program& sender = programs_[send.program];
    const std::int32_t src = sender.rank;
    const std::int32_t dst = programs_[receive.program].rank;
    const std::uint16_t channel = sender.channel;
    const std::vector<topo::Path>& paths =
        router_.paths(topology_.gpus()[static_cast<std::size_t>(src)],
                      topology_.gpus()[static_cast<std::size_t>(dst)]);
    if (paths.empty() || paths.front().empty())
      throw InputError("topology", "no route from rank " + std::to_string(src) + " to rank " +
                                       std::to_string(dst));
    std::uint32_t id;
    if (free_messages_.empty()) {
      id = static_cast<std::uint32_t>(messages_.size());
      messages_.emplace_back();
    } else {
      id = free_messages_.back();
      free_messages_.pop_back();
    }
    Message& m = messages_[id];
    m.send = send;
    m.recv = receive;
    m.bytes = slot(send).bytes;
    m.recv_bytes = receive_bytes;
    m.send_rank = src;
    m.recv_rank = dst;
    m.recv_reduce = reduce;
    m.paths = &paths;
    const std::size_t count = std::min<std::size_t>(paths.size(), 0xffff);
    m.ecmp = static_cast<std::uint16_t>(ecmp_choice(options_.seed, src, dst, channel, count));
    m.path_lo = 0;
    m.path_hi = static_cast<std::uint16_t>(count);
    narrow(paths, m.ecmp, 0, m.path_lo, m.path_hi);
    m.sprayed = 0;
    m.port = paths[m.ecmp][0];
    const TransportSpec& transport = spec_.transport;
    m.priority = priority_of(receive, channel);
    m.droppable = transport.loss_bound > 0;
    const std::uint64_t mtu = spec_.mtu_bytes;
    const std::uint64_t packets = std::max<std::uint64_t>(1, (m.bytes + mtu - 1) / mtu);
    if (packets >= kLogEcn) // indices leave the top bit for the coalesced-ACK log
      throw InputError("/engine/mtu_bytes",
                       "a message of " + format_bytes(m.bytes) + " needs " +
                           std::to_string(packets) +
                           " packets, more than the engine numbers; raise mtu_bytes");
    m.packets = static_cast<std::uint32_t>(packets);
    m.needed_payload = m.droppable ? static_cast<std::uint64_t>(std::ceil(
                                         static_cast<double>(m.bytes) * (1 - transport.loss_bound)))
                                   : m.bytes;
    m.next_new = m.acked = 0;
    m.acked_bits.reset(m.packets);
    m.resend_bits.reset(m.packets);
    m.resend.clear();
    m.resend_head = 0;
    m.sender_done = false;
    m.in_list = false;
    m.timer_armed = false;
    m.cwnd = transport.congestion_control == CongestionControl::dctcp
                 ? transport.initial_window_packets
                 : std::numeric_limits<double>::infinity();
    m.alpha = 1;
    m.window_acks = m.window_marks = m.window_end = m.cut_until = 0;
    m.line_rate = 1e12 / ports_[m.port].ps_per_byte;
    m.rate = m.target = m.line_rate;
    m.dcqcn_alpha = 1;
    m.alpha_since = -1;
    m.next_send_at = 0;
    m.rate_timer_due = -1;
    m.byte_count = 0;
    m.timer_stage = m.byte_stage = 0;
    m.last_cnp = -1;
    m.ack_log.clear();
    m.ack_sent = 0;
    m.received = 0;
    m.received_payload = 0;
    m.highest = 0;
    m.received_bits.reset(m.packets);
    m.receiver_done = m.steps_done = false;
    m.alive = 0;
    ++result_.transfers;
    result_.bytes_sent += m.bytes;
    if (options_.per_step_overhead > 0)
      events_.push(now_ + options_.per_step_overhead, Event{EventKind::message_start, id, 0});
    else
      activate(id);
  }

  void handle(const Event& event) {
    switch (event.kind) {
    case EventKind::tx_done:
      on_tx_done(event.id);
      break;
    case EventKind::arrive:
      // The packet and the port it arrives at are both likely cold: start fetching the port
      // while the packet loads (aux is only this hint).
      if (event.aux != kNil) __builtin_prefetch(&ports_[event.aux]);
      on_arrive(event.id);
      break;
    case EventKind::local_done:
      complete(StepRef{event.id, event.aux});
      break;
    case EventKind::reduce_done:
      finish_steps(event.id);
      break;
    case EventKind::timeout:
      on_timeout(event.id, event.aux);
      break;
    case EventKind::message_start:
      activate(event.id);
      break;
    case EventKind::pace:
      on_pace(event.id);
      break;
    case EventKind::pfc_frame:
      on_pfc_frame(event.id, event.aux);
      break;
    case EventKind::rate_timer:
      on_rate_timer(event.id, event.aux);
      break;
    }
  }

  void complete(StepRef ref) {
    Program& program = programs_[ref.program];
    Slot& done = slot(ref);
    done.done = true;
    last_completion_ = now_;
    if (options_.record_steps)
      result_.steps_recorded.push_back(
          StepRecord{program.rank, program.channel, done.kind, done.peer,
                     done.kind == StepKind::compute ? 0 : done.bytes, done.start, now_});
    while (!program.window.empty() && program.window.front().done) {
      program.window.pop_front();
      ++program.base;
    }
    start_ready(ref.program);
    if (!programs_[ref.program].waiters.empty()) {
      std::vector<std::uint32_t> waiters;
      waiters.swap(programs_[ref.program].waiters);
      for (std::uint32_t w : waiters) {
        programs_[w].registered_as_waiter = false;
        start_ready(w);
      }
    }
  }

  void check_finished() const {
    for (const Program& program : programs_) {
      if (program.exhausted && program.window.empty()) continue;
      const std::uint32_t stuck = program.next_start;
      const bool network = pool_.in_use() > 0;
      std::string what = std::string(network ? "packet network deadlocked (lossless ports "
                                               "waiting on each other in a cycle)"
                                             : "schedule deadlocked") +
                         ": rank " + std::to_string(program.rank) + " channel " +
                         std::to_string(program.channel) + " cannot finish step " +
                         std::to_string(stuck);
      throw std::logic_error(what);
    }
  }

  void collect_link_stats() {
    // Until the last packet left its port: retransmissions and ACKs may still be on the wire
    // after the last step completed (pending timers are not).
    const double span =
        static_cast<double>(std::max<Picoseconds>(std::max(last_completion_, last_tx_end_), 1));
    for (topo::LinkId id = 0; id < ports_.size(); ++id) {
      const Port& port = ports_[id];
      if (port.tx_bytes == 0 && port.drops == 0) continue;
      result_.links.push_back(
          LinkStats{id, port.tx_bytes, static_cast<double>(port.tx_bytes) * port.ps_per_byte / span,
                    port.peak_queued, port.drops});
    }
  }

  const topo::Topology& topology_;
  topo::Router& router_;
  const coll::Schedule& schedule_;
  const PacketOptions& options_;
  const PacketEngineSpec& spec_;
  const SwitchSpec& sw_;
  std::uint64_t rng_;
  EventCore events_;
  PacketPool pool_;
  std::vector<Port> ports_;
  struct SharedPool {
    std::uint64_t size = 0;
    std::uint64_t used = 0;
  };
  std::vector<SharedPool> pools_; // shared switch buffers, one per switch
  std::vector<Message> messages_;
  std::vector<std::uint32_t> free_messages_;
  std::vector<GpuRates> rates_;
  std::vector<Program> programs_;
  std::uint32_t channels_ = 1;
  Picoseconds now_ = 0;
  Picoseconds last_completion_ = 0;
  Picoseconds last_tx_end_ = 0; // when the last packet left its port
  bool stopped_ = false;
  PacketTiming result_;
};

} // namespace

PacketTiming simulate_packet(const topo::Topology& topology, topo::Router& router,
                             const coll::Schedule& schedule, const PacketOptions& options) {
  return PacketRun(topology, router, schedule, options).run();
}

} // namespace ddlsim::sim::packet
