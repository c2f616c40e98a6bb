#include "ddlsim/calibrate/robust_fit.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ddlsim::calib {
namespace {

using Matrix = std::vector<std::vector<double>>;

double median_abs(const std::vector<double>& r) {
  if (r.empty()) return 0;
  std::vector<double> a(r.size());
  std::transform(r.begin(), r.end(), a.begin(), [](double v) { return std::abs(v); });
  std::nth_element(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(a.size() / 2), a.end());
  return a[a.size() / 2];
}

std::vector<double> huber_weights(const std::vector<double>& r, double k, double& scale) {
  // A floor of 1 (the residuals' stated noise level) keeps a near-perfect fit of most points
  // from turning every other point into an "outlier".
  scale = std::max(1.4826 * median_abs(r), 1.0);
  std::vector<double> w(r.size(), 1.0);
  for (std::size_t i = 0; i < r.size(); ++i) {
    const double a = std::abs(r[i]);
    if (a > k * scale) w[i] = k * scale / a;
  }
  return w;
}

double objective(const std::vector<double>& r, const std::vector<double>& w,
                 const std::vector<double>& x, const RobustFitProblem& p) {
  double sum = 0;
  for (std::size_t i = 0; i < r.size(); ++i) sum += w[i] * r[i] * r[i];
  for (std::size_t j = 0; j < x.size(); ++j) {
    const double z = (x[j] - p.prior_center[j]) / p.prior_sigma[j];
    sum += z * z;
  }
  return sum;
}

} // namespace

