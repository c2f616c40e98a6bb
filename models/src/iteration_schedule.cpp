#include "ddlsim/models/iteration_schedule.hpp"

#include "ddlsim/collectives/algorithm.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ddlsim::models {
namespace {

using coll::Buffer;
using coll::BufferRange;
using coll::Step;
using coll::StepKind;
using coll::StepStream;

constexpr std::uint32_t kNone = UINT32_MAX;

Step compute_step(Picoseconds duration, int channel) {
  Step step;
  step.kind = StepKind::compute;
  step.channel = static_cast<std::uint16_t>(channel);
  step.param = static_cast<double>(duration);
  return step;
}

void add_dep(Step& step, std::uint32_t dep) {
  if (dep == kNone) return;
  for (std::uint8_t d = 0; d < step.dep_count; ++d)
    if (step.deps[d] == dep) return;
  if (step.dep_count == coll::kMaxStepDeps)
    throw std::logic_error("training schedule: a collective's first step already has " +
                           std::to_string(coll::kMaxStepDeps) + " deps");
  step.deps[step.dep_count++] = dep;
}

// The collective's place in the rank's buffers.
struct Offsets {
  std::uint64_t input = 0;
  std::uint64_t output = 0;
  std::uint64_t scratch = 0;

  void move(BufferRange& range) const {
    if (range.bytes == 0) return; // unused ranges keep their defaults
    range.offset += range.buffer == Buffer::input    ? input
                    : range.buffer == Buffer::output ? output
                                                     : scratch;
  }
  void advance(const coll::Algorithm& algorithm, const coll::CollectiveCall& call, int rank) {
    input += coll::input_bytes(call, rank);
    output += coll::output_bytes(call, rank);
    scratch += algorithm.scratch_bytes(call, rank);
  }
};

const coll::Algorithm& algorithm_of(const PlannedCollective& c) {
  const coll::Algorithm* algorithm = coll::find_algorithm(c.call.op, c.call.algorithm);
  if (!algorithm)
    throw std::logic_error("training schedule: unplanned algorithm " + c.call.algorithm);
  return *algorithm;
}

bool has_program(const PlannedCollective& c, int channel) {
  return channel - 1 < algorithm_of(c).channels(c.call);
}

// Adasum's dot products over a received and a local vector of `bytes` each: one pass reading
// both at the GPU's streaming rate (workers only: Adasum has no dedicated servers).
Picoseconds adasum_dot_products(const JobPlan& job, int rank, std::uint64_t bytes) {
  const GpuSpec& gpu = job.spec.gpu[static_cast<std::size_t>(rank)];
  const double rate = gpu.memory_bytes_per_second * gpu.memory_efficiency *
                      job.spec.speed[static_cast<std::size_t>(rank)];
  return static_cast<Picoseconds>(std::llround(2.0 * static_cast<double>(bytes) / rate * 1e12));
}

// Communication channel `channel` (>= 1) of local rank `rank` of `job`.
StepStream communication_program(std::shared_ptr<const TrainingPlan> plan, int job_index, int rank,
                                 int channel) {
  const JobPlan& job = plan->jobs[static_cast<std::size_t>(job_index)];
  const int workers = static_cast<int>(job.spec.gpus.size());
  // Dedicated servers (ranks after the workers) compute nothing: they wait for no compute step.
  const int profile = rank < workers ? job.profile_of_gpu[static_cast<std::size_t>(rank)] : -1;
  auto global = [&job, workers](int local) {
    return local < workers ? job.spec.gpus[static_cast<std::size_t>(local)]
                           : job.spec.server_gpus[static_cast<std::size_t>(local - workers)];
  };
  std::uint32_t index = 0;
  std::uint32_t previous_join = kNone;
  Offsets offsets;
  for (const PlannedCollective& c : job.collectives) {
    const coll::Algorithm& algorithm = algorithm_of(c);
    const std::uint32_t ready =
        profile >= 0 ? c.ready_step[static_cast<std::size_t>(profile)] : kNone;
    if (has_program(c, channel)) {
      StepStream stream = algorithm.program(c.call, rank, channel - 1);
      if (plan->launch_overhead > 0) { // the launch, which the collective's steps then follow
        Step launch = compute_step(plan->launch_overhead, channel);
        if (ready != kNone) {
          launch.wait_channel = kComputeChannel;
          launch.wait_step = ready;
        }
        add_dep(launch, previous_join);
        co_yield launch;
        previous_join = index++;
      }
      const std::uint32_t base = index;
      std::uint32_t last_send = kNone, last_receive = kNone, last_local = kNone;
      // Adasum: each receive-reduce is followed by the dot products it needs (a.b, a.a, b.b in
      // one pass over both vectors), a compute step the steps after it depend on instead; so
      // generator step i becomes composite step moved[i] (recursive doubling: log p steps).
      const bool adasum = c.call.reduction == coll::Reduction::adasum;
      std::vector<std::uint32_t> moved;
      Step step;
      while (stream.next(step)) {
        if (step.peer >= 0) step.peer = global(step.peer);
        offsets.move(step.src);
        offsets.move(step.dst);
        offsets.move(step.aux);
        for (std::uint8_t d = 0; d < step.dep_count; ++d)
          step.deps[d] = adasum ? moved[step.deps[d]] : step.deps[d] + base;
        step.channel = static_cast<std::uint16_t>(channel);
        if (index == base) {
          if (ready != kNone) {
            step.wait_channel = kComputeChannel;
            step.wait_step = ready;
          }
          add_dep(step, previous_join);
        }
        (step.is_send() ? last_send : step.is_receive() ? last_receive : last_local) = index;
        co_yield step;
        ++index;
        if (adasum && step.kind == StepKind::recv_reduce) {
          Step dots = compute_step(adasum_dot_products(job, rank, step.bytes), channel);
          add_dep(dots, index - 1);
          co_yield dots;
          last_local = index++;
        }
        if (adasum) moved.push_back(index - 1);
      }
      Step join = compute_step(0, channel);
      add_dep(join, last_send);
      add_dep(join, last_receive);
      add_dep(join, last_local);
      if (index == base) { // no step on this channel: the join stands in for the collective
        if (ready != kNone) {
          join.wait_channel = kComputeChannel;
          join.wait_step = ready;
        }
        add_dep(join, previous_join);
      }
      co_yield join;
      previous_join = index++;
    }
    offsets.advance(algorithm, c.call, rank);
  }
}

// How many steps communication channel `channel` of `rank` has up to the end of collective
// `last` (each collective's steps plus its join), counted by pulling the generators once.
std::uint32_t communication_steps(const TrainingPlan& plan, const JobPlan& job, int rank,
                                  int channel, std::size_t last) {
  std::uint32_t count = 0;
  for (std::size_t i = 0; i <= last && i < job.collectives.size(); ++i) {
    const PlannedCollective& c = job.collectives[i];
    if (!has_program(c, channel)) continue;
    StepStream stream = algorithm_of(c).program(c.call, rank, channel - 1);
    const bool adasum = c.call.reduction == coll::Reduction::adasum;
    if (plan.launch_overhead > 0) ++count;
    for (Step step; stream.next(step);)
      count += adasum && step.kind == StepKind::recv_reduce ? 2 : 1; // + Adasum's dot products
    ++count;                                                         // the join
  }
  return count;
}

StepStream compute_program(std::shared_ptr<const TrainingPlan> plan, int job_index, int rank,
                           int channels) {
  const JobPlan& job = plan->jobs[static_cast<std::size_t>(job_index)];
  const ComputeProfile& profile = job.profiles[job.profile_of_gpu[static_cast<std::size_t>(rank)]];
  // The GPU runs one kernel at a time: each step depends on the one before (in-order issue alone
  // would only order their starts).
  std::uint32_t index = 0;
  auto next = [&index](Step step) {
    if (index > 0) add_dep(step, index - 1);
    ++index;
    return step;
  };
  for (std::size_t i = 0; i + 1 < profile.steps.size(); ++i) {
    const ComputeStep& step = profile.steps[i];
    Step out = compute_step(step.duration, kComputeChannel);
    if (step.wait_exchange >= 0) { // a model-parallel all-to-all (one channel) must be done
      const int c = job.exchange_collective[static_cast<std::size_t>(step.wait_exchange)];
      if (c >= 0) {
        out.wait_channel = 1;
        out.wait_step = communication_steps(*plan, job, rank, 1, static_cast<std::size_t>(c)) - 1;
      }
    }
    co_yield next(out);
  }
  for (int channel = 1; channel < channels; ++channel) {
    const std::uint32_t steps =
        communication_steps(*plan, job, rank, channel, job.collectives.size());
    if (steps == 0) continue;
    Step wait = compute_step(0, kComputeChannel);
    wait.wait_channel = static_cast<std::uint16_t>(channel);
    wait.wait_step = steps - 1;
    co_yield next(wait);
  }
  co_yield next(compute_step(profile.steps.back().duration, kComputeChannel));
}

StepStream no_program() {
  co_return;
}

class TrainingSource final : public coll::ProgramSource {
public:
  explicit TrainingSource(std::shared_ptr<const TrainingPlan> plan) : plan_(std::move(plan)) {
    channels_ = 1;
    for (const JobPlan& job : plan_->jobs)
      for (const PlannedCollective& c : job.collectives)
        channels_ = std::max(channels_, 1 + algorithm_of(c).channels(c.call));
    job_of_rank_.assign(static_cast<std::size_t>(plan_->ranks), -1);
    local_rank_.assign(static_cast<std::size_t>(plan_->ranks), -1);
    for (std::size_t j = 0; j < plan_->jobs.size(); ++j) {
      const JobSpec& spec = plan_->jobs[j].spec;
      std::vector<int> ranks = spec.gpus; // workers, then dedicated servers
      ranks.insert(ranks.end(), spec.server_gpus.begin(), spec.server_gpus.end());
      for (std::size_t l = 0; l < ranks.size(); ++l) {
        job_of_rank_[static_cast<std::size_t>(ranks[l])] = static_cast<int>(j);
        local_rank_[static_cast<std::size_t>(ranks[l])] = static_cast<int>(l);
      }
    }
  }

