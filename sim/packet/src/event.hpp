// The packet engine's events: a kind and a typed payload with named fields per kind, 16 bytes,
// so that the queue stays small and the engine's loop dispatches with one switch (no virtual
// call per event). Each element schedules its own kinds through the named constructors.
#pragma once

#include <cstdint>

namespace ddlsim::sim::packet {

enum class EventKind : std::uint8_t {
  tx_done,       // PortEvent: its packet on the wire finished serializing
  arrive,        // ArriveEvent: a packet reached the far end of its link
  local_done,    // StepEvent: a local step (reduce, copy, compute, ...) finished
  reduce_done,   // MessageEvent: the reduction of a completed receive finished
  timeout,       // TimerEvent: the sender's retransmission timer
  message_start, // MessageEvent: the per-step overhead has passed, its packets may go
  pace,          // PortEvent: a paced (DCQCN) message of this source port may send again
  pfc_frame,     // PfcFrameEvent: a PAUSE or RESUME frame reached the port it addresses
  rate_timer,    // TimerEvent: DCQCN's rate increase timer
  loss_timeout,  // TimerEvent: a loss-tolerant receiver's give-up timer
  compute_done,  // StepEvent: with compute_slowdown, a compute step not slowed finished
  slowed_done,   // TimerEvent: with compute_slowdown, a slowed compute step (message = its slot)
};

struct PortEvent {
  std::uint32_t port;
};
struct ArriveEvent {
  std::uint32_t packet;
  std::uint32_t next_port; // the port it arrives at (kNil: its destination GPU); a prefetch hint
  // The port after that when it gives credit (kNil otherwise): the packet, sent on at once,
  // checks its room. A prefetch hint.
  std::uint32_t credit_port;
};
struct StepEvent {
  std::uint32_t program;
  std::uint32_t index;
};
struct MessageEvent {
  std::uint32_t message;
};
// A timer of a message: stale once the message's timer generation has moved on.
struct TimerEvent {
  std::uint32_t message;
  std::uint32_t generation;
};
struct PfcFrameEvent {
  std::uint32_t port; // the port whose classes it pauses or resumes
  std::uint8_t priority;
  bool pause; // PAUSE, else RESUME
};

struct Event {
  EventKind kind;
  union {
    PortEvent port;
    ArriveEvent arrive;
    StepEvent step;
    MessageEvent message;
    TimerEvent timer;
    PfcFrameEvent pfc;
  };

  static Event tx_done(std::uint32_t port) { return of(EventKind::tx_done, PortEvent{port}); }
  static Event pace(std::uint32_t port) { return of(EventKind::pace, PortEvent{port}); }
  static Event arrival(std::uint32_t packet, std::uint32_t next_port, std::uint32_t credit_port) {
    Event event;
    event.kind = EventKind::arrive;
    event.arrive = ArriveEvent{packet, next_port, credit_port};
    return event;
  }
  static Event local_done(std::uint32_t program, std::uint32_t index) {
    Event event;
    event.kind = EventKind::local_done;
    event.step = StepEvent{program, index};
    return event;
  }
  static Event compute_done(std::uint32_t program, std::uint32_t index) {
    Event event;
    event.kind = EventKind::compute_done;
    event.step = StepEvent{program, index};
    return event;
  }
  static Event slowed_done(std::uint32_t slot, std::uint32_t generation) {
    return of(EventKind::slowed_done, TimerEvent{slot, generation});
  }
  static Event reduce_done(std::uint32_t message) {
    return of(EventKind::reduce_done, MessageEvent{message});
  }
  static Event message_start(std::uint32_t message) {
    return of(EventKind::message_start, MessageEvent{message});
  }
  static Event timeout(std::uint32_t message, std::uint32_t generation) {
    return of(EventKind::timeout, TimerEvent{message, generation});
  }
  static Event rate_timer(std::uint32_t message, std::uint32_t generation) {
    return of(EventKind::rate_timer, TimerEvent{message, generation});
  }
  static Event loss_timeout(std::uint32_t message, std::uint32_t generation) {
    return of(EventKind::loss_timeout, TimerEvent{message, generation});
  }
  static Event pfc_frame(std::uint32_t port, int priority, bool pause) {
    Event event;
    event.kind = EventKind::pfc_frame;
    event.pfc = PfcFrameEvent{port, static_cast<std::uint8_t>(priority), pause};
    return event;
  }

private:
  static Event of(EventKind kind, PortEvent payload) {
    Event event;
    event.kind = kind;
    event.port = payload;
    return event;
  }
  static Event of(EventKind kind, MessageEvent payload) {
    Event event;
    event.kind = kind;
    event.message = payload;
    return event;
  }
  static Event of(EventKind kind, TimerEvent payload) {
    Event event;
    event.kind = kind;
    event.timer = payload;
    return event;
  }
};

static_assert(sizeof(Event) == 16); // a queue entry (time, insertion, event) stays 32 bytes

} // namespace ddlsim::sim::packet
