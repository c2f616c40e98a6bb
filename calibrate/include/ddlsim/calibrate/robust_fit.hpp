// Robust nonlinear least squares: Levenberg-Marquardt inside iteratively reweighted least
// squares with Huber weights, and a weak Gaussian prior per parameter so that parameters the
// data cannot determine stay at their prior instead of wandering (and are reported as such).
//
// Minimises  sum_i w_i r_i(x)^2 + sum_j ((x_j - c_j) / s_j)^2  where the Huber weight
// w_i = min(1, k·σ / |r_i|) is recomputed from the residuals of the last step (σ = 1.4826 ×
// the median absolute residual, at least 1: the residuals come in units of their noise), so a few
// outliers (a noisy row, a protocol switch the model does not have) cannot pull the fit. The
// Jacobian is taken by central differences, because the model is a simulator.
#pragma once

#include <functional>
#include <vector>

namespace ddlsim::calib {

struct RobustFitProblem {
  // Data residuals at x in units of their noise level (e.g. log(model / measured) / 0.05 for
  // 5% measurement noise), so that they weigh against the priors; same length at every x, or
  // empty where the model cannot be evaluated (a point outside its domain): a step there is
  // rejected and a difference there is taken on the other side. The start must evaluate.
  std::function<std::vector<double>(const std::vector<double>&)> residuals;
  std::vector<double> start;
  std::vector<double> prior_center;
  std::vector<double> prior_sigma; // > 0
  double huber_k = 1.345;
  double difference_step = 3e-2; // in the parameters' (log) units
  int max_iterations = 40;
};

struct RobustFitResult {
  std::vector<double> x;
  // Standard error of each parameter, from the inverse of JᵀWJ + prior at the solution, scaled
  // by the weighted residual variance.
  std::vector<double> standard_errors;
  // True when the data alone constrain the parameter more than its prior does.
  std::vector<bool> identified;
  std::vector<double> residuals;
  std::vector<double> weights;
  double scale = 0; // robust residual scale σ
  int iterations = 0;
  int evaluations = 0;
};

RobustFitResult robust_least_squares(const RobustFitProblem& problem);

// Solves the symmetric positive definite system A x = b by Cholesky; returns false if A is not
// positive definite. Exposed for tests.
bool solve_spd(std::vector<std::vector<double>> a, std::vector<double>& b);

} // namespace ddlsim::calib
