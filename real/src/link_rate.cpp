#include "ddlsim/real/link_rate.hpp"

#include "ddlsim/core/intervals.hpp"

#include <algorithm>
#include <utility>

namespace ddlsim::real {

std::optional<AchievedRate> achieved_send_rate(const HostRun& run) {
  AchievedRate rate;
  for (const RankOutcome& rank : run.ranks) {
    RankSendRate r;
    r.rank = rank.rank;
    std::vector<std::pair<std::int64_t, std::int64_t>> sends;
    for (const StepTiming& step : rank.timeline)
      if (step.kind == coll::StepKind::send && step.end_ns > step.start_ns) {
        sends.emplace_back(step.start_ns, step.end_ns);
        r.bytes += step.bytes;
      }
    r.busy_ns = union_length(std::move(sends));
    if (r.busy_ns > 0 && r.bytes > 0) rate.ranks.push_back(r);
  }
  if (rate.ranks.empty()) return std::nullopt;
  std::sort(rate.ranks.begin(), rate.ranks.end(),
            [](const RankSendRate& a, const RankSendRate& b) { return a.rank < b.rank; });
  std::vector<double> gbps;
  for (const RankSendRate& r : rate.ranks) gbps.push_back(r.gbps());
  std::sort(gbps.begin(), gbps.end());
  rate.min_gbps = gbps.front();
  rate.max_gbps = gbps.back();
  const std::size_t n = gbps.size();
  rate.median_gbps = n % 2 == 1 ? gbps[n / 2] : (gbps[n / 2 - 1] + gbps[n / 2]) / 2;
  return rate;
}

} // namespace ddlsim::real
