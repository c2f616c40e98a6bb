// EventQueue: small event values ordered by (time, insertion order), so that ties break
// first-in first-out and runs are deterministic.
//
// Lock-step schedules push thousands of events at one time, so events are kept in FIFO buckets of
// equal time, and only the buckets sit in a binary min-heap keyed by (time, creation order). An
// event joins a bucket only if it is the newest bucket of its time (found in a small cache of
// recent buckets); otherwise it opens a new one. Every event of an older bucket of a time was
// therefore inserted before every event of a newer one, so popping buckets in (time, creation)
// order and each bucket first-in first-out is exactly (time, insertion) order. No allocation per
// event beyond amortised growth: drained buckets are recycled.
#pragma once

#include "ddlsim/core/units.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <tuple>
#include <vector>

namespace ddlsim::sim {

template <typename Payload> class EventQueue {
public:
  void push(Picoseconds time, const Payload& payload) {
    std::uint32_t bucket = kNone;
    for (const CacheEntry& entry : cache_)
      if (entry.bucket != kNone && entry.time == time) bucket = entry.bucket;
    if (bucket == kNone) bucket = open(time);
    buckets_[bucket].items.push_back(payload);
    ++size_;
  }
  bool empty() const { return size_ == 0; }
  Picoseconds next_time() const { return std::get<0>(heap_.front()); }
  Payload pop() {
    const std::uint32_t id = std::get<2>(heap_.front());
    Bucket& bucket = buckets_[id];
    const Payload payload = bucket.items[bucket.head++];
    --size_;
    if (bucket.head == bucket.items.size()) close(id);
    return payload;
  }
  std::size_t size() const { return size_; }

private:
  static constexpr std::uint32_t kNone = 0xffffffffu;
  struct Bucket {
    std::vector<Payload> items;
    std::size_t head = 0;
  };
  struct CacheEntry {
    Picoseconds time = 0;
    std::uint32_t bucket = kNone;
  };
  using HeapEntry = std::tuple<Picoseconds, std::uint64_t, std::uint32_t>;
  static constexpr auto kLaterFirst = std::greater<HeapEntry>{};

  std::uint32_t open(Picoseconds time) {
    std::uint32_t id;
    if (free_.empty()) {
      id = static_cast<std::uint32_t>(buckets_.size());
      buckets_.emplace_back();
    } else {
      id = free_.back();
      free_.pop_back();
    }
    heap_.emplace_back(time, next_seq_++, id);
    std::push_heap(heap_.begin(), heap_.end(), kLaterFirst);
    // The time was not cached, so no older bucket of it is: this one becomes its newest.
    cache_[next_cache_] = CacheEntry{time, id};
    next_cache_ = (next_cache_ + 1) % cache_.size();
    return id;
  }
  void close(std::uint32_t id) {
    std::pop_heap(heap_.begin(), heap_.end(), kLaterFirst);
    heap_.pop_back();
    Bucket& bucket = buckets_[id];
    bucket.items.clear();
    bucket.head = 0;
    free_.push_back(id);
    for (CacheEntry& entry : cache_)
      if (entry.bucket == id) entry.bucket = kNone;
  }

  std::vector<Bucket> buckets_;
  std::vector<std::uint32_t> free_;
  std::vector<HeapEntry> heap_;
  std::array<CacheEntry, 4> cache_{};
  std::size_t next_cache_ = 0;
  std::uint64_t next_seq_ = 0;
  std::size_t size_ = 0;
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
