// The "plan" section: prices and power per node kind, goals and the preference among points.
#include "workload_parser.hpp"

#include "ddlsim/core/input_error.hpp"

#include <string>
#include <vector>

namespace ddlsim {

double PerNodeKind::of(const std::string& kind) const {
  if (auto it = by_kind.find(kind); it != by_kind.end()) return it->second;
  if (all) return *all;
  std::string known;
  for (const auto& [name, value] : by_kind) known += (known.empty() ? "" : ", ") + name;
  throw InputError(where, "no figure for node kind \"" + kind + "\" (this table names " + known +
                              "); add \"" + kind + "\": N");
}

namespace detail {
namespace {

// A figure for every node kind (a number) or per kind ({"preset": N, ...}), each in (0, max].
PerNodeKind per_node_kind(const JsonValue& value, double max) {
  PerNodeKind figure;
  figure.where = value.path();
  if (value.raw().is_number()) {
    figure.all = value.positive_number(max);
    return figure;
  }
  if (!value.raw().is_object() || value.raw().empty())
    value.fail_expected("a number, or an object of node kinds (preset names) to numbers");
  JsonObject kinds = value.object();
  for (const auto& [kind, number] : value.raw().items())
    figure.by_kind[kind] = kinds.required(kind).positive_number(max);
  kinds.finish();
  return figure;
}

// Every node kind of the cluster has a figure in `figure` (if it was given at all).
void check_kinds(const PerNodeKind& figure, const topo::ClusterSpec& cluster) {
  if (!figure.given()) return;
  for (const topo::NodeGroup& group : cluster.node_groups) figure.of(group.spec.preset);
}

} // namespace

PlanSpec parse_plan(const JsonValue& section, const topo::ClusterSpec& cluster) {
  PlanSpec plan;
  JsonObject object = section.object();
  if (auto v = object.optional("price")) {
    JsonObject price = v->object();
    auto gpu = price.optional("per_gpu_hour");
    auto node = price.optional("per_node_hour");
    auto kwh = price.optional("per_kwh");
    if (gpu && node) v->fail("give per_gpu_hour or per_node_hour, not both");
    if (!gpu && !node && !kwh)
      v->fail_expected(
          "{\"per_gpu_hour\": N}, {\"per_node_hour\": N} and/or {\"per_kwh\": N} (N may be an "
          "object of node kinds to prices)");
    if (gpu) plan.price_per_gpu_hour = per_node_kind(*gpu, 1e9);
    if (node) plan.price_per_node_hour = per_node_kind(*node, 1e9);
    if (kwh) plan.price_per_kwh = kwh->positive_number(1e6);
    price.finish();
  }
  if (auto v = object.optional("power")) {
    JsonObject power = v->object();
    if (auto w = power.optional("per_gpu_watts")) plan.power_per_gpu_watts = per_node_kind(*w, 1e6);
    if (auto w = power.optional("per_node_watts"))
      plan.power_per_node_watts = per_node_kind(*w, 1e7);
    power.finish();
    if (!plan.power_per_gpu_watts.given() && !plan.power_per_node_watts.given())
      v->fail_expected("{\"per_gpu_watts\": N} and/or {\"per_node_watts\": N}");
  }
  if (plan.price_per_kwh > 0 && !plan.power_per_gpu_watts.given() &&
      !plan.power_per_node_watts.given())
    throw InputError(object.child_path("price") + "/per_kwh",
                     "an energy price needs the power it pays for: add \"power\": "
                     "{\"per_gpu_watts\": N} (and/or \"per_node_watts\") to the plan");
  for (const PerNodeKind* figure : {&plan.price_per_gpu_hour, &plan.price_per_node_hour,
                                    &plan.power_per_gpu_watts, &plan.power_per_node_watts})
    check_kinds(*figure, cluster);
  if (auto v = object.optional("goals")) {
    JsonObject goals = v->object();
    if (auto g = goals.optional("max_time_seconds"))
      plan.max_time_seconds = g->positive_number(1e12);
    if (auto g = goals.optional("min_samples_per_second"))
      plan.min_samples_per_second = g->positive_number(1e15);
    if (auto g = goals.optional("min_scaling_efficiency"))
      plan.min_scaling_efficiency = g->number(0, 1);
    if (auto g = goals.optional("max_cost")) plan.max_cost = g->positive_number(1e15);
    goals.finish();
  }
  if (auto v = object.optional("prefer"))
    plan.prefer = v->choice(std::vector<std::string>{"cost", "time", "knee"});
  object.finish();
  return plan;
}

} // namespace detail
} // namespace ddlsim
