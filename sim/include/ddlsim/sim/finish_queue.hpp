// FinishQueue: the finish times of a FlowNetwork's active flows, earliest first. Flows that
// finish at the same instant share a bucket (rings and other symmetric collectives finish many
// flows at once), the buckets sit in a binary min-heap of (time, bucket), and every flow is in
// exactly one bucket: a new finish takes it out of its old one (a swap with the bucket's last
// id), and a bucket left empty leaves the heap at once. When many flows share links every finish
// re-times all of them; a queue that only appended new entries and skipped the stale ones when
// their time came (as before) spent most of a run on them (64 concurrent rings on 32 hosts: 60%
// of the CPU time popping, copying and sorting flows that no longer finished then).
#pragma once

#include "ddlsim/core/units.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

namespace ddlsim::sim {

class FinishQueue {
public:
  using Id = std::uint32_t;

  // Flow `id` finishes at `when` (instead of the finish it had, if any).
  void set(Id id, Picoseconds when) {
    if (id >= slots_.size()) slots_.resize(std::size_t{id} + 1);
    Slot& slot = slots_[id];
    if (slot.bucket != kNil) {
      if (heap_[position_[slot.bucket]].time == when) return;
      erase(id);
    }
    std::uint32_t bucket = kNil;
    for (const Recent& entry : recent_)
      if (entry.bucket != kNil && entry.time == when) bucket = entry.bucket;
    if (bucket == kNil) bucket = open_bucket(when);
    std::vector<Id>& ids = buckets_[bucket];
    slot.bucket = bucket;
    slot.index = static_cast<std::uint32_t>(ids.size());
    ids.push_back(id);
  }

  // The earliest finish; INT64_MAX when no flow has one.
  Picoseconds next() const {
    return heap_.empty() ? std::numeric_limits<Picoseconds>::max() : heap_.front().time;
  }

  // Appends the flows that finish at next() to `out` (in no order) and forgets their finishes.
  void take_earliest(std::vector<Id>& out) {
    const Picoseconds when = next();
    while (!heap_.empty() && heap_.front().time == when) {
      const std::uint32_t bucket = heap_.front().bucket;
      std::vector<Id>& ids = buckets_[bucket];
      for (const Id id : ids) slots_[id].bucket = kNil;
      out.insert(out.end(), ids.begin(), ids.end());
      ids.clear();
      close_bucket(bucket);
    }
  }

private:
  static constexpr std::uint32_t kNil = 0xffffffffu;
  struct Slot {
    std::uint32_t bucket = kNil; // kNil: no finish
    std::uint32_t index = 0;     // in its bucket
  };
  struct Entry {
    Picoseconds time;
    std::uint32_t bucket;
    bool operator<(const Entry& other) const {
      return time != other.time ? time < other.time : bucket < other.bucket;
    }
  };
  // The buckets opened last, to find one of the same time without a search.
  struct Recent {
    Picoseconds time = 0;
    std::uint32_t bucket = kNil;
  };

  void erase(Id id) {
    Slot& slot = slots_[id];
    const std::uint32_t bucket = slot.bucket;
    std::vector<Id>& ids = buckets_[bucket];
    const Id last = ids.back();
    ids[slot.index] = last;
    slots_[last].index = slot.index;
    ids.pop_back();
    slot.bucket = kNil;
    if (ids.empty()) close_bucket(bucket);
  }

  std::uint32_t open_bucket(Picoseconds when) {
    std::uint32_t bucket;
    if (free_.empty()) {
      bucket = static_cast<std::uint32_t>(buckets_.size());
      buckets_.emplace_back();
      position_.push_back(0);
    } else {
      bucket = free_.back();
      free_.pop_back();
    }
    heap_.push_back(Entry{when, bucket});
    sift_up(heap_.size() - 1);
    recent_[next_recent_] = Recent{when, bucket};
    next_recent_ = (next_recent_ + 1) % recent_.size();
    return bucket;
  }

  // Bucket `bucket` is empty: out of the heap and free for another time.
  void close_bucket(std::uint32_t bucket) {
    const std::size_t at = position_[bucket];
    const Entry last = heap_.back();
    heap_.pop_back();
    if (at < heap_.size()) {
      place(at, last);
      if (at > 0 && last < heap_[(at - 1) / 2])
        sift_up(at);
      else
        sift_down(at);
    }
    for (Recent& entry : recent_)
      if (entry.bucket == bucket) entry.bucket = kNil;
    free_.push_back(bucket);
  }

  void place(std::size_t at, const Entry& entry) {
    heap_[at] = entry;
    position_[entry.bucket] = static_cast<std::uint32_t>(at);
  }
  void sift_up(std::size_t at) {
    const Entry entry = heap_[at];
    while (at > 0) {
      const std::size_t parent = (at - 1) / 2;
      if (!(entry < heap_[parent])) break;
      place(at, heap_[parent]);
      at = parent;
    }
    place(at, entry);
  }
  void sift_down(std::size_t at) {
    const Entry entry = heap_[at];
    const std::size_t size = heap_.size();
    while (true) {
      std::size_t child = 2 * at + 1;
      if (child >= size) break;
      if (child + 1 < size && heap_[child + 1] < heap_[child]) ++child;
      if (!(heap_[child] < entry)) break;
      place(at, heap_[child]);
      at = child;
    }
    place(at, entry);
  }

  std::vector<Slot> slots_;              // by flow id
  std::vector<std::vector<Id>> buckets_; // flow ids of one finish time
  std::vector<std::uint32_t> position_;  // by bucket: its place in heap_
  std::vector<std::uint32_t> free_;      // buckets not in use
  std::vector<Entry> heap_;              // open buckets, earliest at the front
  std::array<Recent, 4> recent_{};
  std::size_t next_recent_ = 0;
};

} // namespace ddlsim::sim
