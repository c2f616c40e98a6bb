// The per-rank floors of the dependency-order evaluation (rank_floor.hpp).
#include "rank_floor.hpp"

#include <limits>

namespace ddlsim::sim::detail::dependency_order {

// A step starts at or after its program's last_start (rule 1 of step.hpp), and at or after the
// end of the step it waits for, which is known or, for a step not started yet, no earlier than
// its program's last_start. A finished program starts nothing. So the least of these bounds over
// the rank's programs is at or below every later start of them, and stays so: bounds only rise,
// and the floor kept is the greatest one found.
void RankFloors::refresh(std::int32_t rank, std::span<const Program> programs,
                         std::span<const ProgramRare> rare, const ProgramNumbering& numbering) {
  Picoseconds floor = std::numeric_limits<Picoseconds>::max();
  for (std::uint32_t c = 0; c < numbering.channels; ++c) {
    const Program& program = programs[numbering.program_of(rank, static_cast<std::uint16_t>(c))];
    if (program.exhausted && !program.has_pending) continue;
    Picoseconds bound = program.last_start;
    if (program.has_pending && program.pending.has_wait() &&
        program.pending.wait_channel < numbering.channels) {
      const std::uint32_t q = numbering.program_of(rank, program.pending.wait_channel);
      const std::uint32_t step = program.pending_wait_step;
      if (step >= programs[q].next_index())
        bound = std::max(bound, programs[q].last_start);
      else // kUnknown and kRetired are below every time
        bound = std::max(bound, end_of(programs[q], rare[q], step));
    }
    floor = std::min(floor, bound);
  }
  Picoseconds& kept = floor_[static_cast<std::size_t>(rank)];
  if (floor != std::numeric_limits<Picoseconds>::max()) kept = std::max(kept, floor);
}

} // namespace ddlsim::sim::detail::dependency_order
