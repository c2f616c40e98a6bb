#include "ddlsim/sim/trace.hpp"

#include "ddlsim/core/json_reader.hpp"

#include <cstdio>
#include <set>
#include <utility>

namespace ddlsim::sim {
namespace {

std::string microseconds(Picoseconds ps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", ps_to_us(ps));
  return buf;
}

} // namespace

void write_chrome_trace(const std::vector<TraceSection>& sections, std::ostream& out) {
  // Written by hand, event by event, so a large trace never sits in memory as a JSON tree.
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto separator = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  for (std::size_t s = 0; s < sections.size(); ++s) {
    separator();
    out << R"({"ph":"M","name":"process_name","pid":)" << s << R"(,"args":{"name":)"
        << Json(sections[s].name).dump() << "}}";
    // One named track per (rank, channel), sorted by rank then channel, so a viewer shows
    // "rank 3 · channel 1" instead of a bare thread id.
    std::set<std::pair<int, int>> tracks;
    for (const StepRecord& step : *sections[s].steps) tracks.emplace(step.rank, step.channel);
    for (const auto& [rank, channel] : tracks) {
      const int tid = rank * 1000 + channel;
      separator();
      out << R"({"ph":"M","name":"thread_name","pid":)" << s << R"(,"tid":)" << tid
          << R"(,"args":{"name":"rank )" << rank << " \u00b7 channel " << channel << "\"}}";
      separator();
      out << R"({"ph":"M","name":"thread_sort_index","pid":)" << s << R"(,"tid":)" << tid
          << R"(,"args":{"sort_index":)" << tid << "}}";
    }
    for (const StepRecord& step : *sections[s].steps) {
      separator();
      std::string name(coll::to_string(step.kind));
      if (step.peer >= 0)
        name += (step.kind == coll::StepKind::send ? " to "
                 : step.kind == coll::StepKind::switch_reduce ||
                         step.kind == coll::StepKind::switch_multicast
                     ? " owner "
                     : " from ") +
                std::to_string(step.peer);
      out << R"({"ph":"X","pid":)" << s << R"(,"tid":)" << step.rank * 1000 + step.channel
          << R"(,"name":")" << name << R"(","ts":)" << microseconds(step.start) << R"(,"dur":)"
          << microseconds(step.end - step.start) << R"(,"args":{"bytes":)" << step.bytes
          << ",\"rank\":" << step.rank << ",\"channel\":" << step.channel << "}}";
    }
    for (const TraceCounterPoint& point : sections[s].counters) {
      separator();
      out << R"({"ph":"C","pid":)" << s << R"(,"name":)"
          << Json(sections[s].counter_names[point.track]).dump() << R"(,"ts":)"
          << microseconds(point.time) << R"(,"args":{"value":)" << point.value << "}}";
    }
  }
  out << "\n]}\n";
}

} // namespace ddlsim::sim
