// EventQueue: a binary min-heap of small event values ordered by (time, insertion order), so that
// ties break first-in first-out and runs are deterministic. No allocation per event beyond the
// heap's amortised growth.
#pragma once

#include "ddlsim/core/units.hpp"

#include <cstdint>
#include <queue>
#include <vector>

namespace ddlsim::sim {

template <typename Payload> class EventQueue {
public:
  void push(Picoseconds time, const Payload& payload) {
    heap_.push(Entry{time, next_seq_++, payload});
  }
  bool empty() const { return heap_.empty(); }
  Picoseconds next_time() const { return heap_.top().time; }
  Payload pop() {
    Payload payload = heap_.top().payload;
    heap_.pop();
    return payload;
  }
  std::size_t size() const { return heap_.size(); }

private:
  struct Entry {
    Picoseconds time;
    std::uint64_t seq;
    Payload payload;
    // std::priority_queue is a max-heap: "less" means "later".
    bool operator<(const Entry& other) const {
      return time != other.time ? time > other.time : seq > other.seq;
    }
  };
  std::priority_queue<Entry> heap_;
  std::uint64_t next_seq_ = 0;
};

} // namespace ddlsim::sim
