#include "ddlsim/models/iteration_schedule.hpp"

#include "ddlsim/collectives/algorithm.hpp"
#include "schedule_steps.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <stdexcept>

namespace ddlsim::models {
namespace {

using coll::Buffer;
using coll::BufferRange;
using coll::Step;
using coll::StepKind;
using coll::StepStream;

using detail::add_dep;
using detail::compute_step;
using detail::kNone;

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

// Whether collective c has a program on communication channel `channel` (its stream's channels).
bool has_program(const PlannedCollective& c, int channel) {
  return channel >= c.first_channel && channel - c.first_channel < algorithm_of(c).channels(c.call);
}

// The software cost paid before the collective's first step: a calibrated launch overhead, else
// NCCL's per-call overhead when NCCL chose the collective.
Picoseconds launch_cost(const TrainingPlan& plan, const PlannedCollective& c) {
  return plan.launch_overhead > 0 ? plan.launch_overhead : c.call_overhead;
}

// Whether a profile step is a forward step that waits for its layer's update (ByteScheduler:
// the first pass's forward step of a layer with a gate); one marker per communication channel
// goes before it.
bool gated(const JobPlan& job, const ComputeStep& step) {
  return !job.gate_collective.empty() && !step.backward && step.pass == 0 && step.layer >= 0 &&
         step.wait_exchange < 0 && job.gate_collective[static_cast<std::size_t>(step.layer)] >= 0;
}

// The index in the compute program's first iteration of each profile step: gated steps have a
// marker per communication channel before them.
std::vector<std::uint32_t> program_index(const JobPlan& job, const ComputeProfile& profile,
                                         int channels) {
  std::vector<std::uint32_t> index;
  std::uint32_t next = 0;
  for (const ComputeStep& step : profile.steps) {
    if (gated(job, step)) next += static_cast<std::uint32_t>(channels - 1);
    index.push_back(next++);
  }
  return index;
}

// Steps of one iteration of a compute program: the profile's steps, the gates' markers, one wait
// marker per communication channel, the optimizer (the last of the profile's steps).
std::uint32_t compute_steps_per_iteration(const JobPlan& job, const ComputeProfile& profile,
                                          int channels) {
  return program_index(job, profile, channels).back() + static_cast<std::uint32_t>(channels);
}

// Adasum's dot products over a received and a local vector of `bytes` each: one pass reading
// both at the GPU's streaming rate (workers only: Adasum has no dedicated servers).
Picoseconds adasum_dot_products(const JobPlan& job, int rank, std::uint64_t bytes) {
  const GpuSpec& gpu = job.spec.gpu[static_cast<std::size_t>(rank)];
  const double rate = gpu.memory_bytes_per_second * gpu.memory_efficiency *
                      job.spec.speed[static_cast<std::size_t>(rank)];
  return static_cast<Picoseconds>(std::llround(2.0 * static_cast<double>(bytes) / rate * 1e12));
}

// The index of each collective's join step on communication channel `channel` of `rank` in the
// first iteration (kNone before the channel's first collective), and the channel's steps per
// iteration as the last entry: counted by pulling the generators once. `bases` gets the index of
// each collective's first generator step in the first iteration (kNone where it has no program
// on the channel): where a generator's cross-program waits (Step::wait_channel, e.g. nvls_tree's
// lanes) land.
std::vector<std::uint32_t> collective_joins(const TrainingPlan& plan, const JobPlan& job, int rank,
                                            int channel, std::vector<std::uint32_t>& bases) {
  std::vector<std::uint32_t> joins;
  bases.clear();
  std::uint32_t count = 0;
  for (const PlannedCollective& c : job.collectives) {
    bases.push_back(kNone);
    if (has_program(c, channel)) {
      StepStream stream = algorithm_of(c).program(c.call, rank, channel - c.first_channel);
      const bool adasum = c.call.reduction == coll::Reduction::adasum;
      if (channel > c.first_channel) ++count; // the marker that waits for the previous collective
      if (launch_cost(plan, c) > 0) ++count;
      bases.back() = count;
      for (Step step; stream.next(step);)
        count += adasum && step.kind == StepKind::recv_reduce ? 2 : 1; // + Adasum's dot products
      ++count;                                                         // the join
    }
    joins.push_back(count > 0 ? count - 1 : kNone);
  }
  joins.push_back(count);
  return joins;
}

// What every program of the schedule needs about its rank and the collectives, worked out once
// when the schedule is made, before any program runs: each (job, local rank, communication
// channel)'s collective_joins, and each (job, local rank)'s buffer offsets of every collective.
// Why: each program needs the joins of two other channels and the compute program those of all
// channels, and every program walked the offsets of all collectives (an algorithm's scratch size
// can cost a walk over the nodes); done inside the programs that pulled every generator three
// more times, and the frames of those pulls, made between the programs' long-lived frames, kept
// most of the frame arena's chunks from being freed (a 128-GPU BERT iteration held 1.2 GB).
// Identical lists (ranks in the same position of every collective) are stored once.
class ProgramTable {
public:
  ProgramTable(const TrainingPlan& plan, int channels) : channels_(channels) {
    for (const JobPlan& job : plan.jobs) {
      const int locals = static_cast<int>(job.spec.gpus.size() + job.spec.server_gpus.size());
      std::vector<std::uint32_t> join_slots, base_slots, offset_slots;
      join_slots.reserve(std::size_t(locals) * std::size_t(channels));
      base_slots.reserve(std::size_t(locals) * std::size_t(channels));
      for (int local = 0; local < locals; ++local) {
        for (int channel = 0; channel < channels; ++channel) {
          std::vector<std::uint32_t> bases;
          std::vector<std::uint32_t> joins =
              channel == kComputeChannel ? std::vector<std::uint32_t>{}
                                         : collective_joins(plan, job, local, channel, bases);
          join_slots.push_back(intern(joins_seen_, joins_, std::move(joins)));
          base_slots.push_back(intern(joins_seen_, joins_, std::move(bases)));
        }
        // Offsets before each collective, then the totals: input, output, scratch in turn.
        std::vector<std::uint64_t> offsets;
        offsets.reserve(3 * (job.collectives.size() + 1));
        Offsets at;
        for (const PlannedCollective& c : job.collectives) {
          offsets.insert(offsets.end(), {at.input, at.output, at.scratch});
          at.advance(algorithm_of(c), c.call, local);
        }
        offsets.insert(offsets.end(), {at.input, at.output, at.scratch});
        offset_slots.push_back(intern(offsets_seen_, offsets_, std::move(offsets)));
      }
      join_slots_.push_back(std::move(join_slots));
      base_slots_.push_back(std::move(base_slots));
      offset_slots_.push_back(std::move(offset_slots));
    }
  }
  // The joins of `channel` (>= 1; 0 gives an empty list) of local rank `local` of job `job`.
  const std::vector<std::uint32_t>& joins(int job, int local, int channel) const {
    const std::vector<std::uint32_t>& slots = join_slots_[static_cast<std::size_t>(job)];
    return *joins_[slots[std::size_t(local) * std::size_t(channels_) + std::size_t(channel)]];
  }
  // The index of each collective's first generator step on `channel` (>= 1) in the first
  // iteration (collective_joins' bases).
  const std::vector<std::uint32_t>& bases(int job, int local, int channel) const {
    const std::vector<std::uint32_t>& slots = base_slots_[static_cast<std::size_t>(job)];
    return *joins_[slots[std::size_t(local) * std::size_t(channels_) + std::size_t(channel)]];
  }
  // Local rank `local`'s offsets of collective `c` of job `job` (c = the count: the totals).
  Offsets offsets(int job, int local, std::size_t c) const {
    const std::vector<std::uint64_t>& o =
        *offsets_[offset_slots_[static_cast<std::size_t>(job)][static_cast<std::size_t>(local)]];
    return Offsets{o[3 * c], o[3 * c + 1], o[3 * c + 2]};
  }

private:
  template <typename T>
  static std::uint32_t intern(std::map<std::vector<T>, std::uint32_t>& seen,
                              std::vector<const std::vector<T>*>& pool, std::vector<T> list) {
    const auto [it, added] = seen.emplace(std::move(list), static_cast<std::uint32_t>(pool.size()));
    if (added) pool.push_back(&it->first); // a map's keys stay where they are
    return it->second;
  }

