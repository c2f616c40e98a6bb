// The packet engine's event core: a binary min-heap of small event values ordered by
// (time, insertion order), so that ties break first-in first-out and runs are deterministic.
//
// Packet events rarely share a time (serialization times differ by packet), so the bucketed
// queue of sim/event_queue.hpp would open a bucket per event; a plain heap of 24-byte entries
// with hand-written sifts is cheaper here. No allocation per event beyond amortised growth.
#pragma once

#include "ddlsim/core/units.hpp"

#include <cstdint>
#include <vector>

namespace ddlsim::sim::packet {

enum class EventKind : std::uint8_t {
  tx_done,       // id = port: its packet on the wire finished serializing
  arrive,        // id = packet: it reached the far end of its link
  local_done,    // id = program, aux = step index
  reduce_done,   // id = transfer
  timeout,       // id = transfer, aux = timer generation
  message_start, // id = transfer: the per-step overhead has passed, its packets may go
  pace,          // id = port: a paced (DCQCN) message of this source port may send again
  pfc_frame,     // id = port that receives it, aux = class | (1 << 8 if PAUSE, else RESUME)
  rate_timer,    // id = transfer, aux = timer generation: DCQCN's rate increase timer
};

struct Event {
  EventKind kind;
  std::uint32_t id;
  std::uint32_t aux;
};

class EventCore {
public:
  void push(Picoseconds time, Event event) {
    heap_.push_back(Entry{time, seq_++, event});
    sift_up(heap_.size() - 1);
  }
  bool empty() const { return heap_.empty(); }
  Picoseconds next_time() const { return heap_.front().time; }
  // Removes the earliest event; its time is next_time() before the call.
  Event pop() {
    const Event event = heap_.front().event;
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
    return event;
  }
  std::size_t size() const { return heap_.size(); }

private:
  struct Entry {
    Picoseconds time;
    std::uint64_t seq;
    Event event;
    bool before(const Entry& other) const {
      return time != other.time ? time < other.time : seq < other.seq;
    }
  };
  void sift_up(std::size_t i) {
    const Entry entry = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!entry.before(heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = entry;
  }
  void sift_down(std::size_t i) {
    const Entry entry = heap_[i];
    const std::size_t n = heap_.size();
    while (true) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && heap_[child + 1].before(heap_[child])) ++child;
      if (!heap_[child].before(entry)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = entry;
  }

  std::vector<Entry> heap_;
  std::uint64_t seq_ = 0;
};

} // namespace ddlsim::sim::packet
