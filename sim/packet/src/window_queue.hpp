// WindowQueue: the packet engine's event queue. It pops in exactly the order of the shared
// EventQueue (sim/event_queue.hpp): by time, ties first-in first-out, so reports stay
// byte-identical; it is laid out for what the packet engine pushes.
//
// Nearly every packet event is due within a microsecond of the clock: a transmit-done one
// serialization ahead, an arrival a serialization and a link latency ahead (a 4 KiB packet at
// 200 Gb/s takes 166 ns; fabric links in the benchmarks take 500 ns). Those go into a calendar
// (R. Brown, "Calendar queues", CACM 31(10), 1988) of kBuckets buckets of 2^kShift ps each,
// covering the window [the bucket of the last popped time, + kBuckets buckets): a push is an
// append to its bucket, and a bucket is sorted by time (stably: its entries were appended in
// insertion order) once, when it becomes the earliest; pushes into the earliest bucket after
// that go to their place by time, after the entries of their time. The radix heap this replaces
// moved every event 5.9 times on average at 1,024 GPUs (docs/benchmarks.md). Events beyond the
// window (retransmission timers, per-step overheads, compute steps) go to a binary heap ordered
// by (time, insertion number).
//
// Why ties between the two parts need no insertion number: an event went to the heap because
// its time t was at or past the window's end when it was pushed, and one of the same time went
// to the calendar because t was before the window's end when it was pushed. The window's end
// never moves back (it follows the last popped time), so the heap's event was pushed first.
//
// The same contract as EventQueue: never push before the time of the last event popped; an
// engine may peek at the next time and then push an earlier event (not before the last popped).
#pragma once

#include "ddlsim/core/sim_time.hpp"
#include "ddlsim/core/units.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <vector>

