// Chrome trace (chrome://tracing, Perfetto) of simulated steps: one track per rank and channel.
#pragma once

#include "ddlsim/sim/analytic_engine.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace ddlsim::sim {

// A sampled value over time, drawn by Perfetto as a counter track (e.g. a switch port's queue).
struct TraceCounterPoint {
  std::uint32_t track = 0; // index into TraceSection::counter_names
  Picoseconds time = 0;
  double value = 0;
};

struct TraceSection {
  std::string name; // e.g. "all_reduce 64 MiB ring": one trace process per section
  const std::vector<StepRecord>* steps;
  std::vector<std::string> counter_names{};  // e.g. "queue bytes leaf0 -> spine1"
  std::vector<TraceCounterPoint> counters{}; // in time order per track
};

void write_chrome_trace(const std::vector<TraceSection>& sections, std::ostream& out);

} // namespace ddlsim::sim
