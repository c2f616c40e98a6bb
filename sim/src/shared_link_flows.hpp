// SharedLinkFlows: the event-driven part of the dependency-order evaluation. Transfers on links
// where transfers may share bandwidth are timed here, in time order, exactly as the event-driven
// engine times every transfer: wait out the latency, move the bytes at the max-min fair share
// (FlowNetwork) once the transfer before it on its connection has put its bytes through
// (ConnectionFifo), then reduce. The dependency-order evaluation hands a transfer over once both
// its send and its receive have started, and asks for the next instant only when none of its
// programs can go on without an end time from here: then no transfer can still arrive before that
// instant, so what happens at it is final.
#pragma once

#include "connection_fifo.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/sim/event_queue.hpp"
#include "ddlsim/sim/flow_network.hpp"
#include "ddlsim/sim/protocol_cost.hpp"
#include "ddlsim/topologies/router.hpp"

#include <cstdint>
#include <limits>
#include <vector>

namespace ddlsim::sim::detail {

struct SharedTransfer {
  const topo::Path* path = nullptr;
  std::uint64_t bytes = 0;       // on the wire
  bool reduce = false;           // a recv_reduce: reduce for `reduce_time` after the bytes arrive,
  bool reduce_in_flight = false; // or from when they start arriving (ProtocolCost::receive_end)
  Picoseconds reduce_time = 0;
  Picoseconds bytes_start = 0;    // set by add()
  std::uint32_t send_program = 0; // handed back when the transfer is done
  std::uint32_t send_index = 0;
  std::uint32_t recv_program = 0;
  std::uint32_t recv_index = 0;
};

class SharedLinkFlows {
public:
  SharedLinkFlows(const topo::Topology& topology, std::size_t programs)
      : flows_(topology), connections_(programs) {}

  // A transfer whose bytes may start moving at `bytes_start` (its latency is over then), which
  // must not be before the instant last handled.
  void add(const SharedTransfer& transfer, Picoseconds bytes_start) {
    std::uint32_t id;
    if (free_.empty()) {
      id = static_cast<std::uint32_t>(transfers_.size());
      transfers_.push_back(transfer);
    } else {
      id = free_.back();
      free_.pop_back();
      transfers_[id] = transfer;
    }
    transfers_[id].bytes_start = bytes_start;
    events_.push(bytes_start, Event{EventKind::bytes_start, id});
  }

  // The instant last handled: transfers added from now on must not start before it.
  Picoseconds now() const { return now_; }
  std::size_t peak_flows_per_link() const { return flows_.peak_flows_per_link(); }

  // Handles the events that are due at the current instant, or, if there are none, moves on to
  // the next instant (completions first, then its events, as the event-driven engine does).
  // done(transfer, time) is called for every transfer whose receive ends. Returns false when
  // there is nothing left to do.
  template <typename Done> bool advance(Done&& done) {
    if (!events_.empty() && events_.next_time() == now_) {
      handle_events_now(done);
      return true;
    }
    flows_.update_rates(now_);
    constexpr Picoseconds kNever = std::numeric_limits<Picoseconds>::max();
    const Picoseconds next_event = events_.empty() ? kNever : events_.next_time();
    const Picoseconds next = std::min(next_event, flows_.next_completion());
    if (next == kNever) return false;
    now_ = next;
    finished_.clear();
    flows_.collect_finished(now_, finished_);
    for (const std::uint64_t id : finished_) arrived(static_cast<std::uint32_t>(id), done);
    handle_events_now(done);
    return true;
  }

private:
  enum class EventKind : std::uint8_t { bytes_start, reduce_done };
  struct Event {
    EventKind kind;
    std::uint32_t transfer;
  };

  // Out of line: inlined into advance(), it crowds the callers' main loops.
  template <typename Done> [[gnu::noinline]] void handle_events_now(Done& done) {
    while (!events_.empty() && events_.next_time() == now_) {
      const Event event = events_.pop();
      const SharedTransfer& transfer = transfers_[event.transfer];
      if (event.kind == EventKind::bytes_start) {
        if (connections_.acquire(transfer.send_program, transfer.recv_program, event.transfer))
          move_bytes(event.transfer);
      } else
        finish(event.transfer, done);
    }
  }
  void move_bytes(std::uint32_t id) {
    SharedTransfer& transfer = transfers_[id];
    transfer.bytes_start = now_;
    flows_.start(*transfer.path, static_cast<double>(transfer.bytes), id, now_);
  }
  template <typename Done> void arrived(std::uint32_t id, Done& done) {
    std::uint32_t next = 0;
    if (connections_.release(transfers_[id].send_program, transfers_[id].recv_program, next))
      move_bytes(next);
    const SharedTransfer& transfer = transfers_[id];
    if (transfer.reduce)
      events_.push(
          receive_end(now_, transfer.bytes_start, transfer.reduce_time, transfer.reduce_in_flight),
          Event{EventKind::reduce_done, id});
    else
      finish(id, done);
  }
  template <typename Done> void finish(std::uint32_t id, Done& done) {
    const SharedTransfer transfer = transfers_[id];
    free_.push_back(id);
    done(transfer, now_);
  }

  FlowNetwork flows_;
  ConnectionFifo connections_;
  EventQueue<Event> events_;
  std::vector<SharedTransfer> transfers_;
  std::vector<std::uint32_t> free_;
  std::vector<std::uint64_t> finished_;
  Picoseconds now_ = 0;
};

} // namespace ddlsim::sim::detail
