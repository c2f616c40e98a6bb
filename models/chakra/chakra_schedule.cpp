// A Chakra plan (chakra_plan.cpp) as one coll::Schedule, and its metrics from the executed
// steps. Per (rank, channel) the program walks the channel's ops in order; each op is a
// zero-time marker per dependency (a step of the same channel: a dep; of another: a
// cross-program wait, step.hpp rule 1), each waiting for the marker before it, then its body:
// a compute step, a send or receive, or for a collective a launch step (the calibrated launch
// overhead, or zero time),
// the registry generator's program of the rank's place in its group (peers mapped to global
// ranks, deps moved) and a zero-time join that waits for its last steps. The plan counted the
// steps, so every dependency is a step index already.
#include "../src/schedule_steps.hpp"
#include "ddlsim/collectives/algorithm.hpp"
#include "ddlsim/models/chakra.hpp"

#include <algorithm>

namespace ddlsim::models {
namespace {

using coll::Buffer;
using coll::Step;
using coll::StepKind;
using coll::StepStream;
using detail::add_dep;
using detail::compute_step;
using detail::kNone;

StepStream channel_program(std::shared_ptr<const ChakraPlan> plan, Picoseconds launch_overhead,
                           int rank, int channel) {
  const std::vector<ChakraOp>& ops = plan->programs[std::size_t(rank)][std::size_t(channel)];
  std::uint32_t index = 0;
  for (const ChakraOp& op : ops) {
    std::uint32_t gate = kNone; // the last marker: every dependency has completed
    for (const auto& [dep_channel, dep_step] : op.deps) {
      Step marker = compute_step(0, channel);
      if (dep_channel == channel) {
        add_dep(marker, dep_step);
      } else {
        marker.wait_channel = static_cast<std::uint16_t>(dep_channel);
        marker.wait_step = dep_step;
      }
      add_dep(marker, gate);
      co_yield marker;
      gate = index++;
    }
    switch (op.kind) {
    case ChakraKind::compute: {
      Step step = compute_step(op.duration, channel);
      add_dep(step, gate);
      co_yield step;
      ++index;
      break;
    }
    case ChakraKind::send:
    case ChakraKind::recv: {
      const bool send = op.kind == ChakraKind::send;
      Step step;
      step.kind = send ? StepKind::send : StepKind::recv;
      step.channel = static_cast<std::uint16_t>(channel);
      step.peer = op.peer;
      step.bytes = op.bytes;
      (send ? step.src : step.dst) = {send ? Buffer::input : Buffer::output, 0, op.bytes};
      add_dep(step, gate);
      co_yield step;
      ++index;
      break;
    }
    case ChakraKind::collective: {
      const ChakraPlan::Call& c = plan->calls[std::size_t(op.collective)];
      Step launch = compute_step(launch_overhead, channel); // 0: a marker
      add_dep(launch, gate);
      co_yield launch;
      gate = index++;
      const std::uint32_t base = index;
      std::uint32_t last_send = kNone, last_receive = kNone, last_local = kNone,
                    last_switch = kNone;
      const coll::Algorithm* algorithm = coll::find_algorithm(c.call.op, c.call.algorithm);
      StepStream stream = algorithm->program(c.call, op.local, 0);
      for (Step step; stream.next(step);) {
        if (step.peer >= 0) step.peer = c.members[static_cast<std::size_t>(step.peer)];
        for (std::uint8_t d = 0; d < step.dep_count; ++d) step.deps[d] += base;
        step.channel = static_cast<std::uint16_t>(channel);
        if (index == base) add_dep(step, gate);
        (step.is_send()      ? last_send
         : step.is_receive() ? last_receive
         : step.is_switch()  ? last_switch
                             : last_local) = index;
        co_yield step;
        ++index;
      }
      Step join = compute_step(0, channel);
      add_dep(join, last_send);
      add_dep(join, last_receive);
      add_dep(join, last_local);
      add_dep(join, last_switch);
      if (index == base) add_dep(join, gate); // no step of its own (a group of one)
      co_yield join;
      ++index;
      break;
    }
    case ChakraKind::skipped:
      break;
    }
  }
}

class ChakraSource final : public coll::ProgramSource {
public:
  ChakraSource(std::shared_ptr<const ChakraPlan> plan, Picoseconds launch_overhead)
      : plan_(std::move(plan)), launch_overhead_(launch_overhead) {
    for (const ChakraPlan::Call& c : plan_->calls) {
      const coll::Algorithm* algorithm = coll::find_algorithm(c.call.op, c.call.algorithm);
      for (int r = 0; r < c.call.ranks; ++r) {
        input_ = std::max(input_, coll::input_bytes(c.call, r));
        output_ = std::max(output_, coll::output_bytes(c.call, r));
        scratch_ = std::max(scratch_, algorithm->scratch_bytes(c.call, r));
      }
    }
    for (const auto& rank : plan_->programs)
      for (const ChakraOp& op : rank[std::size_t(kChakraP2pChannel)]) {
        input_ = std::max(input_, op.bytes);
        output_ = std::max(output_, op.bytes);
      }
  }
  std::string_view name() const override { return "chakra"; }
  int ranks() const override { return plan_->ranks; }
  int channels() const override { return plan_->channels; }
  std::uint64_t buffer_bytes(int, Buffer buffer) const override {
    return buffer == Buffer::input ? input_ : buffer == Buffer::output ? output_ : scratch_;
  }
  StepStream program(int rank, int channel) const override {
    return channel_program(plan_, launch_overhead_, rank, channel);
  }

private:
  std::shared_ptr<const ChakraPlan> plan_;
  Picoseconds launch_overhead_ = 0;
  std::uint64_t input_ = 0, output_ = 0, scratch_ = 0;
};

using Interval = ChakraRecorder::Interval;

// The intervals sorted and merged into disjoint ones.
std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  std::vector<Interval> out;
  for (const Interval& i : v) {
    if (!out.empty() && i.start <= out.back().end)
      out.back().end = std::max(out.back().end, i.end);
    else
      out.push_back(i);
  }
  return out;
}

Picoseconds length(const std::vector<Interval>& v) {
  Picoseconds total = 0;
  for (const Interval& i : v) total += i.end - i.start;
  return total;
}

// The time of `a` (disjoint) that `b` (disjoint) does not cover.
Picoseconds uncovered(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  Picoseconds overlap = 0;
  std::size_t j = 0;
  for (const Interval& i : a) {
    while (j < b.size() && b[j].end <= i.start) ++j;
    for (std::size_t k = j; k < b.size() && b[k].start < i.end; ++k)
      overlap += std::min(i.end, b[k].end) - std::max(i.start, b[k].start);
  }
  return length(a) - overlap;
}

} // namespace

