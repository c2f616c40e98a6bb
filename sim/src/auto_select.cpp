#include "ddlsim/sim/auto_select.hpp"

#include "ddlsim/core/input_error.hpp"

#include <algorithm>
#include <cstdio>

namespace ddlsim::sim {
namespace {

// Lossy algorithms change the result; a user must ask for them by name.
bool is_lossy(std::string_view name) {
  return name.find("topk") != std::string_view::npos ||
         name.find("sparse") != std::string_view::npos;
}

} // namespace

AlgorithmChoice choose_algorithm(const topo::Topology& topology, topo::Router& router,
                                 coll::CollectiveCall call, const AnalyticOptions& options) {
  std::vector<std::pair<Picoseconds, std::string>> timed;
  for (const coll::Algorithm* algorithm : coll::algorithms_for(call.op)) {
    if (is_lossy(algorithm->name())) continue;
    call.algorithm = std::string(algorithm->name());
    try {
      algorithm->check(call);
    } catch (const InputError&) {
      continue; // not applicable to this call (e.g. needs group sizes)
    }
    const coll::Schedule schedule = coll::Schedule::make(call);
    try {
      timed.emplace_back(simulate_analytic(topology, router, schedule, options).time,
                         call.algorithm);
    } catch (const InputError&) {
      // In-switch reduction where the topology has no NVLS switch: not a candidate here.
      if (coll::has_switch_steps(schedule)) continue;
      throw;
    }
  }
  if (timed.empty())
    throw InputError("/workload/algorithm", "\"auto\" found no algorithm that accepts this call");
  std::stable_sort(timed.begin(), timed.end());
  AlgorithmChoice choice{timed.front().second, ""};
  for (std::size_t i = 0; i < timed.size() && i < 4; ++i) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s%s %.2f us", i ? " < " : "", timed[i].second.c_str(),
                  ps_to_us(timed[i].first));
    choice.reason += buf;
  }
  return choice;
}

} // namespace ddlsim::sim