namespace ddlsim::sim::packet {

template <typename Payload> class WindowQueue {
public:
  void push(Picoseconds time, const Payload& payload) {
    checked_time(time);
    if (time < popped_) [[unlikely]]
      throw std::logic_error("packet engine: an event was scheduled before the current time");
    const std::uint64_t slot = static_cast<std::uint64_t>(time) >> kShift;
    if (slot - base_slot_ >= kBuckets) [[unlikely]] {
      far_.push_back(FarEntry{time, far_pushed_++, payload});
      std::push_heap(far_.begin(), far_.end(), later_);
      return;
    }
    const std::size_t index = slot & kMask;
    Bucket& bucket = buckets_[index];
    if (bucket.sorted && time < bucket.entries.back().time) {
      // The earliest bucket, already sorted: after the entries of its time or earlier.
      const auto at = std::upper_bound(
          bucket.entries.begin() + static_cast<std::ptrdiff_t>(bucket.head), bucket.entries.end(),
          time, [](Picoseconds t, const Entry& entry) { return t < entry.time; });
      bucket.entries.insert(at, Entry{time, payload});
    } else {
      bucket.entries.push_back(Entry{time, payload});
    }
    occupied_[index >> 6] |= std::uint64_t{1} << (index & 63);
    ++near_size_;
    if (earliest_ != kNone && slot < earliest_slot_) earliest_ = kNone;
  }

  bool empty() const { return near_size_ == 0 && far_.empty(); }
  std::size_t size() const { return near_size_ + far_.size(); }

  // The earliest time (the queue must not be empty).
  Picoseconds next_time() {
    if (from_far()) return far_.front().time;
    const Bucket& bucket = buckets_[earliest_];
    return bucket.entries[bucket.head].time;
  }

  // The event `k` places after the next one if it is in the same bucket, else nullptr: a hint
  // for prefetching its memory (an event pushed before it later moves it back).
  const Payload* ahead(std::size_t k) const {
    if (earliest_ == kNone) return nullptr;
    const Bucket& bucket = buckets_[earliest_];
    const std::size_t at = bucket.head + k;
    return at < bucket.entries.size() ? &bucket.entries[at].payload : nullptr;
  }

  // Removes the earliest event; its time is next_time() before the call.
  Payload pop() {
    if (from_far()) {
      std::pop_heap(far_.begin(), far_.end(), later_);
      const FarEntry entry = far_.back();
      far_.pop_back();
      moved_to(entry.time);
      return entry.payload;
    }
    Bucket& bucket = buckets_[earliest_];
    const Entry entry = bucket.entries[bucket.head++];
    --near_size_;
    if (bucket.head == bucket.entries.size()) {
      bucket.entries.clear();
      bucket.head = 0;
      bucket.sorted = false;
      occupied_[earliest_ >> 6] &= ~(std::uint64_t{1} << (earliest_ & 63));
      earliest_ = kNone;
    }
    moved_to(entry.time);
    return entry.payload;
  }

private:
  // 2^12 ps = 4.1 ns buckets, 256 of them: a window of 1.05 us, past a 4 KiB packet's
  // serialization plus a 500 ns link latency at 200 Gb/s (what the packet events wait for).
  // Measured on bench_packet_scale 1024 33554432 (docs/benchmarks.md): 4,096 buckets of 256 ps
  // cost more CPU than the radix heap (a push stores to one of 4,096 scattered bucket ends);
  // 64 to 256 buckets of 4 to 16 ns took 8-15% less CPU than it.
  static constexpr int kShift = 12;
  static constexpr std::size_t kBuckets = 256;
  static constexpr std::size_t kMask = kBuckets - 1;
  static constexpr std::size_t kWords = kBuckets / 64;
  static constexpr std::size_t kNone = ~std::size_t{0};
  static constexpr int kMaxMergedRuns = 8;

  struct Entry {
    Picoseconds time;
    Payload payload;
  };
  struct FarEntry {
    Picoseconds time;
    std::uint64_t pushed; // insertion number among the heap's events
    Payload payload;
  };
  struct Later {
    bool operator()(const FarEntry& a, const FarEntry& b) const {
      return a.time != b.time ? a.time > b.time : a.pushed > b.pushed;
    }
  };
  struct Bucket {
    std::vector<Entry> entries; // [head, end) wait; by time when `sorted`
    std::uint32_t head = 0;
    bool sorted = false;
  };

  // The clock moved to `time` (an event of that time was popped): the window starts at its
  // bucket.
  void moved_to(Picoseconds time) {
    popped_ = time;
    base_slot_ = static_cast<std::uint64_t>(time) >> kShift;
  }

  // Whether the earliest event is the heap's; otherwise finds the calendar's earliest bucket
  // (earliest_), sorted. Ties go to the heap (see the top of the file).
  bool from_far() {
    if (near_size_ == 0) return true;
    if (earliest_ == kNone) find_earliest();
    if (far_.empty()) return false;
    const Bucket& bucket = buckets_[earliest_];
    return far_.front().time <= bucket.entries[bucket.head].time;
  }

  void find_earliest() {
    const std::size_t start = base_slot_ & kMask;
    std::size_t word = start >> 6;
    std::uint64_t bits = occupied_[word] & (~std::uint64_t{0} << (start & 63));
    // At most every word once, and the first again for the bits below `start`.
    for (std::size_t step = 0; bits == 0 && step < kWords; ++step) {
      word = (word + 1) % kWords;
      bits = occupied_[word];
    }
    const std::size_t index = (word << 6) + static_cast<std::size_t>(__builtin_ctzll(bits));
    earliest_ = index;
    earliest_slot_ = base_slot_ + ((index - start) & kMask);
    Bucket& bucket = buckets_[index];
    if (!bucket.sorted) {
      sort_by_time(bucket.entries);
      bucket.sorted = true;
    }
  }

  // Appended in insertion order, a stable sort by time gives (time, insertion). A bucket is a
  // few ascending runs, one per delay its events were pushed with (an arrival's events were
  // pushed a link latency before the transmit-done events beside them): the runs are merged
  // into the first one by one, stably, through a kept buffer (std::stable_sort allocated its
  // buffer at every call and was 8% of the CPU). More runs than that: a stable sort.
  void sort_by_time(std::vector<Entry>& entries) {
    const auto by_time = [](const Entry& a, const Entry& b) { return a.time < b.time; };
    const auto begin = entries.begin();
    const auto run_end = [&](std::size_t from) {
      std::size_t i = from + 1;
      while (i < entries.size() && entries[i - 1].time <= entries[i].time) ++i;
      return i;
    };
    std::size_t sorted = run_end(0);
    for (int runs = 1; sorted < entries.size(); ++runs) {
      if (runs == kMaxMergedRuns) {
        std::stable_sort(begin, entries.end(), by_time);
        return;
      }
      const std::size_t next = run_end(sorted);
      const auto a = static_cast<std::ptrdiff_t>(sorted), b = static_cast<std::ptrdiff_t>(next);
      merged_.clear();
      std::merge(begin, begin + a, begin + a, begin + b, std::back_inserter(merged_), by_time);
      std::copy(merged_.begin(), merged_.end(), begin);
      sorted = next;
    }
  }

  std::vector<Bucket> buckets_ = std::vector<Bucket>(kBuckets);
  std::array<std::uint64_t, kWords> occupied_{}; // a bit per non-empty bucket
  std::size_t near_size_ = 0;
  std::size_t earliest_ = kNone; // the earliest non-empty bucket, sorted; kNone: look it up
  std::uint64_t earliest_slot_ = 0;
  std::uint64_t base_slot_ = 0; // the bucket number of popped_: the window's first
  Picoseconds popped_ = 0;      // the time of the last event popped
  std::vector<FarEntry> far_;   // a heap: the earliest (time, pushed) at the front
  std::uint64_t far_pushed_ = 0;
  Later later_;
  std::vector<Entry> merged_; // sort_by_time's buffer
};

} // namespace ddlsim::sim::packet
