#include "ddlsim/sim/trace.hpp"

#include "ddlsim/core/intervals.hpp"
#include "ddlsim/core/json_reader.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

namespace ddlsim::sim {
namespace {

std::string microseconds(Picoseconds ps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", ps_to_us(ps));
  return buf;
}

// Writes the events of one trace, each after a separator from the one before.
class EventWriter {
public:
  explicit EventWriter(std::ostream& out) : out_(out) {}

  std::ostream& next() {
    if (!first_) out_ << ",\n";
    first_ = false;
    return out_;
  }
  void process(std::size_t pid, const std::string& name) {
    next() << R"({"ph":"M","name":"process_name","pid":)" << pid << R"(,"args":{"name":)"
           << Json(name).dump() << "}}";
  }
  // A named track, sorted by its id, so a viewer shows "rank 3 · channel 1" instead of a bare
  // thread id.
  void track(std::size_t pid, int tid, const std::string& name) {
    next() << R"({"ph":"M","name":"thread_name","pid":)" << pid << R"(,"tid":)" << tid
           << R"(,"args":{"name":)" << Json(name).dump() << "}}";
    next() << R"({"ph":"M","name":"thread_sort_index","pid":)" << pid << R"(,"tid":)" << tid
           << R"(,"args":{"sort_index":)" << tid << "}}";
  }
  // A span; `args` is the inside of its args object.
  void span(std::size_t pid, int tid, const std::string& name, Picoseconds start, Picoseconds end,
            const std::string& args) {
    next() << R"({"ph":"X","pid":)" << pid << R"(,"tid":)" << tid << R"(,"name":)"
           << Json(name).dump() << R"(,"ts":)" << microseconds(start) << R"(,"dur":)"
           << microseconds(end - start) << R"(,"args":{)" << args << "}}";
  }

private:
  std::ostream& out_;
  bool first_ = true;
};

int track_id(int rank, int channel) {
  return rank * 1000 + channel;
}

// "rank 3", followed by the GPU it runs on where the section knows it: "rank 3 (node1/gpu1,
// V100-SXM2-16GB)", so a viewer shows which GPU of which node each track is.
std::string rank_name(const TraceSection& section, int rank) {
  std::string name = "rank " + std::to_string(rank);
  if (rank >= 0 && std::size_t(rank) < section.rank_gpus.size() &&
      !section.rank_gpus[std::size_t(rank)].empty())
    name += " (" + section.rank_gpus[std::size_t(rank)] + ")";
  return name;
}

std::string channel_track_name(const TraceSection& section, int rank, int channel) {
  return rank_name(section, rank) + " \u00b7 channel " + std::to_string(channel);
}

void write_steps(const TraceSection& section, std::size_t pid, EventWriter& events) {
  std::set<std::pair<int, int>> tracks;
  for (const StepRecord& step : *section.steps) tracks.emplace(step.rank, step.channel);
  for (const auto& [rank, channel] : tracks)
    events.track(pid, track_id(rank, channel), channel_track_name(section, rank, channel));
  for (const StepRecord& step : *section.steps) {
    std::string name(coll::to_string(step.kind));
    if (step.peer >= 0)
      name += (step.kind == coll::StepKind::send ? " to "
               : step.kind == coll::StepKind::switch_reduce ||
                       step.kind == coll::StepKind::switch_multicast
                   ? " owner "
                   : " from ") +
              std::to_string(step.peer);
    events.next() << R"({"ph":"X","pid":)" << pid << R"(,"tid":)"
                  << track_id(step.rank, step.channel) << R"(,"name":")" << name << R"(","ts":)"
                  << microseconds(step.start) << R"(,"dur":)" << microseconds(step.end - step.start)
                  << R"(,"args":{"bytes":)" << step.bytes << ",\"rank\":" << step.rank
                  << ",\"channel\":" << step.channel << "}}";
  }
  for (const TraceCounterPoint& point : section.counters) {
    events.next() << R"({"ph":"C","pid":)" << pid << R"(,"name":)"
                  << Json(section.counter_names[point.track]).dump() << R"(,"ts":)"
                  << microseconds(point.time) << R"(,"args":{"value":)" << point.value << "}}";
  }
}

bool is_compute(const StepRecord& step) {
  return step.kind == coll::StepKind::compute;
}
// A zero-length compute step: a training schedule's marker or a collective's join.
bool is_marker(const StepRecord& step) {
  return is_compute(step) && step.end <= step.start;
}

// Each (rank, channel)'s steps in the order the engine recorded them: a step after the steps it
// depends on, so a collective's join after its steps and before the next collective's.
std::map<std::pair<int, int>, std::vector<const StepRecord*>> by_track(const TraceSection& s) {
  std::map<std::pair<int, int>, std::vector<const StepRecord*>> tracks;
  for (const StepRecord& step : *s.steps) tracks[{step.rank, step.channel}].push_back(&step);
  return tracks;
}

// A track holding only compute steps: a GPU's compute stream (a training workload's channel 0).
bool compute_stream(const std::vector<const StepRecord*>& steps) {
  return std::all_of(steps.begin(), steps.end(),
                     [](const StepRecord* s) { return is_compute(*s); });
}

struct Span {
  Picoseconds start = 0;
  Picoseconds end = 0;
  std::uint64_t steps = 0;
  std::uint64_t bytes_sent = 0;
  bool communicates = false; // holds a step other than compute

