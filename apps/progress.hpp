// Progress of long simulations on stderr (only when stderr is a terminal), and the
// --max-wall-seconds deadline: the engine asks `keep_going` every few thousand steps.
#pragma once

#include "ddlsim/core/units.hpp"

#include <chrono>
#include <cstdint>
#include <string>

namespace ddlsim::cli {

class Progress {
public:
  // max_wall_seconds <= 0: no deadline.
  explicit Progress(double max_wall_seconds);

  // Names what is being simulated, e.g. "all_reduce 64 MiB ring (3/14)", and what the engine
  // counts ("steps", or "events" for the packet engine).
  void begin(std::string label, std::string unit = "steps");
  // Returns false once the deadline has passed. Redraws the status line at most 4 times a second.
  bool keep_going(Picoseconds simulated, std::uint64_t steps_done);
  // Clears the status line.
  void end();
  bool deadline_passed() const { return deadline_passed_; }
  double elapsed_seconds() const;

private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_ = Clock::now();
  Clock::time_point label_start_ = start_;
  Clock::time_point last_draw_ = start_;
  double max_wall_seconds_;
  bool terminal_;
  bool drawn_ = false;
  bool deadline_passed_ = false;
  std::string label_;
  std::string unit_ = "steps";
};

} // namespace ddlsim::cli
