// The settings every engine takes alike (overheads and local rates from a calibration, the
// seed, the progress callback), copied from the analytic options the commands fill first, so
// the flow and packet engines never miss one that the analytic engine gets.
#pragma once

#include "ddlsim/sim/analytic_engine.hpp"

namespace ddlsim::cli {

// `Options` is sim::flow::FlowOptions or sim::packet::PacketOptions.
template <class Options> void copy_shared_settings(const sim::AnalyticOptions& from, Options& to) {
  to.per_step_overhead = from.per_step_overhead;
  to.reduce_bytes_per_second = from.reduce_bytes_per_second;
  to.copy_bytes_per_second = from.copy_bytes_per_second;
  to.seed = from.seed;
  to.progress = from.progress;
}

} // namespace ddlsim::cli