coll::Schedule chakra_schedule(std::shared_ptr<const ChakraPlan> plan,
                               Picoseconds launch_overhead) {
  coll::CollectiveCall call;
  call.op = coll::Op::all_reduce;
  call.algorithm = "chakra";
  call.dtype = coll::DataType::fp16;
  call.ranks = std::max(1, plan->ranks);
  call.bytes = 2;
  return coll::Schedule::composite(
      call, std::make_shared<ChakraSource>(std::move(plan), launch_overhead));
}

ChakraRecorder::ChakraRecorder(const ChakraPlan& plan)
    : busy_(std::size_t(plan.ranks),
            std::vector<std::vector<Interval>>(std::size_t(plan.channels))) {}

void ChakraRecorder::add(int rank, int channel, StepKind kind, Picoseconds start, Picoseconds end) {
  if (end <= start) return; // markers and joins take no time
  if (channel == kChakraCpuChannel) return;
  if (channel == kChakraGpuChannel && kind != StepKind::compute) return;
  busy_[std::size_t(rank)][std::size_t(channel)].push_back({start, end});
}

void ChakraRecorder::clear() {
  for (auto& rank : busy_)
    for (auto& channel : rank) channel.clear();
}

ChakraIteration summarize_chakra(const ChakraPlan& plan, const ChakraRecorder& recorder,
                                 Picoseconds time) {
  ChakraIteration out;
  out.time = time;
  out.kinds.resize(plan.kinds.size());
  for (std::size_t k = 0; k < plan.kinds.size(); ++k) out.kinds[k].what = plan.kinds[k];
  for (const auto& rank : recorder.busy()) {
    const std::vector<Interval> compute = merged(rank[std::size_t(kChakraGpuChannel)]);
    out.compute = std::max(out.compute, length(compute));
    std::vector<Interval> all;
    std::vector<std::vector<Interval>> per_kind(plan.kinds.size());
    for (int c = kChakraP2pChannel; c < plan.channels; ++c) {
      const int kind = plan.channel_kind[std::size_t(c)];
      if (kind < 0) continue;
      const auto& steps = rank[std::size_t(c)];
      all.insert(all.end(), steps.begin(), steps.end());
      per_kind[std::size_t(kind)].insert(per_kind[std::size_t(kind)].end(), steps.begin(),
                                         steps.end());
    }
    const std::vector<Interval> comm = merged(std::move(all));
    out.communication = std::max(out.communication, length(comm));
    out.exposed = std::max(out.exposed, uncovered(comm, compute));
    for (std::size_t k = 0; k < per_kind.size(); ++k) {
      const std::vector<Interval> m = merged(std::move(per_kind[k]));
      out.kinds[k].busy = std::max(out.kinds[k].busy, length(m));
      out.kinds[k].exposed = std::max(out.kinds[k].exposed, uncovered(m, compute));
    }
  }
  return out;
}

} // namespace ddlsim::models
