// The dependency-order evaluation's per-rank floors (dependency_order.cpp): once a schedule has
// cross-program waits (training iterations), a step's end may matter to a later step of another
// program of its rank, so it cannot be forgotten when its own program's last_start passes it.
// Each rank keeps a floor instead, a lower bound on every later start of its programs' steps;
// an end at or below both the floor and its program's last_start is forgotten, and a later wait
// on it starts at the floor or later, which wait_end times exactly.
#pragma once

#include "dependency_order_state.hpp"

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace ddlsim::sim::detail::dependency_order {

class RankFloors {
public:
  explicit RankFloors(std::size_t ranks) : floor_(ranks, 0) {}

  // At or below every later start of the rank's programs' steps.
  Picoseconds of(std::int32_t rank) const { return floor_[static_cast<std::size_t>(rank)]; }

  // The latest end a program of `rank` may forget once waits appeared: one at or before both its
  // last start and the rank's floor, which no later step of any program of the rank needs.
  Picoseconds forget_limit(const Program& program, std::int32_t rank) const {
    return std::min(program.last_start, of(rank));
  }

  // Raises the rank's floor to the least lower bound of the next start of its programs
  // (rank_floor.cpp says why each bound holds). `programs` and `rare` are indexed by
  // `numbering`.
  void refresh(std::int32_t rank, std::span<const Program> programs,
               std::span<const ProgramRare> rare, const ProgramNumbering& numbering);

private:
  std::vector<Picoseconds> floor_;
};

} // namespace ddlsim::sim::detail::dependency_order
