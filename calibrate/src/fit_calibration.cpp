#include "ddlsim/calibrate/fit_calibration.hpp"
#include "ddlsim/calibrate/robust_fit.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/sim/gpu_rates.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ddlsim::calib {
namespace {

// Where a parameter goes in a Calibration, and its prior.
enum class Target {
  latency,
  efficiency,
  step_overhead,
  launch_overhead,
  reduce_rate,
  protocol_factor,
  protocol_overhead
};
struct Parameter {
  std::string name;
  Target target;
  LinkGroup group = LinkGroup::nvlink;
  std::size_t protocol = 0;
  double center = 0;  // log of the prior value
  double sigma = 1;   // prior sigma in log space
  double nominal = 0; // efficiencies: the nominal rate they multiply
};

struct ProtocolPrior {
  const char* name;
  double factor, overhead_ns;
};
// Priors from NCCL's tuning model: LL moves 8-byte lines with a 4-byte flag and is latency
// bound (NCCL derates its bandwidth to 1/5 .. 1/2); LL128 keeps 120 of 128 bytes.
constexpr ProtocolPrior kProtocols[] = {
    {"simple", 1.0, 2000}, {"ll", 0.3, 500}, {"ll128", 0.9, 1000}};

const ProtocolPrior* protocol_prior(const std::string& name) {
  for (const ProtocolPrior& p : kProtocols)
    if (name == p.name) return &p;
  return nullptr;
}

bool group_present(const topo::ClusterSpec& spec, LinkGroup group, int nodes) {
  for (const topo::NodeGroup& g : spec.node_groups) {
    if (group == LinkGroup::nvlink && g.spec.gpus > 1 && g.spec.intra != topo::IntraNode::pcie_only)
      return true;
    // PCIe carries GPU-NIC traffic, and GPU-GPU traffic between GPUs without a direct NVLink
    // (the cube-mesh's diagonal pairs).
    if (group == LinkGroup::pcie && (g.spec.intra != topo::IntraNode::nvswitch || nodes > 1))
      return true;
  }
  return group == LinkGroup::network && nodes > 1;
}

std::vector<Parameter> parameters_of(const PointModel& model, const FitOptions& options) {
  const topo::NodeSpec& node = model.spec().node_groups.at(0).spec;
  std::vector<Parameter> params;
  for (LinkGroup g : kLinkGroups) {
    if (!group_present(model.spec(), g, model.nodes())) continue;
    const std::string group = std::string(to_string(g));
    const double latency_ns =
        std::max(10.0, static_cast<double>(nominal_latency(node, g)) / kPsPerNs);
    params.push_back({group + ".latency_ns", Target::latency, g, 0, std::log(latency_ns), 2.0, 0});
    params.push_back({group + ".efficiency", Target::efficiency, g, 0, 0.0, 1.5,
                      nominal_bytes_per_second(node, g)});
  }
  params.push_back({"launch_overhead_ns", Target::launch_overhead, LinkGroup::nvlink, 0,
                    std::log(5000.0), 2.0, 0});
  const sim::GpuRates rates = sim::gpu_rates(node.gpu_model);
  params.push_back({"reduce_bandwidth_gbps", Target::reduce_rate, LinkGroup::nvlink, 0,
                    std::log(rates.reduce_bytes_per_second), 1.0, 0});
  for (std::size_t p = 0; p < options.protocols.size(); ++p) {
    const ProtocolPrior* prior = protocol_prior(options.protocols[p]);
    const std::string name = options.protocols[p];
    params.push_back({name + ".per_step_overhead_ns", Target::protocol_overhead, LinkGroup::nvlink,
                      p, std::log(prior->overhead_ns), 3.0, 0});
    if (p > 0)
      params.push_back({name + ".bandwidth_factor", Target::protocol_factor, LinkGroup::nvlink, p,
                        std::log(prior->factor), 1.0, 0});
  }
  return params;
}

Calibration calibration_at(const std::vector<Parameter>& params, const std::vector<double>& x,
                           const PointModel& model, const FitOptions& options) {
  Calibration c;
  c.protocols.clear();
  for (const std::string& name : options.protocols) c.protocols.push_back({name, 1.0, 0});
  const topo::NodeSpec& node = model.spec().node_groups.at(0).spec;
  for (LinkGroup g : kLinkGroups) {
    c.link(g).set = false;
    c.link(g).latency = nominal_latency(node, g);
    c.link(g).bytes_per_second = nominal_bytes_per_second(node, g);
    c.link(g).efficiency = 1.0;
  }
  for (std::size_t j = 0; j < params.size(); ++j) {
    const Parameter& p = params[j];
    const double v = std::exp(x[j]);
    switch (p.target) {
    case Target::latency:
      c.link(p.group).set = true;
      c.link(p.group).latency = ns_to_ps(v);
      break;
    case Target::efficiency:
      c.link(p.group).set = true;
      c.link(p.group).efficiency = v;
      c.link(p.group).bytes_per_second = p.nominal * v;
      break;
    case Target::launch_overhead:
      c.launch_overhead = ns_to_ps(v);
      break;
    case Target::reduce_rate:
      c.reduce_bytes_per_second = v;
      break;
    case Target::protocol_overhead:
      c.protocols[p.protocol].per_step_overhead = ns_to_ps(v);
      break;
    case Target::protocol_factor:
      c.protocols[p.protocol].bandwidth_factor = v;
      break;
    case Target::step_overhead:
      break;
    }
  }
  return c;
}

double reported_value(const Parameter& p, double x) {
  const double v = std::exp(x);
  return p.target == Target::reduce_rate ? v * 8 / 1e9 : v;
}

// The physical range of a fitted value (see ImpossibleValue); "" when it is inside. An
// efficiency counts as above 1 only when it is so by more than its standard error (the fit
// works in log space, so log(value) - relative s.e. > 0): 1.006 +- 3% is a rate at its
// nominal value, not a model mismatch.
std::string outside_range(const Parameter& p, double value, double relative_se) {
  const bool fraction = p.target == Target::efficiency || p.target == Target::protocol_factor;
  const char* what = p.target == Target::efficiency ? "an efficiency" : "a bandwidth factor";
  if (fraction && !(value > 0)) return std::string(what) + " of 0 or less (no bandwidth at all)";
  if (fraction && value > 1 && std::log(value) - relative_se > 0)
    return std::string(what) + " above 1 (faster than the nominal " +
           (p.target == Target::efficiency ? "link rate)" : "rate: a protocol only adds bytes)");
  const bool time = p.target == Target::latency || p.target == Target::launch_overhead ||
                    p.target == Target::protocol_overhead || p.target == Target::step_overhead;
  if (time && value < 0) return "a negative time";
  if (p.target == Target::reduce_rate && !(value > 0)) return "a reduction rate of 0 or less";
  return "";
}

bool is_bandwidth(const Parameter& p) {
  return p.target == Target::efficiency || p.target == Target::reduce_rate;
}
bool is_latency(const Parameter& p) {
  return p.target == Target::latency || p.target == Target::launch_overhead ||
         p.target == Target::protocol_overhead;
}

// Moves the start so that the largest point's time (bandwidth bound) and the smallest's
// (latency bound) match: all bandwidths scaled together, then all latencies, a few rounds.
// Local least squares then starts in the right basin instead of crawling there through the
// kinks of the model (slowest link, fastest protocol).
void warm_start(const std::vector<Parameter>& params, std::vector<double>& x,
                const PointModel& model, std::span<const MeasuredPoint> points,
                const FitOptions& options) {
  std::size_t smallest = 0, largest = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (points[i].bytes < points[smallest].bytes) smallest = i;
    if (points[i].bytes > points[largest].bytes) largest = i;
  }
  auto ratio = [&](std::size_t i) {
    const Calibration c = calibration_at(params, x, model, options);
    const MeasuredPoint one[] = {points[i]};
    return model.predict(c, one)[0].seconds / points[i].seconds;
  };
  for (int round = 0; round < 4; ++round) {
    if (points[largest].bytes >= 1 << 20) {
      // Time ~ 1 / bandwidth at large sizes: scale every bandwidth by the ratio.
      const double shift = std::clamp(std::log(ratio(largest)), -3.0, 3.0);
      for (std::size_t j = 0; j < params.size(); ++j)
        if (is_bandwidth(params[j])) x[j] += shift;
    }
    if (points[smallest].bytes <= 64 * 1024) {
      const double shift = std::clamp(-std::log(ratio(smallest)), -3.0, 3.0);
      for (std::size_t j = 0; j < params.size(); ++j)
        if (is_latency(params[j])) x[j] += shift;
    }
  }
}

