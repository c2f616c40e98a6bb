// DelayQueue: the packet engine's event queue. It pops in exactly the order of the shared
// EventQueue (sim/event_queue.hpp): by time, ties first-in first-out, so reports stay
// byte-identical; it is laid out for what the packet engine pushes.
//
// Nearly every packet event is due a fixed delay after the clock: a transmit-done one
// serialization ahead, an arrival a serialization and a link latency ahead, and a run has few
// such delays (one per kind of link and packet size). Events pushed with one delay from a clock
// that never goes back come in time order, so each delay's events form a first-in first-out
// run that needs no sorting: the queue keeps kFifos of them, a push going to the one its delay
// hashes to when that one is empty or ends no later than the event (any event that keeps a
// run in order may join it: the hash only makes that likely). Events that fit no run (timers,
// overheads, compute steps, a transmit-done booked while a port is busy) go to a binary heap.
// Every event carries its insertion number, and the next event is the least (time, insertion)
// among the runs' first events (a small heap of them) and the heap's top. The radix heap this
// replaces moved every event 5.9 times on average at 1,024 GPUs (docs/benchmarks.md); a
// calendar of time buckets spent 14% of the CPU sorting them. Here an event is written once
// and read once, both in order.
//
// The same contract as EventQueue: never push before the time of the last event popped; an
// engine may peek at the next time and then push an earlier event (not before the last popped).
#pragma once

#include "ddlsim/core/sim_time.hpp"
#include "ddlsim/core/units.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace ddlsim::sim::packet {

template <typename Payload> class DelayQueue {
public:
  void push(Picoseconds time, const Payload& payload) {
    checked_time(time);
    if (time < popped_) [[unlikely]]
      throw std::logic_error("packet engine: an event was scheduled before the current time");
    const Entry entry{time, pushed_++, payload};
    // Fibonacci hashing of the delay (Knuth, TAOCP vol. 3, 6.4) onto the runs.
    const auto delay = static_cast<std::uint64_t>(time - popped_);
    Fifo& fifo = fifos_[(delay * 0x9e3779b97f4a7c15ull) >> (64 - kFifoBits)];
    if (fifo.empty()) {
      fifo.push(entry);
      heads_.push_back(Head{time, entry.pushed, static_cast<std::uint32_t>(&fifo - fifos_.data())});
      std::push_heap(heads_.begin(), heads_.end(), later_);
    } else if (fifo.last_time() <= time) {
      fifo.push(entry);
    } else {
      others_.push_back(entry);
      std::push_heap(others_.begin(), others_.end(), later_);
    }
    ++size_;
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  // The earliest time (the queue must not be empty).
  Picoseconds next_time() const {
    return from_others() ? others_.front().time : heads_.front().time;
  }

  // Removes the earliest event; its time is next_time() before the call.
  Payload pop() {
    --size_;
    if (from_others()) {
      std::pop_heap(others_.begin(), others_.end(), later_);
      const Entry entry = others_.back();
      others_.pop_back();
      popped_ = entry.time;
      return entry.payload;
    }
    Fifo& fifo = fifos_[heads_.front().fifo];
    const Entry entry = fifo.pop();
    popped_ = entry.time;
    if (fifo.empty()) {
      std::pop_heap(heads_.begin(), heads_.end(), later_);
      heads_.pop_back();
    } else {
      const Entry& next = fifo.front();
      heads_.front().time = next.time;
      heads_.front().pushed = next.pushed;
      sift_down_first();
    }
    return entry.payload;
  }

  // The event `k` places after the first of the earliest run, if that run has it, else
  // nullptr: a hint for prefetching its memory (events of other runs may come before it).
  const Payload* ahead(std::size_t k) const {
    if (heads_.empty()) return nullptr;
    const Fifo& fifo = fifos_[heads_.front().fifo];
    return fifo.size() > k ? &fifo.at(k).payload : nullptr;
  }

private:
  static constexpr int kFifoBits = 6;
  static constexpr std::size_t kFifos = std::size_t{1} << kFifoBits;
  static constexpr std::size_t kPrefetchEntries = 8; // four cache lines of 32-byte entries

  struct Entry {
    Picoseconds time;
    std::uint64_t pushed; // insertion number
    Payload payload;
  };
  // A run's first event, in the heap of runs.
  struct Head {
    Picoseconds time;
    std::uint64_t pushed;
    std::uint32_t fifo;
  };
  struct Later {
    template <typename A, typename B> bool operator()(const A& a, const B& b) const {
      return a.time != b.time ? a.time > b.time : a.pushed > b.pushed;
    }
  };
  // A ring buffer of entries in time order; its capacity doubles when full.
  class Fifo {
  public:
    bool empty() const { return count_ == 0; }
    std::size_t size() const { return count_; }
    Picoseconds last_time() const { return ring_[(first_ + count_ - 1) & mask_].time; }
    const Entry& front() const { return ring_[first_]; }
    const Entry& at(std::size_t i) const { return ring_[(first_ + i) & mask_]; }
    void push(const Entry& entry) {
      if (count_ == ring_.size()) grow();
      ring_[(first_ + count_) & mask_] = entry;
      ++count_;
    }
    Entry pop() {
      // A run is read in order but 64 of them interleave: fetch a few lines ahead of this one.
      __builtin_prefetch(&ring_[(first_ + kPrefetchEntries) & mask_]);
      const Entry entry = ring_[first_];
      first_ = (first_ + 1) & mask_;
      --count_;
      return entry;
    }

  private:
    void grow() {
      std::vector<Entry> bigger(std::max<std::size_t>(16, 2 * ring_.size()));
      for (std::size_t i = 0; i < count_; ++i) bigger[i] = at(i);
      ring_.swap(bigger);
      first_ = 0;
      mask_ = ring_.size() - 1;
    }
    std::vector<Entry> ring_;
    std::size_t first_ = 0;
    std::size_t count_ = 0;
    std::size_t mask_ = 0;
  };

  bool from_others() const {
    if (others_.empty()) return false;
    if (heads_.empty()) return true;
    return later_(heads_.front(), others_.front());
  }

  // The first run's first event changed (to a later one): restore the heap of runs.
  void sift_down_first() {
    const std::size_t n = heads_.size();
    const Head moving = heads_[0];
    std::size_t at = 0;
    for (;;) {
      std::size_t child = 2 * at + 1;
      if (child >= n) break;
      if (child + 1 < n && later_(heads_[child], heads_[child + 1])) ++child;
      if (!later_(moving, heads_[child])) break;
      heads_[at] = heads_[child];
      at = child;
    }
    heads_[at] = moving;
  }

  std::array<Fifo, kFifos> fifos_{};
  std::vector<Head> heads_;   // a heap of the non-empty runs by their first (time, insertion)
  std::vector<Entry> others_; // a heap of the events that fit no run
  std::uint64_t pushed_ = 0;  // insertion numbers
  std::size_t size_ = 0;
  Picoseconds popped_ = 0; // the time of the last event popped
  Later later_;
};

} // namespace ddlsim::sim::packet
