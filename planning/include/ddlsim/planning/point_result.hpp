// What simulating one point of a plan gives the planner, and its JSON form (for the result cache
// and for gathering results from MPI ranks).
#pragma once

#include "ddlsim/core/json_reader.hpp"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace ddlsim::plan {

// The nodes and GPUs a point uses of one node kind (its node group's preset name).
struct KindCount {
  std::string kind;
  int nodes = 0;
  int gpus = 0;

  bool operator==(const KindCount&) const = default;
};

struct PointMetrics {
  int gpus = 0;
  int nodes = 0;
  std::vector<KindCount> kinds;   // by kind name; empty when the point did not say
  double iteration_seconds = 0;   // one training iteration, or the collective at its largest size
  double samples_per_second = 0;  // training workloads; 0 otherwise
  double scaling_efficiency = -1; // training workloads, 0..1; < 0 when not applicable
  double train_seconds = 0;       // time to train the workload's epochs; 0 when not given
  std::string what;               // one line on what ran, e.g. "all_reduce 256 MiB ring"

  bool operator==(const PointMetrics&) const = default;
};

struct PointResult {
  std::size_t index = 0;                              // the sweep point
  std::vector<std::pair<std::string, Json>> settings; // (JSON pointer, value) per sweep axis
  std::string error;                                  // why the point failed; empty if it ran
  PointMetrics metrics;
  bool from_cache = false; // not part of the JSON: a cached result equals a fresh one

  bool ok() const { return error.empty(); }
};

Json to_json(const PointMetrics& metrics);
PointMetrics metrics_from_json(const Json& json);
Json to_json(const PointResult& result);
// Throws InputError (naming `where`) when `json` is not a point result.
PointResult point_result_from_json(const Json& json, const std::string& where);

} // namespace ddlsim::plan
