// Fits a Calibration to measured points: the parameters of the point model (per link class
// latency and efficiency, per-step overhead, launch overhead, GPU reduction rate, and per extra
// protocol a bandwidth factor and per-step overhead) by robust least squares on
// log(simulated / measured), so every size weighs by its relative error: small sizes fix the
// latencies and overheads, large ones the bandwidths.
#pragma once

#include "ddlsim/calibrate/calibration.hpp"
#include "ddlsim/calibrate/point_model.hpp"

#include <span>
#include <string>
#include <vector>

namespace ddlsim::calib {

struct FitOptions {
  // Protocols to fit, the bandwidth one first: "simple", "ll", "ll128".
  std::vector<std::string> protocols{"simple", "ll"};
  // A protocol NCCL may or may not have run (the log does not say, e.g. LL128 without a
  // version): fitted with and without it, kept when the data support it (BIC). "" = none.
  std::string optional_protocol;
  int max_iterations = 100;
};

// A parameter counts as determined by the data only up to this relative standard error.
inline constexpr double kMaxDeterminedRelativeError = 0.5;

struct ParameterEstimate {
  std::string name; // e.g. "network.latency_ns"
  double value = 0;
  double relative_se = 0; // standard error / value (from the log-space fit)
  // The data constrain it more than its prior does, with relative_se at most
  // kMaxDeterminedRelativeError.
  bool identified = false;
};

// A fitted value no hardware can have: a link efficiency or a protocol's bandwidth factor
// outside (0, 1] (faster than the nominal rate, or no rate), or a negative latency or overhead.
// A fit that needs one says the model does not describe the system (issue 16: "reported as a
// model mismatch, not used"), however small its residuals.
struct ImpossibleValue {
  std::string parameter; // e.g. "network.efficiency"
  double value = 0;
  std::string why;         // "an efficiency above 1 (faster than the nominal link rate)"
  bool determined = false; // whether the data determined it (ParameterEstimate::identified)
};
std::string describe(const ImpossibleValue& value); // "network.efficiency = 4.65: an efficiency..."

struct FitReport {
  Calibration calibration;
  std::vector<ParameterEstimate> parameters;
  std::vector<Prediction> predictions; // at the fitted calibration, one per point
  std::vector<double> residuals;       // log(simulated / measured)
  std::vector<double> weights;         // Huber weights of the last iteration
  int iterations = 0;
  int evaluations = 0;
  double loss = 0;                         // Huber loss of the residuals in units of their noise
  std::string protocol_selection;          // with optional_protocol: what was decided and why
  std::vector<ImpossibleValue> impossible; // empty: every fitted value is physically possible
};

// Throws InputError for an unknown protocol name or no points.
FitReport fit_calibration(const PointModel& model, std::span<const MeasuredPoint> points,
                          const FitOptions& options);

} // namespace ddlsim::calib
