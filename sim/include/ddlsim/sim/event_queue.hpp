// EventQueue: small event values ordered by (time, insertion order), so that ties break
// first-in first-out and runs are deterministic. Every engine uses it (the analytic engine's
// evaluations and the packet engine).
//
// It is a monotone queue: an event may not be pushed before the time of the last event popped
// (engines never schedule into the past). That allows a radix heap (Ahuja, Mehlhorn, Orlin and
// Tarjan): an event goes to bucket b = the highest bit in which its time differs from the last
// popped time (bucket 0: the same time), so a push is an append. Popping from an empty bucket 0
// moves the lowest non-empty bucket into lower ones around its least time; each event moves
// down a few times at most. Two events of one time always share a bucket and keep their
// insertion order through every move, so the order is exactly (time, insertion). Peeking at the
// next time settles bucket 0 the same way; an engine may then still push an event before that
// next one, as long as not before the last popped (the base is lowered: rare, and cheap).
// No allocation per event beyond amortised growth of the buckets.
#pragma once

#include "ddlsim/core/sim_time.hpp"
#include "ddlsim/core/units.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace ddlsim::sim {

template <typename Payload> class EventQueue {
public:
  // `time` must not be before the time of the last event popped. A time at or past
  // kMaxSimulatedPs throws (sim_time.hpp): an engine's clock never wraps around.
  void push(Picoseconds time, const Payload& payload) {
    checked_time(time);
    if (time < last_) [[unlikely]]
      lower_base(time);
    buckets_[bucket_of(time)].push_back(Entry{time, payload});
    ++size_;
  }
  bool empty() const { return size_ == 0; }
  // The earliest time (the queue must not be empty).
  Picoseconds next_time() {
    settle();
    return last_;
  }
  // Removes the earliest event; its time is next_time() before the call.
  Payload pop() {
    settle();
    --size_;
    const Payload payload = buckets_[0][head_++].payload;
    if (head_ == buckets_[0].size()) {
      buckets_[0].clear();
      head_ = 0;
    }
    return payload;
  }
  std::size_t size() const { return size_; }

private:
  struct Entry {
    Picoseconds time;
    Payload payload;
  };
  static constexpr int kBuckets = 65;

  std::size_t bucket_of(Picoseconds time) const {
    const auto diff = static_cast<std::uint64_t>(time) ^ static_cast<std::uint64_t>(last_);
    return diff == 0 ? 0 : static_cast<std::size_t>(64 - __builtin_clzll(diff));
  }
  // Makes bucket 0 hold the earliest events (in insertion order).
  void settle() {
    if (head_ < buckets_[0].size()) return;
    std::size_t b = 1;
    while (buckets_[b].empty()) ++b;
    std::vector<Entry>& from = buckets_[b];
    Picoseconds least = from.front().time;
    for (const Entry& e : from) least = std::min(least, e.time);
    last_ = least;
    for (const Entry& e : from) buckets_[bucket_of(e.time)].push_back(e);
    from.clear();
  }
  // A peek (next_time) moved the base to the next event's time and an event comes before it
  // (not before the last popped, so nothing of bucket 0 was popped yet). With the base lowered
  // to `time`, the events of buckets 0..h (h: the highest bit in which `time` and the base
  // differ) all belong to bucket h + 1, which is empty, and the higher buckets stay as they are.
  // Events of one time move together, in order. Kept out of line: push stays small enough to
  // inline into the engines' handlers.
  [[gnu::noinline, gnu::cold]] void lower_base(Picoseconds time) {
    const std::size_t top = bucket_of(time);
    std::vector<Entry>& into = buckets_[top];
    for (std::size_t b = 0; b < top; ++b) {
      const std::size_t first = b == 0 ? head_ : 0;
      into.insert(into.end(), buckets_[b].begin() + static_cast<std::ptrdiff_t>(first),
                  buckets_[b].end());
      buckets_[b].clear();
    }
    head_ = 0;
    last_ = time;
  }

  std::array<std::vector<Entry>, kBuckets> buckets_;
  std::size_t head_ = 0; // bucket 0 is consumed from the front
  std::size_t size_ = 0;
  Picoseconds last_ = 0; // the time of bucket 0: the last popped, or (after a peek) the next
};

// LookaheadQueue: an EventQueue whose next few events are taken out ahead of time into a short
// window, in the same (time, insertion) order, so that an engine can see (and prefetch the
// memory of) the events it will handle next, across instants. An event pushed earlier than the
// window's last one is inserted into the window after the window's events of its time or
// earlier; any other goes to the queue, every event of which comes after the whole window. Pop
// order is therefore exactly the EventQueue's.
template <typename Payload> class LookaheadQueue {
public:
  struct Entry {
    Picoseconds time;
    Payload payload;
  };

  // Keeps up to `depth` events in the window.
  explicit LookaheadQueue(std::size_t depth) : depth_(depth) {}

  // Returns the window index the event went to, or window_size() if it went to the queue.
  std::size_t push(Picoseconds time, const Payload& payload) {
    checked_time(time);
    const std::size_t size = window_size();
    if (size == 0 || time >= window_[window_.size() - 1].time) {
      queue_.push(time, payload);
      return size;
    }
    // After every window event of its time or earlier: it is newer than all of them.
    const auto first = window_.begin() + static_cast<std::ptrdiff_t>(head_);
    const auto at =
        std::upper_bound(first, window_.end(), time,
                         [](Picoseconds t, const Entry& entry) { return t < entry.time; });
    const auto index = static_cast<std::size_t>(at - first);
    window_.insert(at, Entry{time, payload});
    return index;
  }
  bool empty() const { return window_size() == 0 && queue_.empty(); }
  // Moves events from the queue into the window until it holds `depth` (or the queue is
  // empty); returns how many came, which are the last ones of the window.
  std::size_t fill() {
    std::size_t added = 0;
    while (window_size() < depth_ && !queue_.empty()) {
      const Picoseconds time = queue_.next_time();
      window_.push_back(Entry{time, queue_.pop()});
      ++added;
    }
    return added;
  }
  // The window: the next events in order (index 0 is next). Call fill() first.
  std::size_t window_size() const { return window_.size() - head_; }
  const Entry& at(std::size_t index) const { return window_[head_ + index]; }
  Picoseconds next_time() const { return at(0).time; } // after fill(), when not empty
  Payload pop() {
    const Payload payload = window_[head_++].payload;
    if (head_ == window_.size()) {
      window_.clear();
      head_ = 0;
    } else if (head_ >= kCompactAfter) {
      window_.erase(window_.begin(), window_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    return payload;
  }

private:
  static constexpr std::size_t kCompactAfter = 64;
  std::size_t depth_;
  EventQueue<Payload> queue_;
  std::vector<Entry> window_; // entries [head_, end) are the window
  std::size_t head_ = 0;
};

} // namespace ddlsim::sim
