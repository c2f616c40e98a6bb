#include "ddlsim/sim/link_load.hpp"

#include <algorithm>
#include <utility>

namespace ddlsim::sim {

LinkLoadReport link_loads(const topo::Topology& topology, topo::Router& router, std::uint64_t seed,
                          std::span<const StepRecord> steps, Picoseconds time) {
  LinkLoadReport report;
  report.time = time;
  std::vector<std::uint64_t> bytes(topology.link_count(), 0);
  std::vector<std::uint64_t> transfers(topology.link_count(), 0);
  // Each link's transfer intervals, merged into busy time below.
  std::vector<std::vector<std::pair<Picoseconds, Picoseconds>>> intervals(topology.link_count());
  for (const StepRecord& step : steps) {
    if (step.kind == coll::StepKind::switch_reduce ||
        step.kind == coll::StepKind::switch_multicast) {
      report.switch_bytes += step.bytes;
      continue;
    }
    if (step.kind != coll::StepKind::send || step.peer < 0 || step.peer == step.rank) continue;
    for (topo::LinkId link : router.ecmp_path(seed, step.rank, step.peer, step.channel)) {
      bytes[link] += step.bytes;
      ++transfers[link];
      intervals[link].emplace_back(step.start, step.end);
    }
  }
  for (topo::LinkId link = 0; link < topology.link_count(); ++link) {
    if (transfers[link] == 0) continue;
    auto& spans = intervals[link];
    std::sort(spans.begin(), spans.end());
    Picoseconds busy = 0, open = spans.front().first, close = spans.front().second;
    for (const auto& [start, end] : spans) {
      if (start > close) {
        busy += close - open;
        open = start;
      }
      close = std::max(close, end);
    }
    busy += close - open;
    const double capacity = topology.link(link).bandwidth_bytes_per_second;
    LinkLoad load;
    load.link = link;
    load.bytes = bytes[link];
    load.transfers = transfers[link];
    load.busy = busy;
    load.load_seconds = capacity > 0 ? static_cast<double>(bytes[link]) / capacity : 0.0;
    load.utilisation = time > 0 ? load.load_seconds / ps_to_seconds(time) : 0.0;
    report.links.push_back(load);
  }
  std::stable_sort(
      report.links.begin(), report.links.end(),
      [](const LinkLoad& a, const LinkLoad& b) { return a.utilisation > b.utilisation; });
  return report;
}

} // namespace ddlsim::sim
