// What `ddlsim calibrate` and `ddlsim validate` share: their measurement flags, reading the
// measured files, and the cluster the points are modelled on (a scenario, or one inferred).
#pragma once

#include "ddlsim/calibrate/fit_calibration.hpp"
#include "ddlsim/calibrate/measured_files.hpp"
#include "ddlsim/scenario/scenario.hpp"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace ddlsim::cli {

struct MeasuredInputs {
  std::vector<std::string> files;
  std::string scenario;
  std::string op;
  int nodes = 0;
  int gpus_per_node = 0;
  std::string column = "mean"; // of the in-place and out-of-place times
  int ranks = 0;        // keep only points with this many ranks; 0 = all but 1-rank baselines
  bool lenient = false; // a log row that does not parse: a warning, not an error
};

// Adds --scenario, --op, --nodes, --gpus-per-node, --column, --ranks, --lenient.
void add_measured_flags(CLI::App& cmd, MeasuredInputs& inputs);

struct LoadedMeasurements {
  std::vector<calib::MeasuredSet> sets;
  std::vector<calib::MeasuredPoint> points; // all sets' points, in file order
  std::optional<Scenario> scenario;         // loaded without its "calibration"
  topo::ClusterSpec cluster;                // the scenario's, or inferred
  std::vector<std::string> notes;           // what was inferred or assumed
  // Where a log's own header contradicts --scenario (its GPU model, GPUs per node, nodes or
  // ranks): printed loudly on stderr, and kept in the calibration's source.
  std::vector<std::string> contradictions;
};

LoadedMeasurements load_measurements(const MeasuredInputs& inputs);

// What the measured runs forced NCCL's choice to: the --scenario's "nccl" object (NCCL_ALGO,
// NCCL_PROTO, channels) when its workload is a collective under "algorithm": "nccl"; none
// otherwise.
models::NcclOverrides measured_nccl_force(const LoadedMeasurements& loaded);

// What the header of `set` says about the measured system that `cluster` (the --scenario)
// contradicts: a GPU of another architecture, more GPUs per node, more nodes or more ranks than
// the scenario has. Fitting such a log to the scenario fits the wrong hardware (a
// V100 log on an A100 scenario gives the A100's links the V100's rates).
std::vector<std::string> layout_contradictions(const calib::MeasuredSet& set,
                                               const topo::ClusterSpec& cluster);

// The protocols to fit: the --protocols list when given, else NCCL's default rule applied to
// what the measurements and the cluster say (nccl_protocols.hpp), appended to `loaded.notes`;
// one protocol when every point names its algorithm (ddlsim reports: no NCCL protocols).
void choose_protocols(const std::string& flag, LoadedMeasurements& loaded, calib::FitOptions& fit);

// Loads a scenario file ignoring its "calibration" key (so that fits start from the hardware's
// nominal values, and cross-validation does not see a calibration fitted on all points).
Scenario load_uncalibrated_scenario(const std::string& file);

// The calibrations the scenario file runs with (what `ddlsim validate` checks without
// --calibration): its "calibration" files, each on its node groups, or its engine settings alone.
std::vector<calib::Calibration> scenario_calibrations(const std::string& scenario_file);

} // namespace ddlsim::cli
