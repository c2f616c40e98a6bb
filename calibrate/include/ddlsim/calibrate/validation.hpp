// Validation: the simulated time of every measured point against the measurement, with the
// summary people quote (median, p90 and max |error|), and cross-validation: fit on a subset of
// the points and predict the rest, as a user planning a bigger cluster does.
#pragma once

#include "ddlsim/calibrate/fit_calibration.hpp"

#include <ostream>
#include <span>
#include <string>
#include <vector>

namespace ddlsim::calib {

struct ValidationRow {
  MeasuredPoint point;
  Prediction simulated;
  double error_percent = 0; // 100 (simulated - measured) / measured
  bool predicted = true;    // cross-validation: false for a point the fit saw
};

struct ErrorSummary {
  std::size_t points = 0;
  double median = 0, p90 = 0, max = 0; // of |error %|
};

ErrorSummary summarize(std::span<const ValidationRow> rows, std::uint64_t min_bytes);

struct ValidationReport {
  std::string mode; // "calibration FILE", "cross-validation kfold:5", ...
  std::vector<ValidationRow> rows;
  std::uint64_t min_bytes = 64 * 1024; // the goal's size threshold
  ErrorSummary all, large;             // every (predicted) point; those >= min_bytes
  std::vector<std::string> notes;      // per fit of a cross-validation: protocol selection
  // Cross-validation: one line per fit that needed a physically impossible value (a model
  // mismatch: its predictions are not a success of the model, whatever their error).
  std::vector<std::string> mismatches;
};

ValidationReport validate(const PointModel& model, const Calibration& calibration,
                          std::span<const MeasuredPoint> points, std::uint64_t min_bytes);
// With several calibrations, each on its node groups (a heterogeneous cluster).
ValidationReport validate(const PointModel& model, std::span<const Calibration> calibrations,
                          std::span<const MeasuredPoint> points, std::uint64_t min_bytes);

// How to split points into fit and predict sets:
//   "kfold:K"          K folds by size rank (point i in fold i mod K); every point predicted once
//   "sizes:A,B,..."    fit on these sizes (e.g. "sizes:64KiB,256MiB"), predict the others
//   "ranks:N"          fit on points with N ranks, predict the others (one node count -> another)
struct CrossValidation {
  std::string text;
  enum class Kind { kfold, sizes, ranks } kind = Kind::kfold;
  int folds = 5;
  std::vector<std::uint64_t> sizes;
  int ranks = 0;
};
// Throws InputError naming --cross-validate.
CrossValidation parse_cross_validation(const std::string& text);

ValidationReport cross_validate(const PointModel& model, std::span<const MeasuredPoint> points,
                                const CrossValidation& how, const FitOptions& options,
                                std::uint64_t min_bytes);

void print_validation(const ValidationReport& report, std::ostream& out);
Json to_json(const ValidationReport& report);

} // namespace ddlsim::calib
