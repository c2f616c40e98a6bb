// Chrome trace (chrome://tracing, Perfetto) of simulated steps: one track per rank and channel.
#pragma once

#include "ddlsim/sim/analytic_engine.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace ddlsim::sim {

struct TraceSection {
  std::string name; // e.g. "all_reduce 64 MiB ring": one trace process per section
  const std::vector<StepRecord>* steps;
};

void write_chrome_trace(const std::vector<TraceSection>& sections, std::ostream& out);

} // namespace ddlsim::sim