  void add(const StepRecord& step) {
    if (is_marker(step)) return; // markers wait; they do no work
    start = steps == 0 ? step.start : std::min(start, step.start);
    end = steps == 0 ? step.end : std::max(end, step.end);
    ++steps;
    if (step.kind == coll::StepKind::send) bytes_sent += step.bytes;
    communicates = communicates || !is_compute(step);
  }
  std::string args() const {
    return "\"steps\":" + std::to_string(steps) + ",\"bytes_sent\":" + std::to_string(bytes_sent);
  }
};

void write_collectives(const TraceSection& section, std::size_t pid, EventWriter& events) {
  const auto tracks = by_track(section);
  for (const auto& [key, steps] : tracks)
    events.track(pid, track_id(key.first, key.second),
                 channel_track_name(section, key.first, key.second));
  for (const auto& [key, steps] : tracks) {
    const int tid = track_id(key.first, key.second);
    if (compute_stream(steps)) {
      // One span per stretch of back-to-back compute (a pass, up to a wait for a collective).
      Span busy;
      auto flush = [&] {
        if (busy.steps > 0) events.span(pid, tid, "compute", busy.start, busy.end, busy.args());
        busy = Span{};
      };
      for (const StepRecord* step : steps) {
        if (is_marker(*step)) continue;
        if (busy.steps > 0 && step->start > busy.end) flush();
        busy.add(*step);
      }
      flush();
      continue;
    }
    // A collective's steps on this channel, up to the join after them (a training schedule's;
    // a collective workload's section is one collective, ending with the track).
    int index = 0;
    Span span;
    auto flush = [&] {
      if (span.steps > 0)
        events.span(pid, tid, "collective " + std::to_string(index++), span.start, span.end,
                    span.args());
      span = Span{};
    };
    for (const StepRecord* step : steps) {
      span.add(*step);
      if (is_marker(*step) && span.communicates) flush();
    }
    flush();
  }
}

// One kind of a rank's work (compute: its compute stream; communication: the rest) within one
// iteration's window, as the training report counts it: each step's interval clipped to the
// window, so a GPU that starts its next forward pass before the job's iteration ends has that
// compute in the next iteration.
struct Phase {
  std::vector<std::pair<Picoseconds, Picoseconds>> intervals;
  std::uint64_t steps = 0;
  std::uint64_t bytes_sent = 0; // sends that start in the window

