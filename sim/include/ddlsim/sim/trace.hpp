// Chrome trace (chrome://tracing, Perfetto) of simulated steps: one track per rank and channel,
// at one of three levels of detail (TraceLevel).
#pragma once

#include "ddlsim/sim/analytic_engine.hpp"

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
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
  // A training iteration's section: per rank, when each iteration of its job ended (the job's
  // last optimizer step, models::JobIteration::iteration_times summed), for TraceLevel::iterations.
  // A rank without them (or a section without them) is one span from its first step to its last.
  std::vector<std::vector<Picoseconds>> iteration_ends{};
  // Per global rank, the GPU it runs on, e.g. "node1/gpu1, V100-SXM2-16GB", named in its
  // tracks; a rank without one is named by its number alone.
  std::vector<std::string> rank_gpus{};
};

// How much a trace holds. A step trace of a training iteration on a large cluster has millions
// of events (hundreds of MB); the coarser levels keep the same processes and named tracks with
// far fewer spans.
enum class TraceLevel {
  steps,       // every step of every rank and channel, plus the engine's counter tracks
  collectives, // per (rank, channel) track: one span per collective (a training channel's
               // collectives end at the zero-length join the schedule puts after each) and one
               // per busy stretch of a compute stream; no counter tracks
  iterations,  // per rank: one span per training iteration, and the compute and communication
               // phase of each on two more tracks; no counter tracks
};

// "steps", "collectives" or "iterations"; nullopt for anything else.
std::optional<TraceLevel> parse_trace_level(std::string_view text);

void write_chrome_trace(const std::vector<TraceSection>& sections, std::ostream& out,
                        TraceLevel level = TraceLevel::steps);

} // namespace ddlsim::sim