// The relative scatter of repeated nccl-tests measurements (in-place vs out-of-place rows of the
// shared logs differ by a few percent, up to ~10% on TCP): residuals are in these units.
constexpr double kNoise = 0.05;

} // namespace

namespace {

FitReport fit_protocols(const PointModel& model, std::span<const MeasuredPoint> points,
                        const FitOptions& options) {
  if (points.empty()) throw InputError("calibrate", "no measured points to fit");
  if (options.protocols.empty() || options.protocols.size() > 3)
    throw InputError("--protocols", "expected one to three of simple, ll, ll128");
  for (const std::string& name : options.protocols)
    if (!protocol_prior(name))
      throw InputError("--protocols", "unknown protocol \"" + name +
                                          "\"; expected simple, ll or ll128 (bandwidth one first)");
  const std::vector<Parameter> params = parameters_of(model, options);
  RobustFitProblem problem;
  for (const Parameter& p : params) {
    problem.start.push_back(p.center);
    problem.prior_center.push_back(p.center);
    problem.prior_sigma.push_back(p.sigma);
  }
  problem.max_iterations = options.max_iterations;
  warm_start(params, problem.start, model, points, options);
  // A trial point can leave the model's domain: a fitted NVLink rate far enough below PCIe's
  // sends a GPU pair's traffic over PCIe, where an NVLS switch step cannot run. Such a point is
  // not a fit (NCCL's transports do not follow measured speeds), so the fit steps elsewhere; an
  // error at the start is the input's and is reported.
  bool evaluated = false;
  problem.residuals = [&](const std::vector<double>& x) -> std::vector<double> {
    const Calibration c = calibration_at(params, x, model, options);
    std::vector<Prediction> predictions;
    try {
      predictions = model.predict(c, points);
    } catch (const InputError&) {
      if (!evaluated) throw;
      return {};
    }
    evaluated = true;
    std::vector<double> r(points.size());
    for (std::size_t i = 0; i < points.size(); ++i)
      r[i] = std::log(predictions[i].seconds / points[i].seconds) / kNoise;
    return r;
  };
  const RobustFitResult fit = robust_least_squares(problem);

  FitReport report;
  report.calibration = calibration_at(params, fit.x, model, options);
  report.predictions = model.predict(report.calibration, points);
  report.residuals = fit.residuals;
  for (double& r : report.residuals) r *= kNoise;
  report.weights = fit.weights;
  report.iterations = fit.iterations;
  report.evaluations = fit.evaluations;
  for (double r : fit.residuals) {
    const double a = std::abs(r); // Huber loss at the residuals' noise unit, k = 1.345
    report.loss += a <= 1.345 ? a * a / 2 : 1.345 * a - 1.345 * 1.345 / 2;
  }
  for (std::size_t j = 0; j < params.size(); ++j) {
    const double value = reported_value(params[j], fit.x[j]);
    // Determined: the data constrain it more than its prior does, and to within 50% (a relative
    // standard error above that is no determination, issue 17).
    const bool determined =
        fit.identified[j] && fit.standard_errors[j] <= kMaxDeterminedRelativeError;
    report.parameters.push_back({params[j].name, value, fit.standard_errors[j], determined});
    if (std::string why = outside_range(params[j], value, fit.standard_errors[j]); !why.empty())
      report.impossible.push_back({params[j].name, value, std::move(why), determined});
  }
  // Every fitted link class is written, determined by the data or not: the calibration must
  // reproduce the fit's own predictions (dropping an undetermined class whose estimate moved
  // away from nominal changed the model between fit and prediction). A class the data cannot
  // see at all (the NIC of a one-node system) is no parameter and stays unset.
  return report;
}

} // namespace