bool solve_spd(Matrix a, std::vector<double>& b) {
  const std::size_t n = b.size();
  for (std::size_t j = 0; j < n; ++j) {
    double d = a[j][j];
    for (std::size_t k = 0; k < j; ++k) d -= a[j][k] * a[j][k];
    if (!(d > 0)) return false;
    a[j][j] = std::sqrt(d);
    for (std::size_t i = j + 1; i < n; ++i) {
      double s = a[i][j];
      for (std::size_t k = 0; k < j; ++k) s -= a[i][k] * a[j][k];
      a[i][j] = s / a[j][j];
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    double s = b[i];
    for (std::size_t k = 0; k < i; ++k) s -= a[i][k] * b[k];
    b[i] = s / a[i][i];
  }
  for (std::size_t i = n; i-- > 0;) {
    double s = b[i];
    for (std::size_t k = i + 1; k < n; ++k) s -= a[k][i] * b[k];
    b[i] = s / a[i][i];
  }
  return true;
}

RobustFitResult robust_least_squares(const RobustFitProblem& p) {
  const std::size_t n = p.start.size();
  if (p.prior_center.size() != n || p.prior_sigma.size() != n)
    throw std::invalid_argument("robust_least_squares: prior sizes differ from the start");
  RobustFitResult result;
  std::vector<double> x = p.start;
  std::vector<double> r = p.residuals(x);
  ++result.evaluations;
  if (r.empty()) throw std::invalid_argument("robust_least_squares: the start does not evaluate");
  const std::size_t m = r.size();
  // Plain least squares first (unit weights) so that the fit reaches the right basin before
  // Huber weights judge which points are outliers: judged at the start, a regime the initial
  // guess misses entirely (all large sizes) would look like outliers and be ignored.
  std::vector<double> w(m, 1.0);
  bool robust = false;
  double lambda = 1e-2;
  Matrix jac(m, std::vector<double>(n));

  // Central differences: the model is piecewise smooth (the slowest link, the fastest
  // protocol), and at a kink where two links limit together a one-sided difference sees no
  // slope in either; the central one sees half of it in both.
  auto jacobian = [&](const std::vector<double>& at) {
    for (std::size_t j = 0; j < n; ++j) {
      std::vector<double> up = at, down = at;
      up[j] += p.difference_step;
      down[j] -= p.difference_step;
      const std::vector<double> ru = p.residuals(up);
      const std::vector<double> rd = p.residuals(down);
      result.evaluations += 2;
      // Where one side is outside the model's domain, the one-sided difference on the other
      // (`r` is the residuals at `at`, the current point); where both are, no slope.
      const std::vector<double>& hi = ru.empty() ? r : ru;
      const std::vector<double>& lo = rd.empty() ? r : rd;
      const double width = (ru.empty() ? 0 : 1) + (rd.empty() ? 0 : 1);
      for (std::size_t i = 0; i < m; ++i)
        jac[i][j] = width > 0 ? (hi[i] - lo[i]) / (width * p.difference_step) : 0.0;
    }
  };

  for (int iteration = 0; iteration < p.max_iterations; ++iteration) {
    result.iterations = iteration + 1;
    jacobian(x);
    const double current = objective(r, w, x, p);
    // Normal equations of the weighted, prior-augmented problem.
    Matrix a(n, std::vector<double>(n, 0.0));
    std::vector<double> g(n, 0.0);
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        g[j] -= w[i] * jac[i][j] * r[i];
        for (std::size_t k = 0; k < n; ++k) a[j][k] += w[i] * jac[i][j] * jac[i][k];
      }
    for (std::size_t j = 0; j < n; ++j) {
      const double s2 = p.prior_sigma[j] * p.prior_sigma[j];
      a[j][j] += 1.0 / s2;
      g[j] -= (x[j] - p.prior_center[j]) / s2;
    }
    bool improved = false;
    for (int attempt = 0; attempt < 12 && !improved; ++attempt) {
      Matrix damped = a;
      for (std::size_t j = 0; j < n; ++j) damped[j][j] *= 1.0 + lambda;
      std::vector<double> step = g;
      if (!solve_spd(damped, step)) {
        lambda *= 10;
        continue;
      }
      std::vector<double> trial = x;
      for (std::size_t j = 0; j < n; ++j) trial[j] += std::clamp(step[j], -2.0, 2.0);
      std::vector<double> rt = p.residuals(trial);
      ++result.evaluations;
      if (!rt.empty() && objective(rt, w, trial, p) < current) {
        double change = 0;
        for (std::size_t j = 0; j < n; ++j) change = std::max(change, std::abs(trial[j] - x[j]));
        x = std::move(trial);
        r = std::move(rt);
        lambda = std::max(lambda / 3, 1e-7);
        improved = true;
        if (change < 1e-4 && robust) iteration = p.max_iterations; // converged
        if (change < 1e-4 && !robust) {
          robust = true;
          w = huber_weights(r, p.huber_k, result.scale);
        }
      } else {
        lambda *= 4;
      }
    }
    // Once plain least squares stalls, switch to Huber weights (recomputed every iteration);
    // stop when no step improves the objective.
    if (robust) w = huber_weights(r, p.huber_k, result.scale);
    if (!improved) {
      if (robust) break;
      robust = true;
      w = huber_weights(r, p.huber_k, result.scale);
      lambda = 1e-2;
    }
  }

  // Uncertainty at the solution.
  jacobian(x);
  Matrix a(n, std::vector<double>(n, 0.0));
  std::vector<double> data_information(n, 0.0);
  double weighted_rss = 0, weight_sum = 0;
  for (std::size_t i = 0; i < m; ++i) {
    weighted_rss += w[i] * r[i] * r[i];
    weight_sum += w[i];
    for (std::size_t j = 0; j < n; ++j) {
      data_information[j] += w[i] * jac[i][j] * jac[i][j];
      for (std::size_t k = 0; k < n; ++k) a[j][k] += w[i] * jac[i][j] * jac[i][k];
    }
  }
  const double dof = std::max(1.0, static_cast<double>(m) - static_cast<double>(n));
  const double variance = std::max(weighted_rss / dof, 1e-8);
  for (std::size_t j = 0; j < n; ++j) a[j][j] += variance / (p.prior_sigma[j] * p.prior_sigma[j]);
  result.standard_errors.assign(n, 0.0);
  result.identified.assign(n, false);
  for (std::size_t j = 0; j < n; ++j) {
    std::vector<double> e(n, 0.0);
    e[j] = 1.0;
    if (solve_spd(a, e)) result.standard_errors[j] = std::sqrt(std::max(0.0, e[j] * variance));
    // Data information vs the prior's, both in units of the residual variance.
    result.identified[j] =
        data_information[j] / variance > 1.0 / (p.prior_sigma[j] * p.prior_sigma[j]);
  }
  (void)weight_sum;
  result.x = std::move(x);
  result.residuals = std::move(r);
  result.weights = std::move(w);
  return result;
}

} // namespace ddlsim::calib