  int channels_;
  std::map<std::vector<std::uint32_t>, std::uint32_t> joins_seen_;
  std::map<std::vector<std::uint64_t>, std::uint32_t> offsets_seen_;
  std::vector<const std::vector<std::uint32_t>*> joins_;
  std::vector<const std::vector<std::uint64_t>*> offsets_;
  std::vector<std::vector<std::uint32_t>> join_slots_;   // per job: local x channel -> joins_
  std::vector<std::vector<std::uint32_t>> base_slots_;   // per job: local x channel -> joins_
  std::vector<std::vector<std::uint32_t>> offset_slots_; // per job: local -> offsets_
};

// Communication channel `channel` (>= 1) of local rank `rank` of `job`.
StepStream communication_program(std::shared_ptr<const TrainingPlan> plan,
                                 std::shared_ptr<const ProgramTable> table, int job_index, int rank,
                                 int channel, int channels) {
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
  // Every iteration runs the same collectives on the same buffers, each after its compute step
  // of that iteration: the program index of each profile step.
  const std::vector<std::uint32_t> index_of =
      profile >= 0 ? program_index(job, job.profiles[std::size_t(profile)], channels)
                   : std::vector<std::uint32_t>{};
  const std::uint32_t compute_steps =
      profile >= 0 ? compute_steps_per_iteration(job, job.profiles[std::size_t(profile)], channels)
                   : 0;
  // A collective's channels run as one kernel (NCCL launches them together and the call ends
  // when all have): channel c's join also waits for channel c+1's, so its stream's first
  // channel's join ends the collective, and on the stream's other channels a marker before each
  // collective waits for that join of the stream's collective before. Without it channels drift
  // apart over many collectives and iterations.
  const std::vector<std::uint32_t>& next_joins =
      table->joins(job_index, rank, channel + 1 < channels ? channel + 1 : kComputeChannel);
  const std::size_t count = job.collectives.size();
  for (int iteration = 0; iteration < plan->iterations; ++iteration) {
    for (std::size_t i = 0; i < count; ++i) {
      const PlannedCollective& c = job.collectives[i];
      const coll::Algorithm& algorithm = algorithm_of(c);
      const Offsets offsets = table->offsets(job_index, rank, i);
      // ready_step indexes the profile's steps; the program has ByteScheduler's gate markers
      // between them (index_of).
      const std::uint32_t ready = profile >= 0
                                      ? index_of[c.ready_step[static_cast<std::size_t>(profile)]] +
                                            static_cast<std::uint32_t>(iteration) * compute_steps
                                      : kNone;
      if (has_program(c, channel)) {
        StepStream stream = algorithm.program(c.call, rank, channel - c.first_channel);
        if (channel > c.first_channel) { // the stream's previous collective has ended everywhere
          const std::vector<std::uint32_t>& first_joins =
              table->joins(job_index, rank, c.first_channel);
          Step sync = compute_step(0, channel);
          const std::uint32_t k = static_cast<std::uint32_t>(iteration);
          const std::uint32_t previous = i > 0 ? first_joins[i - 1] + k * first_joins.back()
                                         : k > 0
                                             ? first_joins[count - 1] + (k - 1) * first_joins.back()
                                             : kNone;
          if (previous != kNone) {
            sync.wait_channel = static_cast<std::uint16_t>(c.first_channel);
            sync.wait_step = previous;
          }
          add_dep(sync, previous_join);
          co_yield sync;
          previous_join = index++;
        }
        if (const Picoseconds cost = launch_cost(*plan, c); cost > 0) {
          // The launch, which the collective's steps then follow.
          Step launch = compute_step(cost, channel);
          if (ready != kNone) {
            launch.wait_channel = kComputeChannel;
            launch.wait_step = ready;
          }
          add_dep(launch, previous_join);
          co_yield launch;
          previous_join = index++;
        }
        const std::uint32_t base = index;
        // The join waits for the last step of each kind: steps of one kind complete in order, but
        // a switch step (NVLS) completes with its group, not with the rank's local work.
        std::uint32_t last_send = kNone, last_receive = kNone, last_local = kNone,
                      last_switch = kNone;
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
          step.protocol = c.protocol;
          if (step.has_wait()) { // a wait for another program of the collective (generator channel)
            const int other = step.wait_channel + c.first_channel;
            if (adasum || !has_program(c, other))
              throw std::logic_error("training schedule: " + c.call.algorithm +
                                     " waits for a channel it has no program on");
            step.wait_channel = static_cast<std::uint16_t>(other);
            step.wait_step +=
                table->bases(job_index, rank, other)[i] +
                static_cast<std::uint32_t>(iteration) * table->joins(job_index, rank, other).back();
          }
          if (index == base) {
            // A first step that waits for another program of the collective keeps that wait: the
            // step it names comes after that program's first step, which waits for `ready`.
            if (ready != kNone && !step.has_wait()) {
              step.wait_channel = kComputeChannel;
              step.wait_step = ready;
            }
            add_dep(step, previous_join);
          }
          (step.is_send()      ? last_send
           : step.is_receive() ? last_receive
           : step.is_switch()  ? last_switch
                               : last_local) = index;
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
        add_dep(join, last_switch);
        if (index == base) { // no step on this channel: the join stands in for the collective
          if (ready != kNone) {
            join.wait_channel = kComputeChannel;
            join.wait_step = ready;
          }
          add_dep(join, previous_join);
        } else if (has_program(c, channel + 1) && next_joins[i] != kNone) {
          join.wait_channel = static_cast<std::uint16_t>(channel + 1);
          join.wait_step =
              next_joins[i] + static_cast<std::uint32_t>(iteration) * next_joins.back();
        }
        co_yield join;
        previous_join = index++;
      }
    }
  }
}

StepStream compute_program(std::shared_ptr<const TrainingPlan> plan,
                           std::shared_ptr<const ProgramTable> table, int job_index, int rank,
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
  // Per communication channel, each collective's join in the first iteration and (last) the
  // channel's steps per iteration.
  std::vector<const std::vector<std::uint32_t>*> joins(static_cast<std::size_t>(channels));
  for (int channel = 1; channel < channels; ++channel)
    joins[std::size_t(channel)] = &table->joins(job_index, rank, channel);
  auto per_iteration = [&joins](int channel) { return joins[std::size_t(channel)]->back(); };
  // The join of collective c on `channel` in iteration `iteration`, or kNone.
  // (A channel of another stream has other collectives' joins: kNone.)
  auto join_of = [&](int channel, int c, std::uint32_t iteration) {
    if (!has_program(job.collectives[std::size_t(c)], channel)) return kNone;
    const std::uint32_t first = (*joins[std::size_t(channel)])[std::size_t(c)];
    return first == kNone ? kNone : first + iteration * per_iteration(channel);
  };
  const bool barrier = job.gate_collective.empty();
  for (std::uint32_t iteration = 0; iteration < std::uint32_t(plan->iterations); ++iteration) {
    for (std::size_t i = 0; i + 1 < profile.steps.size(); ++i) {
      const ComputeStep& step = profile.steps[i];
      if (gated(job, step)) {
        // ByteScheduler: the layer's forward pass waits for its last partition of the previous
        // iteration on every channel, then updates the layer's parameters.
        const int c = job.gate_collective[static_cast<std::size_t>(step.layer)];
        for (int channel = 1; channel < channels; ++channel) {
          const bool last = channel + 1 == channels;
          Step gate = compute_step(
              last && iteration > 0 ? profile.layer_update[std::size_t(step.layer)] : 0,
              kComputeChannel);
          if (gate.param > 0) gate.memory_bound_share = 1; // the optimizer's update streams memory
          if (const std::uint32_t join = iteration > 0 ? join_of(channel, c, iteration - 1) : kNone;
              join != kNone) {
            gate.wait_channel = static_cast<std::uint16_t>(channel);
            gate.wait_step = join;
          }
          co_yield next(gate);
        }
      }
      Step out = compute_step(step.duration, kComputeChannel);
      if (step.duration > 0) out.memory_bound_share = step.memory_bound_share;
      if (step.wait_exchange >= 0) { // a model-parallel all-to-all (one channel) must be done
        const int c = job.exchange_collective[static_cast<std::size_t>(step.wait_exchange)];
        const int lead = c >= 0 ? job.collectives[std::size_t(c)].first_channel : 1;
        if (const std::uint32_t join = c >= 0 ? join_of(lead, c, iteration) : kNone;
            join != kNone) {
          out.wait_channel = static_cast<std::uint16_t>(lead);
          out.wait_step = join;
        }
      }
      co_yield next(out);
    }
    // The optimizer waits for every collective of the iteration (a marker per channel, one that
    // waits for nothing where the channel has no step, or with ByteScheduler's per-layer gates).
    for (int channel = 1; channel < channels; ++channel) {
      Step wait = compute_step(0, kComputeChannel);
      if (const std::uint32_t steps = per_iteration(channel); steps > 0 && barrier) {
        wait.wait_channel = static_cast<std::uint16_t>(channel);
        wait.wait_step = (iteration + 1) * steps - 1;
      }
      co_yield next(wait);
    }
    Step optimizer = compute_step(profile.steps.back().duration, kComputeChannel);
    if (optimizer.param > 0) optimizer.memory_bound_share = profile.steps.back().memory_bound_share;
    co_yield next(optimizer);
  }
}

StepStream no_program() {
  co_return;
}

class TrainingSource final : public coll::ProgramSource {
public:
  explicit TrainingSource(std::shared_ptr<const TrainingPlan> plan) : plan_(std::move(plan)) {
    channels_ = iteration_channels(*plan_);
    table_ = std::make_shared<const ProgramTable>(*plan_, channels_);
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
  std::vector<coll::Protocol> protocols() const override { return plan_->protocols; }

  std::uint64_t buffer_bytes(int rank, Buffer buffer) const override {
    const int j = job_of_rank_[static_cast<std::size_t>(rank)];
    if (j < 0) return 0;
    const int local = local_rank_[static_cast<std::size_t>(rank)];
    const Offsets total =
        table_->offsets(j, local, plan_->jobs[static_cast<std::size_t>(j)].collectives.size());
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
      return local < workers ? compute_program(plan_, table_, j, local, channels_) : no_program();
    return communication_program(plan_, table_, j, local, channel, channels_);
  }

private:
  std::shared_ptr<const TrainingPlan> plan_;
  int channels_ = 1;
  std::shared_ptr<const ProgramTable> table_;
  std::vector<int> job_of_rank_; // per global rank; -1 = unused
  std::vector<int> local_rank_;
};

} // namespace

int iteration_channels(const TrainingPlan& plan) {
  int channels = 1;
  for (const JobPlan& job : plan.jobs)
    for (const PlannedCollective& c : job.collectives)
      channels = std::max(channels, c.first_channel + algorithm_of(c).channels(c.call));
  return channels;
}

std::uint32_t compute_steps_per_iteration(const TrainingPlan& plan, const JobPlan& job,
                                          const ComputeProfile& profile) {
  return compute_steps_per_iteration(job, profile, iteration_channels(plan));
}

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
