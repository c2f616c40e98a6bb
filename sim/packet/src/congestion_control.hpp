// Congestion: the congestion control models of the transport, kept in each message's
// record (transport.hpp).
//
// dctcp (window): new packets wait for the window (cwnd packets outstanding), which grows by one
// packet per window of ACKs and shrinks by alpha/2 once per window with ECN echoes (alpha: the
// EWMA, gain 1/16, of the marked fraction); a timeout closes it to one packet.
//
// dcqcn (rate), the reaction point at the sender: a message is paced at its rate RC. A CNP (sent
// by the receiver, the notification point, for ECN-marked data at most once per cnp_interval)
// cuts RC by alpha/2 and remembers it as the target RT; a rate timer and a byte counter then
// raise RC back towards RT (fast recovery), and RT itself after F expiries (additive, or
// hyper-additive once both counters passed F).
#pragma once

#include "network.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace ddlsim::sim::packet {

template <typename Engine> class Congestion {
public:
  // A message's initial state: the full window or the initial one, and the line rate (already
  // in m.line_rate).
  static void reset(Message& m, const TransportSpec& transport) {
    m.cwnd = transport.congestion_control == CongestionControl::dctcp
                 ? transport.initial_window_packets
                 : std::numeric_limits<double>::infinity();
    m.alpha = 1;
    m.window_acks = m.window_marks = m.window_end = m.cut_until = 0;
    m.rate = m.target = m.line_rate;
    m.dcqcn_alpha = 1;
    m.alpha_since = -1;
    m.next_send_at = 0;
    m.rate_timer_due = -1;
    m.byte_count = 0;
    m.timer_stage = m.byte_stage = 0;
    m.last_cnp = -1;
  }

  // A new packet of the message was acknowledged (marked: it carried an ECN echo).
  void on_ack(Message& m, bool marked) {
    if (net().spec.transport.congestion_control == CongestionControl::dctcp)
      dctcp_on_ack(m, marked);
  }

  void on_timeout(Message& m) {
    if (net().spec.transport.congestion_control == CongestionControl::dctcp) m.cwnd = 1;
  }

  // dcqcn, a packet of `bytes` left below the line rate: pacing at RC (the gap that packet takes
  // at that rate) and the byte counter.
  void on_send(Message& m, std::uint32_t bytes) {
    m.next_send_at =
        checked_later(net().now, checked_ps(static_cast<double>(bytes) * 1e12 / m.rate));
    m.byte_count += bytes;
    if (m.byte_count >= net().spec.transport.dcqcn.byte_counter) {
      m.byte_count = 0;
      ++m.byte_stage;
      increase(m);
    }
  }

  // dcqcn, the notification point: whether the receiver sends a CNP for an ECN-marked packet
  // now (at most one per cnp_interval per message); counts it.
  bool cnp_due(Message& m) {
    const TransportSpec& transport = net().spec.transport;
    if (transport.congestion_control != CongestionControl::dcqcn) return false;
    const Picoseconds now = net().now;
    if (m.last_cnp >= 0 && now - m.last_cnp < transport.dcqcn.cnp_interval) return false;
    m.last_cnp = now;
    ++net().result.cnps;
    return true;
  }

  // dcqcn, a CNP reached the sender of message `id`.
  void on_cnp(std::uint32_t id) {
    Message& m = net().messages[id];
    if (m.sender_done) return;
    const DcqcnSpec& d = net().spec.transport.dcqcn;
    const Picoseconds now = net().now;
    ++net().result.rate_cuts;
    if (m.alpha_since >= 0) // the alpha timer's expiries since the last CNP, applied now
      m.dcqcn_alpha *=
          std::pow(1 - d.g, static_cast<double>((now - m.alpha_since) / d.alpha_timer));
    m.alpha_since = now;
    m.target = m.rate;
    m.rate = std::max(d.min_bytes_per_second, m.rate * (1 - m.dcqcn_alpha / 2));
    m.dcqcn_alpha = (1 - d.g) * m.dcqcn_alpha + d.g;
    m.timer_stage = m.byte_stage = 0;
    m.byte_count = 0;
    m.rate_timer_due = now + d.rate_timer;
    net().events.push(m.rate_timer_due, Event::rate_timer(id, m.timer_generation));
    // A packet already paced at the old rate keeps its time; later ones use the new rate.
  }

  void on_rate_timer(const TimerEvent& timer) {
    Message& m = net().messages[timer.message];
    const Picoseconds now = net().now;
    if (timer.generation != m.timer_generation || m.sender_done || m.rate_timer_due != now) return;
    ++m.timer_stage;
    increase(m);
    if (m.rate < m.line_rate) {
      m.rate_timer_due = now + net().spec.transport.dcqcn.rate_timer;
      net().events.push(m.rate_timer_due, Event::rate_timer(timer.message, timer.generation));
    } else {
      m.rate_timer_due = -1;
    }
  }

private:
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

  // dcqcn, one increase event (timer or byte counter): fast recovery halves the distance to RT;
  // past F expiries RT itself rises, additively or (both counters past F) hyper-additively.
  void increase(Message& m) {
    const DcqcnSpec& d = net().spec.transport.dcqcn;
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

  Engine& engine() { return static_cast<Engine&>(*this); }
  Network& net() { return engine().network(); }
};

} // namespace ddlsim::sim::packet
