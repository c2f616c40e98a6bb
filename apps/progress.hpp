// Progress of long simulations on stderr, and the --max-wall-seconds deadline: the engine asks
// `keep_going` every few thousand steps (events for the packet engine, a thousand for the flow
// engine, whose steps are slower), so the line is redrawn and the deadline checked well within
// a second on every engine.
#pragma once

#include "ddlsim/core/units.hpp"

#include <chrono>
#include <cstdint>
#include <string>

namespace ddlsim::cli {

class Progress {
public:
  // max_wall_seconds <= 0: no deadline. The status line is drawn when stderr is a terminal (4
  // times a second, redrawn in place) or when `forced` (--progress: one line a second, for logs).
  Progress(double max_wall_seconds, bool forced);

  // Names what is being simulated, e.g. "all_reduce 64 MiB ring (3/14)", what the engine
  // counts ("steps", or "events" for the packet engine), and the share of the whole run's work
  // already done before it (e.g. the bytes of the sizes finished over all sizes' bytes), from
  // which the ETA is estimated; < 0: unknown (no ETA).
  void begin(std::string label, std::string unit = "steps", double work_done = -1);
  // Returns false once the deadline has passed. Redraws the status line when due.
  bool keep_going(Picoseconds simulated, std::uint64_t steps_done);
  // Clears the status line.
  void end();
  bool deadline_passed() const { return deadline_passed_; }
  double elapsed_seconds() const;
  // The status line for the current label (what keep_going draws), e.g. "all_reduce 1 GiB ring
  // (3/3): 1.2 M steps, 3.4 M steps/s, simulated 12.000 ms, wall 2.1 s, ETA 5 s".
  std::string status(Picoseconds simulated, std::uint64_t steps_done) const;

private:
  using Clock = std::chrono::steady_clock;
  void draw(Picoseconds simulated, std::uint64_t steps_done, Clock::time_point now);

  Clock::time_point start_ = Clock::now();
  Clock::time_point label_start_ = start_;
  Clock::time_point last_draw_ = start_;
  double max_wall_seconds_;
  bool terminal_;
  bool forced_;
  bool drawn_ = false;  // a terminal line to clear
  bool logged_ = false; // anything drawn yet
  bool deadline_passed_ = false;
  std::string label_;
  std::string unit_ = "steps";
  double work_done_ = -1;
};

} // namespace ddlsim::cli
