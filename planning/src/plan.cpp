#include "ddlsim/planning/plan.hpp"

#include "ddlsim/core/units.hpp"

#include "ddlsim/planning/pareto.hpp"
#include "ddlsim/planning/setting_labels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

namespace ddlsim::plan {
namespace {

// A duration in the unit `unit_of` calls for (h, s, ms or us), so that two durations compared in
// one message share a unit ("time 3672.00 s > 1500.00 s", not "1.02 h > 1500.00 s").
std::string seconds_text(double s, double unit_of) {
  if (unit_of >= 3600) return format_fixed(s / 3600, 2) + " h";
  if (unit_of >= 1) return format_fixed(s, 2) + " s";
  if (unit_of >= 1e-3) return format_fixed(s * 1e3, 2) + " ms";
  return format_fixed(s * 1e6, 1) + " us";
}
std::string seconds_text(double s) {
  return seconds_text(s, s);
}

bool has_goals(const PlanSpec& spec) {
  return spec.max_time_seconds || spec.min_samples_per_second || spec.min_scaling_efficiency ||
         spec.max_cost;
}

// The knee of the time-cost front: with time and cost scaled to [0, 1] over the front, the
// point farthest below the chord joining its two ends (smallest scaled time + cost), i.e. where
// going faster starts to cost much more and going cheaper much longer. `rows` are indices of
// front points.
std::size_t knee_of(const std::vector<PlanRow>& all, const std::vector<std::size_t>& rows) {
  double t0 = 1e300, t1 = -1e300, c0 = 1e300, c1 = -1e300;
  for (std::size_t i : rows) {
    t0 = std::min(t0, all[i].time_seconds), t1 = std::max(t1, all[i].time_seconds);
    c0 = std::min(c0, all[i].cost), c1 = std::max(c1, all[i].cost);
  }
  const auto scaled = [](double v, double lo, double hi) {
    return hi > lo ? (v - lo) / (hi - lo) : 0;
  };
  std::size_t best = rows.front();
  double best_score = 1e300;
  for (std::size_t i : rows) {
    const double score = scaled(all[i].time_seconds, t0, t1) + scaled(all[i].cost, c0, c1);
    if (score < best_score - 1e-12 ||
        (std::fabs(score - best_score) <= 1e-12 && all[i].time_seconds < all[best].time_seconds))
      best = i, best_score = score;
  }
  return best;
}

// `figure` summed over what the point uses: per GPU (`per_gpu`) or per node, kind by kind.
double over_point(const PerNodeKind& figure, const PointMetrics& m, bool per_gpu) {
  if (figure.by_kind.empty()) return figure.all.value_or(0) * (per_gpu ? m.gpus : m.nodes);
  double sum = 0;
  for (const KindCount& k : m.kinds) sum += figure.of(k.kind) * (per_gpu ? k.gpus : k.nodes);
  return sum;
}

bool priced(const PlanSpec& spec) {
  return spec.price_per_gpu_hour.given() || spec.price_per_node_hour.given() ||
         spec.price_per_kwh > 0;
}

bool powered(const PlanSpec& spec) {
  return spec.power_per_gpu_watts.given() || spec.power_per_node_watts.given();
}

} // namespace

double hourly_price(const PlanSpec& spec, const PointMetrics& m) {
  if (spec.price_per_gpu_hour.given()) return over_point(spec.price_per_gpu_hour, m, true);
  if (spec.price_per_node_hour.given()) return over_point(spec.price_per_node_hour, m, false);
  if (priced(spec)) return 0; // energy only
  return m.gpus;              // GPU-hours
}

double energy_kwh(const PlanSpec& spec, const PointMetrics& m, double seconds) {
  const double watts = over_point(spec.power_per_gpu_watts, m, true) +
                       over_point(spec.power_per_node_watts, m, false);
  return watts * seconds / 3.6e6;
}

namespace {

std::vector<std::string> unmet_goals(const PlanSpec& spec, const PlanRow& row) {
  std::vector<std::string> unmet;
  const PointMetrics& m = row.point.metrics;
  if (spec.max_time_seconds && row.time_seconds > *spec.max_time_seconds)
    unmet.push_back("time " + seconds_text(row.time_seconds, *spec.max_time_seconds) + " > " +
                    seconds_text(*spec.max_time_seconds));
  if (spec.min_samples_per_second && m.samples_per_second < *spec.min_samples_per_second)
    unmet.push_back("throughput " + format_fixed(m.samples_per_second, 1) + " samples/s < " +
                    format_fixed(*spec.min_samples_per_second, 1));
  if (spec.min_scaling_efficiency && m.scaling_efficiency >= 0 &&
      m.scaling_efficiency < *spec.min_scaling_efficiency)
    unmet.push_back("efficiency " + format_fixed(m.scaling_efficiency, 3) + " < " +
                    format_fixed(*spec.min_scaling_efficiency, 3));
  if (spec.min_scaling_efficiency && m.scaling_efficiency < 0)
    unmet.push_back("efficiency not defined for this workload (goal " +
                    format_fixed(*spec.min_scaling_efficiency, 3) + ")");
  if (spec.max_cost && row.cost > *spec.max_cost)
    unmet.push_back("cost " + format_significant(row.cost) + " > " +
                    format_significant(*spec.max_cost));
  return unmet;
}

} // namespace

Plan make_plan(std::vector<PointResult> results, const PlanSpec& spec) {
  Plan plan;
  const bool trains = std::any_of(results.begin(), results.end(), [](const PointResult& r) {
    return r.ok() && r.metrics.train_seconds > 0;
  });
  plan.time_axis = trains ? "time to train" : "iteration time";
  plan.cost_unit = priced(spec) ? "cost" : "GPU-hours";
  plan.has_energy = powered(spec);
  std::sort(results.begin(), results.end(),
            [](const PointResult& a, const PointResult& b) { return a.index < b.index; });
  std::vector<const PointResult*> points;
  for (const PointResult& result : results) points.push_back(&result);
  const SettingLabels labels(points);
  const auto describe = [&labels](const PointResult& point) { return labels.describe(point); };
  for (PointResult& result : results) {
    PlanRow row;
    row.point = std::move(result);
    if (row.point.ok()) {
      const PointMetrics& m = row.point.metrics;
      row.time_seconds = trains ? m.train_seconds : m.iteration_seconds;
      row.cost = hourly_price(spec, m) * row.time_seconds / 3600;
      if (plan.has_energy) {
        row.energy_kwh = energy_kwh(spec, m, row.time_seconds);
        row.cost += row.energy_kwh * spec.price_per_kwh;
      }
      row.unmet = unmet_goals(spec, row);
    }
    plan.rows.push_back(std::move(row));
  }

  // The front is over the points that ran; failed points are never on it.
  std::vector<std::pair<double, double>> objectives;
  std::vector<std::size_t> ran;
  for (std::size_t i = 0; i < plan.rows.size(); ++i)
    if (plan.rows[i].point.ok()) {
      objectives.emplace_back(plan.rows[i].time_seconds, plan.rows[i].cost);
      ran.push_back(i);
    }
  const std::vector<bool> front = pareto_front(objectives);
  for (std::size_t k = 0; k < ran.size(); ++k) plan.rows[ran[k]].on_front = front[k];

  const std::string prefer = !spec.prefer.empty() ? spec.prefer : has_goals(spec) ? "cost" : "knee";
  const bool by_time = prefer == "time";
  auto key = [&](const PlanRow& r) {
    const double primary = by_time ? r.time_seconds : r.cost;
    const double secondary = by_time ? r.cost : r.time_seconds;
    return std::tuple(!r.point.ok(), !r.feasible(), r.unmet.size(), primary, secondary,
                      r.point.index);
  };
  std::sort(plan.rows.begin(), plan.rows.end(),
            [&](const PlanRow& a, const PlanRow& b) { return key(a) < key(b); });

  const std::string preference = by_time ? "fastest" : "cheapest";
  std::vector<std::size_t> feasible_front;
  for (std::size_t i = 0; i < plan.rows.size(); ++i)
    if (plan.rows[i].feasible() && plan.rows[i].on_front) feasible_front.push_back(i);
  if (prefer == "knee" && !feasible_front.empty()) {
    // The knee first; the rest keep their ranking by cost.
    const std::size_t knee = knee_of(plan.rows, feasible_front);
    std::rotate(plan.rows.begin(), plan.rows.begin() + std::ptrdiff_t(knee),
                plan.rows.begin() + std::ptrdiff_t(knee) + 1);
    plan.recommended = 0;
    const PlanRow& best = plan.rows.front();
    double fastest = best.time_seconds, cheapest = best.cost;
    const PlanRow *fast = &best, *cheap = &best;
    for (const PlanRow& r : plan.rows)
      if (r.feasible() && r.on_front) {
        if (r.time_seconds < fastest) fastest = r.time_seconds, fast = &r;
        if (r.cost < cheapest) cheapest = r.cost, cheap = &r;
      }
    plan.reason = std::string(has_goals(spec) ? "among the points that meet every goal, the"
                                              : "no goals given, so the") +
                  " knee of the time-cost front: " + describe(best.point) + " (" + plan.time_axis +
                  " " + seconds_text(best.time_seconds) + ", " + plan.cost_unit + " " +
                  format_significant(best.cost) + ")";
    if (fast != &best)
      plan.reason += "; the fastest point saves " +
                     seconds_text(best.time_seconds - fast->time_seconds) + " for " +
                     format_significant(fast->cost - best.cost) + " more " + plan.cost_unit;
    if (cheap != &best)
      plan.reason += "; the cheapest saves " + format_significant(best.cost - cheap->cost) + " " +
                     plan.cost_unit + " for " +
                     seconds_text(cheap->time_seconds - best.time_seconds) + " longer";
    plan.reason += " (set plan.goals, or plan.prefer \"cost\" or \"time\", to choose otherwise)";
  } else if (!plan.rows.empty() && plan.rows.front().feasible()) {
    plan.recommended = 0;
    const PlanRow& best = plan.rows.front();
    plan.reason = "the " + preference + " point that meets every goal: " + describe(best.point) +
                  " (" + plan.time_axis + " " + seconds_text(best.time_seconds) + ", " +
                  plan.cost_unit + " " + format_significant(best.cost) + ")";
    // Name what the better points on the other axis miss, so the trade-off is visible.
    for (const PlanRow& other : plan.rows) {
      if (!other.point.ok() || other.feasible()) continue;
      const bool better = by_time ? other.time_seconds < best.time_seconds : other.cost < best.cost;
      if (!better) continue;
      plan.reason += "; the " + std::string(by_time ? "faster " : "cheaper ") +
                     describe(other.point) + " misses " + other.unmet.front();
      break;
    }
  } else if (!plan.rows.empty() && plan.rows.front().point.ok()) {
    const PlanRow& closest = plan.rows.front();
    plan.reason = "no point meets every goal; the closest is " + describe(closest.point) +
                  ", which misses " + closest.unmet.front();
  } else {
    plan.reason = "no point ran";
  }
  return plan;
}

} // namespace ddlsim::plan