std::string describe(const ImpossibleValue& value) {
  char number[32];
  std::snprintf(number, sizeof number, "%.4g", value.value);
  return value.parameter + " = " + number + ": " + value.why +
         (value.determined ? "" : " (not determined by the data)");
}

FitReport fit_calibration(const PointModel& model, std::span<const MeasuredPoint> points,
                          const FitOptions& options) {
  if (options.optional_protocol.empty()) return fit_protocols(model, points, options);
  // Whether NCCL ran the optional protocol is not known: fit with and without it and keep it
  // only when it lowers the loss by more than its two parameters cost (BIC: ln(n)/2 each).
  FitReport without = fit_protocols(model, points, options);
  FitOptions with_options = options;
  with_options.protocols.push_back(options.optional_protocol);
  with_options.optional_protocol.clear();
  FitReport with = fit_protocols(model, points, with_options);
  const double penalty = std::log(static_cast<double>(points.size()));
  char line[256];
  std::snprintf(line, sizeof line,
                "%s: robust loss %.1f with it, %.1f without; kept only if lower by more than "
                "%.1f (BIC for its 2 parameters): %s",
                options.optional_protocol.c_str(), with.loss, without.loss, penalty,
                with.loss + penalty < without.loss ? "kept" : "left out");
  FitReport& chosen = with.loss + penalty < without.loss ? with : without;
  chosen.protocol_selection = line;
  return std::move(chosen);
}

} // namespace ddlsim::calib