  void add(const StepRecord& step, Picoseconds from, Picoseconds to) {
    if (is_marker(step) || step.end <= from || step.start >= to) return;
    intervals.emplace_back(std::max(step.start, from), std::min(step.end, to));
    ++steps;
    if (step.kind == coll::StepKind::send && step.start >= from) bytes_sent += step.bytes;
  }
  Picoseconds start() const {
    Picoseconds t = intervals.front().first;
    for (const auto& i : intervals) t = std::min(t, i.first);
    return t;
  }
  Picoseconds end() const {
    Picoseconds t = intervals.front().second;
    for (const auto& i : intervals) t = std::max(t, i.second);
    return t;
  }
  std::string args() const {
    return "\"busy_us\":" + microseconds(union_length(intervals)) +
           ",\"steps\":" + std::to_string(steps) + ",\"bytes_sent\":" + std::to_string(bytes_sent);
  }
};

void write_iterations(const TraceSection& section, std::size_t pid, EventWriter& events) {
  const auto tracks = by_track(section);
  std::map<int, std::vector<std::pair<bool, const std::vector<const StepRecord*>*>>> ranks;
  for (const auto& [key, steps] : tracks)
    ranks[key.first].emplace_back(compute_stream(steps), &steps);
  for (const auto& [rank, rank_tracks] : ranks) {
    events.track(pid, track_id(rank, 0), rank_name(section, rank) + " \u00b7 iterations");
    events.track(pid, track_id(rank, 1), rank_name(section, rank) + " \u00b7 compute");
    events.track(pid, track_id(rank, 2), rank_name(section, rank) + " \u00b7 communication");
  }
  for (const auto& [rank, rank_tracks] : ranks) {
    // The rank's windows: its job's iterations (the last one also holds what trails it, e.g.
    // ByteScheduler's all-reduces), else one from its first step to its last.
    Picoseconds first = 0, last = 0;
    bool any = false;
    for (const auto& [is_compute_stream, steps] : rank_tracks)
      for (const StepRecord* step : *steps) {
        if (is_marker(*step)) continue;
        first = any ? std::min(first, step->start) : step->start;
        last = any ? std::max(last, step->end) : step->end;
        any = true;
      }
    if (!any) continue;
    const std::vector<Picoseconds> none;
    const std::vector<Picoseconds>& ends = std::size_t(rank) < section.iteration_ends.size()
                                               ? section.iteration_ends[std::size_t(rank)]
                                               : none;
    const std::size_t count = std::max<std::size_t>(1, ends.size());
    for (std::size_t k = 0; k < count; ++k) {
      const Picoseconds from = ends.empty() ? first : k > 0 ? ends[k - 1] : 0;
      const Picoseconds to =
          ends.empty() || k + 1 == count ? std::max(last, ends.empty() ? last : ends[k]) : ends[k];
      Phase compute, communication;
      for (const auto& [is_compute_stream, steps] : rank_tracks)
        for (const StepRecord* step : *steps)
          (is_compute_stream ? compute : communication).add(*step, from, to);
      events.span(
          pid, track_id(rank, 0), ends.empty() ? section.name : "iteration " + std::to_string(k),
          from, to,
          "\"compute_us\":" + microseconds(union_length(compute.intervals)) +
              ",\"communication_us\":" + microseconds(union_length(communication.intervals)) +
              ",\"bytes_sent\":" + std::to_string(communication.bytes_sent));
      if (compute.steps > 0)
        events.span(pid, track_id(rank, 1), "compute", compute.start(), compute.end(),
                    compute.args());
      if (communication.steps > 0)
        events.span(pid, track_id(rank, 2), "communication", communication.start(),
                    communication.end(), communication.args());
    }
  }
}

} // namespace

std::optional<TraceLevel> parse_trace_level(std::string_view text) {
  if (text == "steps") return TraceLevel::steps;
  if (text == "collectives") return TraceLevel::collectives;
  if (text == "iterations") return TraceLevel::iterations;
  return std::nullopt;
}

void write_chrome_trace(const std::vector<TraceSection>& sections, std::ostream& out,
                        TraceLevel level) {
  // Written by hand, event by event, so a large trace never sits in memory as a JSON tree.
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  EventWriter events(out);
  for (std::size_t s = 0; s < sections.size(); ++s) {
    events.process(s, sections[s].name);
    switch (level) {
    case TraceLevel::steps:
      write_steps(sections[s], s, events);
      break;
    case TraceLevel::collectives:
      write_collectives(sections[s], s, events);
      break;
    case TraceLevel::iterations:
      write_iterations(sections[s], s, events);
      break;
    }
  }
  out << "\n]}\n";
}

} // namespace ddlsim::sim
