// The engines' bookkeeping for compute slowed by the communication kernels beside it
// (ddlsim/sim/compute_slowdown.hpp): the analytic engine's event-driven evaluation and the packet
// engine's schedule driver share it, so both slow compute by the same rule.
//
// A program (rank, channel) other than the compute stream holds its call's thread blocks
// (coll::Protocol::blocks_per_program) on its rank's GPU from the start of one of its
// communication steps (a send, receive, switch or local step: NCCL's kernel is resident while it
// waits for data too) until no such step of it is in flight. A compute step on the compute
// stream progresses at 1 / compute_slowdown(blocks on its rank, the GPU's SMs, its memory-bound
// share) of its rate: its remaining work is kept in picoseconds of unslowed time, and whenever its
// rank's blocks change its end is recomputed (a piecewise-constant rate). Changes are applied once
// per simulated instant (apply_changes), so a channel that ends a step and starts its next one at
// the same instant does not reschedule anything.
//
// Blocks are summed in fixed point (1/4096 of a block) so that a rank whose channels all went
// idle is back at exactly 0 whatever the order of the sums.
#pragma once

#include "ddlsim/collectives/call.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/sim/compute_slowdown.hpp"
#include "ddlsim/sim/gpu_rates.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

namespace ddlsim::sim::detail {

class ComputeSlowdownTracker {
public:
  struct Finished {
    std::uint32_t program = 0;
    std::uint32_t index = 0;
  };

  // `rates`: per rank (their SM counts); `protocols`: the schedule's (Step::protocol indexes
  // them; none: every step has the default protocol).
  ComputeSlowdownTracker(std::size_t programs, const std::vector<GpuRates>& rates,
                         const std::vector<coll::Protocol>& protocols)
      : in_flight_(programs, 0), held_(programs, 0), blocks_(rates.size(), 0),
        dirty_(rates.size(), 0), slots_of_rank_(rates.size()) {
    for (const GpuRates& rank : rates) sms_.push_back(rank.sms);
    for (const coll::Protocol& protocol : protocols)
      blocks_of_protocol_.push_back(protocol.blocks_per_program);
    if (blocks_of_protocol_.empty())
      blocks_of_protocol_.push_back(coll::Protocol{}.blocks_per_program);
  }

  // A communication step of program p (on `rank`, of protocol `protocol`) started / ended.
  void comm_started(std::uint32_t p, std::int32_t rank, std::uint8_t protocol) {
    if (in_flight_[p]++ != 0) return;
    held_[p] = std::llround(blocks_of_protocol_[protocol] * kScale);
    change(rank, held_[p]);
  }
  void comm_ended(std::uint32_t p, std::int32_t rank) {
    if (--in_flight_[p] != 0) return;
    change(rank, -held_[p]);
    held_[p] = 0;
  }

  // A compute step (program, index) of `rank` taking `duration` unslowed, `memory_bound_share`
  // of it in memory-bound kernels (coll::Step), starts at `now`; `schedule(time, slot,
  // generation)` is called with its end.
  template <class Schedule>
  void start(std::uint32_t program, std::uint32_t index, std::int32_t rank, Picoseconds duration,
             double memory_bound_share, Picoseconds now, Schedule&& schedule) {
    std::uint32_t id = 0;
    if (free_.empty()) {
      id = static_cast<std::uint32_t>(slots_.size());
      slots_.emplace_back();
    } else {
      id = free_.back();
      free_.pop_back();
    }
    Slot& slot = slots_[id];
    slot.program = program;
    slot.index = index;
    slot.rank = rank;
    slot.remaining = static_cast<double>(duration);
    slot.since = now;
    slot.memory_bound_share = memory_bound_share;
    slot.slowdown = slowdown_of(rank).of(memory_bound_share);
    slot.position = static_cast<std::uint32_t>(slots_of_rank_[rank_index(rank)].size());
    slots_of_rank_[rank_index(rank)].push_back(id);
    schedule(end_of(slot), id, ++slot.generation);
  }

  // The compute step of `slot` ends now if `generation` is its latest end; false: a stale event.
  bool finish(std::uint32_t id, std::uint32_t generation, Finished& finished) {
    Slot& slot = slots_[id];
    if (slot.generation != generation || slot.rank < 0) return false;
    finished = Finished{slot.program, slot.index};
    std::vector<std::uint32_t>& list = slots_of_rank_[rank_index(slot.rank)];
    const std::uint32_t moved = list.back();
    list[slot.position] = moved;
    slots_[moved].position = slot.position;
    list.pop_back();
    slot.rank = -1;
    free_.push_back(id);
    return true;
  }

  // Whether a rank's blocks changed since the last apply_changes (with compute steps running).
  bool has_changes() const { return !changed_.empty(); }

  // Recomputes the end of every compute step whose rank's blocks changed since the last call.
  template <class Schedule> void apply_changes(Picoseconds now, Schedule&& schedule) {
    for (const std::int32_t rank : changed_) {
      dirty_[rank_index(rank)] = 0;
      const RankSlowdown rank_slowdown = slowdown_of(rank);
      for (const std::uint32_t id : slots_of_rank_[rank_index(rank)]) {
        Slot& slot = slots_[id];
        const double slowdown = rank_slowdown.of(slot.memory_bound_share);
        if (slot.slowdown == slowdown) continue;
        slot.remaining -= static_cast<double>(now - slot.since) / slot.slowdown;
        if (slot.remaining < 0) slot.remaining = 0;
        slot.since = now;
        slot.slowdown = slowdown;
        schedule(end_of(slot), id, ++slot.generation);
      }
    }
    changed_.clear();
  }

private:
  static constexpr double kScale = 4096.0;

  struct Slot {
    std::uint32_t program = 0;
    std::uint32_t index = 0;
    std::int32_t rank = -1;     // -1: free
    std::uint32_t position = 0; // in slots_of_rank_[rank]
    std::uint32_t generation = 0;
    double remaining = 0; // picoseconds of unslowed work left at `since`
    Picoseconds since = 0;
    double slowdown = 1;
    double memory_bound_share = 0; // of the step's time (coll::Step::memory_bound_share)
  };

  static std::size_t rank_index(std::int32_t rank) { return static_cast<std::size_t>(rank); }
  RankSlowdown slowdown_of(std::int32_t rank) const {
    return rank_slowdown(static_cast<double>(blocks_[rank_index(rank)]) / kScale,
                         sms_[rank_index(rank)]);
  }
  static Picoseconds end_of(const Slot& slot) {
    return slot.since + static_cast<Picoseconds>(std::llround(slot.remaining * slot.slowdown));
  }
  void change(std::int32_t rank, std::int64_t delta) {
    if (delta == 0) return;
    blocks_[rank_index(rank)] += delta;
    if (!dirty_[rank_index(rank)] && !slots_of_rank_[rank_index(rank)].empty()) {
      dirty_[rank_index(rank)] = 1;
      changed_.push_back(rank);
    }
  }

  std::vector<std::uint32_t> in_flight_;   // per program: communication steps in flight
  std::vector<std::int64_t> held_;         // per program: blocks it holds (fixed point)
  std::vector<double> blocks_of_protocol_; // thread blocks each program of its calls holds
  std::vector<int> sms_;                   // per rank
  std::vector<std::int64_t> blocks_;       // per rank, fixed point
  std::vector<std::uint8_t> dirty_;        // per rank: in changed_
  std::vector<std::int32_t> changed_;
  std::vector<std::vector<std::uint32_t>> slots_of_rank_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_;
};

} // namespace ddlsim::sim::detail
