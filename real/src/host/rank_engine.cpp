#include "rank_engine.hpp"

#include "element_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <thread>
#include <unistd.h>

namespace ddlsim::real::host {

RankEngine::RankEngine(const coll::Schedule& schedule, int rank, std::vector<int> sockets,
                       RankBuffers& buffers, const EngineOptions& options)
    : call_(schedule.call()), rank_(rank), buffers_(buffers), options_(options),
      runner_(*this, schedule, rank, 1),
      links_(std::move(sockets), schedule.channels(), call_, *this, options.timeout, options.spin),
      started_(std::size_t(schedule.channels())) {}

std::int64_t RankEngine::now_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - iteration_start_)
      .count();
}

void RankEngine::run_once(std::vector<StepTiming>* timeline) {
  for (Started& started : started_) started = Started{};
  computing_.clear();
  iteration_start_ = Clock::now();
  runner_.restart();
  runner_.drain();
  auto last_progress = Clock::now();
  while (!runner_.finished()) {
    if (options_.abort && options_.abort->load()) fail("stopped by the coordinator");
    const auto next_compute_end = finish_computes();
    runner_.drain();
    if (runner_.finished()) break;
    // A compute step in progress is progress until it ends.
    if (next_compute_end != Clock::time_point::max())
      last_progress = std::max(last_progress, Clock::now());
    const auto limit = last_progress + options_.timeout;
    const auto wake = std::min(limit, next_compute_end);
    const bool progress = links_.pump(millis_until(wake, 100));
    runner_.drain();
    if (progress) {
      last_progress = Clock::now();
    } else if (Clock::now() >= limit) {
      fail("no progress for " + std::to_string(options_.timeout.count()) + " ms: " + stuck());
    }
  }
  // What peers still need from us is only acknowledgements: hand them to the kernel now, since
  // between iterations (at the barrier) nobody services the sockets.
  links_.flush_acks(last_progress);
  if (!timeline) return;
  timeline->clear();
  for (std::size_t channel = 0; channel < started_.size(); ++channel) {
    const Started& started = started_[channel];
    for (std::size_t i = 0; i < started.steps.size(); ++i) {
      const coll::Step& step = started.steps[i];
      timeline->push_back({std::uint16_t(channel), std::uint32_t(i), step.kind, step.peer,
                           step.bytes, started.start_ns[i], started.end_ns[i]});
    }
  }
}

void RankEngine::start_step(coll::StepRef ref, const coll::Step& step) {
  Started& started = started_[ref.program];
  started.steps.push_back(step);
  started.start_ns.push_back(now_ns());
  started.end_ns.push_back(0);
  if (options_.fault.kind != HostFault::Kind::none && options_.fault.rank == rank_ &&
      options_.fault.step == steps_started_)
    inject_fault(ref);
  ++steps_started_;
  if (step.kind == coll::StepKind::compute) {
    const auto duration = std::chrono::nanoseconds(std::llround(step.param / 1000));
    computing_.push_back({Clock::now() + duration, ref});
    return;
  }
  if (step.is_local()) {
    try {
      coll::detail::run_local_step(step, call_.reduction, call_.dtype, buffers_.bytes(step.src),
                                   buffers_.bytes(step.aux), buffers_.bytes(step.dst));
    } catch (const std::runtime_error& error) {
      fail(where(ref) + ": " + error.what());
    }
    return complete(ref);
  }
  if (links_.closed_by(step.peer))
    fail(where(ref) + ": rank " + std::to_string(step.peer) +
         " closed its connection before this step (that rank died or stopped)");
  if (step.is_send())
    links_.post_send(step.peer, step.channel, {ref, buffers_.bytes(step.src).data(), step.bytes});
  else
    links_.post_receive(step.peer, step.channel,
                        {ref, step.kind == coll::StepKind::recv_reduce, step.bytes,
                         buffers_.bytes(step.src), buffers_.bytes(step.dst)});
}

void RankEngine::complete(coll::StepRef ref) {
  started_[ref.program].end_ns[ref.index] = now_ns();
  ++steps_completed_;
  runner_.complete(ref);
}

void RankEngine::inject_fault(coll::StepRef at) {
  if (options_.fault.kind == HostFault::Kind::crash) {
    if (options_.in_process) ::_exit(99); // as abrupt as a real crash: no report, no flush
    drop_connections();
    throw InjectedCrash{};
  }
  // Stall: stay connected but move nothing, until the coordinator stops us (bounded anyway).
  const auto until = Clock::now() + 4 * options_.timeout;
  while (Clock::now() < until && !(options_.abort && options_.abort->load()))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  fail(where(at) + ": stalled by fault injection");
}

Clock::time_point RankEngine::finish_computes() {
  const auto now = Clock::now();
  auto next = Clock::time_point::max();
  // Complete in order of end time (ties by start), so that timelines stay ordered.
  std::sort(computing_.begin(), computing_.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::size_t done = 0;
  while (done < computing_.size() && computing_[done].first <= now)
    complete(computing_[done++].second);
  computing_.erase(computing_.begin(), computing_.begin() + std::ptrdiff_t(done));
  if (!computing_.empty()) next = computing_.front().first;
  return next;
}

bool RankEngine::blocks(coll::StepRef ref) const {
  return runner_.awaited(ref);
}

std::string RankEngine::where(coll::StepRef ref) const {
  return coll::step_place(rank_, int(ref.program), ref.index,
                          started_[ref.program].steps[ref.index]);
}

std::string RankEngine::stuck() const {
  std::vector<std::string> lines;
  links_.describe_in_flight(lines);
  for (std::uint32_t id = 0; id < runner_.program_count(); ++id)
    if (runner_.program(id).cursor.has_next()) lines.push_back(runner_.describe_pending(id));
  if (lines.empty()) return "rank " + std::to_string(rank_) + " has no step in flight";
  std::string text;
  const std::size_t shown = std::min<std::size_t>(lines.size(), 4);
  for (std::size_t i = 0; i < shown; ++i) text += (i ? "; " : "") + lines[i];
  if (lines.size() > shown) text += "; and " + std::to_string(lines.size() - shown) + " more";
  return text;
}

void RankEngine::stream_failed(int, int channel, const std::exception& error) const {
  fail("ch " + std::to_string(channel) + ": the schedule's generator failed: " + error.what());
}

void RankEngine::fail(const std::string& what) const {
  throw RankFailure("rank " + std::to_string(rank_) + ": " + what);
}

} // namespace ddlsim::real::host