  std::string_view name() const override { return "training"; }
  int ranks() const override { return plan_->ranks; }
  int channels() const override { return channels_; }

  std::uint64_t buffer_bytes(int rank, Buffer buffer) const override {
    const int j = job_of_rank_[static_cast<std::size_t>(rank)];
    if (j < 0) return 0;
    const int local = local_rank_[static_cast<std::size_t>(rank)];
    Offsets total;
    for (const PlannedCollective& c : plan_->jobs[static_cast<std::size_t>(j)].collectives)
      total.advance(algorithm_of(c), c.call, local);
    return buffer == Buffer::input    ? total.input
           : buffer == Buffer::output ? total.output
                                      : total.scratch;
  }

  StepStream program(int rank, int channel) const override {
    const int j = job_of_rank_[static_cast<std::size_t>(rank)];
    if (j < 0) return no_program();
    const int local = local_rank_[static_cast<std::size_t>(rank)];
    const int workers = static_cast<int>(plan_->jobs[static_cast<std::size_t>(j)].spec.gpus.size());
    if (channel == kComputeChannel)
      return local < workers ? compute_program(plan_, j, local, channels_) : no_program();
    return communication_program(plan_, j, local, channel);
  }

private:
  std::shared_ptr<const TrainingPlan> plan_;
  int channels_ = 1;
  std::vector<int> job_of_rank_; // per global rank; -1 = unused
  std::vector<int> local_rank_;
};

} // namespace

coll::Schedule iteration_schedule(std::shared_ptr<const TrainingPlan> plan) {
  coll::CollectiveCall call;
  call.op = coll::Op::all_reduce;
  call.algorithm = "training";
  call.ranks = std::max(1, plan->ranks);
  if (!plan->jobs.empty()) {
    const JobPlan& job = plan->jobs.front();
    call.bytes = job.gradient_bytes;
    call.ranks = static_cast<int>(job.spec.gpus.size());
    if (!job.collectives.empty()) {
      call.dtype = job.collectives.front().call.dtype;
      call.reduction = job.collectives.front().call.reduction;
    }
  }
  return coll::Schedule::composite(call, std::make_shared<TrainingSource>(std::move(plan)));
}

} // namespace ddlsim::models
