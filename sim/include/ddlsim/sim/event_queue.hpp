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

} // namespace ddlsim::sim
