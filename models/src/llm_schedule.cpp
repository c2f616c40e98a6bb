// An LLM iteration plan (llm_plan.cpp) as one coll::Schedule, a composite like the data-parallel
// iteration's (iteration_schedule.cpp), so every engine runs it.
//
// Per rank, five channels: 0 the compute stream (the stage's compute steps in order, each after
// the one before, and a zero-duration marker wherever the stream waits: for a TP or EP
// collective's end, a pipeline receive, a ZeRO-3 gather, or, before the optimizer, every DP
// collective and pipeline send), 1 the TP collectives, 2 the pipeline sends and receives, 3 the
// DP collectives, 4 the EP all-to-alls; then the further lanes of the TP, DP and EP collectives.
// A collective runs on its kind's channel and, with several lanes (NCCL's channels across
// nodes, LlmCollective::lanes), on as many further ones: on lane l its registry generator's
// program of channel l for the rank's place in its group, re-emitted with peers mapped to global
// ranks and its deps moved, after a launch step (NCCL's per-call cost, or a calibrated launch
// overhead) that waits for the compute step before it and for the previous collective on that
// lane, and followed by a zero-duration join that waits for its last steps. NCCL's channels run
// as one kernel: lane l's join also waits for lane l+1's, so the first lane's join ends the
// collective, and lanes after the first start with a marker that waits for the end of the
// collective before (docs/large-model-training.md). Every channel walks the stage's work in the
// same order and counts the steps every other channel emits, so that waits name steps by index;
// nothing is held whole.
#include "ddlsim/collectives/algorithm.hpp"
#include "ddlsim/models/llm.hpp"
#include "schedule_steps.hpp"

#include <algorithm>
#include <memory>
#include <mutex>

namespace ddlsim::models {
namespace {

using coll::Buffer;
using coll::Step;
using coll::StepKind;
using coll::StepStream;

using detail::add_dep;
using detail::compute_step;
using detail::kNone;

void wait_for(Step& step, int channel, std::uint32_t index) {
  if (index == kNone) return;
  step.wait_channel = static_cast<std::uint16_t>(channel);
  step.wait_step = index;
}

int channel_of(LlmOpKind kind) {
  switch (kind) {
  case LlmOpKind::tp:
  case LlmOpKind::tp_launch:
    return kLlmTpChannel;
  case LlmOpKind::ep:
    return kLlmEpChannel;
  case LlmOpKind::dp:
    return kLlmDpChannel;
  case LlmOpKind::pp_recv:
  case LlmOpKind::pp_send:
    return kLlmPpChannel;
  default:
    return kLlmComputeChannel;
  }
}

// The schedule channel of each lane of the TP, DP and EP collectives: lane 0 on the kind's own
// channel (llm.hpp), the others after kLlmChannels, TP's, then DP's, then EP's.
constexpr int kKinds = 3;
constexpr int kMaxChannels = kLlmChannels + kKinds * (kLlmMaxLanes - 1);

int kind_of(LlmGroup group) {
  return group == LlmGroup::tp ? 0 : group == LlmGroup::ep ? 2 : 1;
}
int kind_of_channel(int channel) {
  return channel == kLlmTpChannel ? 0 : channel == kLlmDpChannel ? 1 : 2;
}

struct Lanes {
  std::array<int, kKinds> count{1, 1, 1};
  std::array<int, kKinds> first_extra{};
  int channels = kLlmChannels;

  explicit Lanes(const LlmPlan& plan) {
    for (const LlmCollective& c : plan.collectives) {
      int& n = count[std::size_t(kind_of(c.group))];
      n = std::max(n, c.lanes);
    }
    for (int k = 0; k < kKinds; ++k) {
      first_extra[std::size_t(k)] = channels;
      channels += count[std::size_t(k)] - 1;
    }
  }
  int channel(int kind, int lane) const {
    static constexpr std::array<int, kKinds> base{kLlmTpChannel, kLlmDpChannel, kLlmEpChannel};
    return lane == 0 ? base[std::size_t(kind)] : first_extra[std::size_t(kind)] + lane - 1;
  }
  // The (kind, lane) of a collective channel.
  std::pair<int, int> lane_of(int channel) const {
    if (channel < kLlmChannels) return {kind_of_channel(channel), 0};
    int kind = 0;
    while (kind + 1 < kKinds && channel >= first_extra[std::size_t(kind + 1)]) ++kind;
    return {kind, channel - first_extra[std::size_t(kind)] + 1};
  }
};

// Where a rank's walk over its stage's work stands: the next step index on every channel.
struct Position {
  std::array<std::uint32_t, kMaxChannels> next{};
  std::uint32_t last(int channel) const {
    return next[std::size_t(channel)] == 0 ? kNone : next[std::size_t(channel)] - 1;
  }
};

// What the walk knows: its position, where each DP launch's join is, and where the last TP
// launch (TP communication overlap) began on the TP channel and which collective it was.
struct Walk {
  Position at;
  std::vector<std::uint32_t> dp_joins;
  std::uint32_t tp_first = 0;
  int tp_collective = -1;
  std::uint32_t last(int channel) const { return at.last(channel); }
};

// The rank's local index in each group, for the collectives' programs and their step counts.
struct Place {
  int job_rank = 0;
  std::array<std::vector<int>, 4> members; // per LlmGroup, job ranks in local order
  std::array<int, 4> local{};
};

Place place_of(const LlmPlan& plan, int job_rank) {
  Place p;
  p.job_rank = job_rank;
  for (int g = 0; g < 4; ++g) {
    p.members[std::size_t(g)] = plan.group_members(static_cast<LlmGroup>(g), job_rank);
    const auto& m = p.members[std::size_t(g)];
    p.local[std::size_t(g)] = static_cast<int>(std::find(m.begin(), m.end(), job_rank) - m.begin());
  }
  return p;
}

// The steps the rank emits for collective `c` on lane `lane`.
std::uint32_t steps_of(const LlmCollective& c, const Place& place, int lane) {
  const auto local = static_cast<std::size_t>(place.local[static_cast<std::size_t>(c.group)]);
  return c.steps[local * std::size_t(c.lanes) + std::size_t(lane)];
}

// Moves every lane of the collective `op` names past its steps.
void advance_lanes(const LlmPlan& plan, const Lanes& lanes, const Place& place, const LlmOp& op,
                   Position& at) {
  const LlmCollective& c = plan.collectives[static_cast<std::size_t>(op.collective)];
  const int kind = kind_of(c.group);
  for (int lane = 0; lane < c.lanes; ++lane)
    at.next[std::size_t(lanes.channel(kind, lane))] += steps_of(c, place, lane);
}

// Advances the walk past `op` (what every channel emits for it).
void advance_past(const LlmPlan& plan, const Lanes& lanes, const Place& place, const LlmOp& op,
                  Walk& walk) {
  auto& next = walk.at.next;
  switch (op.kind) {
  case LlmOpKind::compute:
    ++next[kLlmComputeChannel];
    break;
  case LlmOpKind::tp:
  case LlmOpKind::ep:
    advance_lanes(plan, lanes, place, op, walk.at);
    ++next[kLlmComputeChannel];
    break;
  case LlmOpKind::tp_launch:
    walk.tp_first = next[kLlmTpChannel];
    walk.tp_collective = op.collective;
    advance_lanes(plan, lanes, place, op, walk.at);
    break;
  case LlmOpKind::tp_wait:
    ++next[kLlmComputeChannel];
    break;
  case LlmOpKind::pp_recv:
    ++next[kLlmPpChannel];
    ++next[kLlmComputeChannel];
    break;
  case LlmOpKind::pp_send:
    ++next[kLlmPpChannel];
    break;
  case LlmOpKind::dp:
    advance_lanes(plan, lanes, place, op, walk.at);
    walk.dp_joins.push_back(next[kLlmDpChannel] - 1);
    break;
  case LlmOpKind::dp_wait:
    ++next[kLlmComputeChannel];
    break;
  case LlmOpKind::optimizer:
    next[kLlmComputeChannel] += 2; // a marker for the DP channel, one for the pipeline
    break;
  }
}

// Advances the walk past `op`; returns where it stood before. A channel that emits nothing for
// `op` calls advance_past instead: the copy is the cost of a walk over thousands of ops.
Position advance(const LlmPlan& plan, const Lanes& lanes, const Place& place, const LlmOp& op,
                 Walk& walk) {
  const Position before = walk.at;
  advance_past(plan, lanes, place, op, walk);
  return before;
}

// The work of the job rank's pipeline stage, which every channel's program walks.
const std::vector<LlmOp>& stage_of(const LlmPlan& plan, int job_rank) {
  return plan.stages[static_cast<std::size_t>(llm_coords(plan.spec.parallel, job_rank).pp)];
}

int global_rank(const LlmPlan& plan, int job_rank) {
  return plan.spec.gpus[static_cast<std::size_t>(job_rank)];
}

// The generator's program of each (collective, local rank, lane), made on first use and shared by
// every rank and call that replays it: a collective runs thousands of times per iteration on
// hundreds of groups, and generating its steps again each time was a fifth of the run. The
// steps are the generator's own (a generator is a function of its call, rank and channel), so
// replaying them is generating them; the source stays immutable to its users (a lock guards the
// fill, for an engine that pulls programs from several threads).
class GeneratorPrograms {
public:
  explicit GeneratorPrograms(const LlmPlan& plan) {
    first_.reserve(plan.collectives.size());
    std::size_t slots = 0;
    for (const LlmCollective& c : plan.collectives) {
      first_.push_back(slots);
      slots += static_cast<std::size_t>(c.call.ranks) * static_cast<std::size_t>(c.lanes);
    }
    slots_.resize(slots);
  }

  std::shared_ptr<const std::vector<Step>> steps(const LlmPlan& plan, int collective, int local,
                                                 int lane) {
    const LlmCollective& c = plan.collectives[static_cast<std::size_t>(collective)];
    const std::size_t slot = first_[static_cast<std::size_t>(collective)] +
                             static_cast<std::size_t>(local) * std::size_t(c.lanes) +
                             static_cast<std::size_t>(lane);
    const std::lock_guard lock(mutex_);
    std::shared_ptr<const std::vector<Step>>& steps = slots_[slot];
    if (!steps) {
      auto made = std::make_shared<std::vector<Step>>();
      const coll::Algorithm* algorithm = coll::find_algorithm(c.call.op, c.call.algorithm);
      if (lane < algorithm->channels(c.call)) {
        StepStream stream = algorithm->program(c.call, local, lane);
        for (Step step; stream.next(step);) made->push_back(step);
      }
      made->shrink_to_fit();
      steps = std::move(made);
    }
    return steps;
  }

private:
  std::vector<std::size_t> first_; // per collective, its first slot
  std::vector<std::shared_ptr<const std::vector<Step>>> slots_;
  std::mutex mutex_;
};

StepStream compute_program(std::shared_ptr<const LlmPlan> plan, Lanes lanes, int job_rank) {
  const Place place = place_of(*plan, job_rank);
  Walk walk;
  for (const LlmOp& op : stage_of(*plan, job_rank)) {
    const Position before = advance(*plan, lanes, place, op, walk);
    // Every step of the stream follows the one before it (one kernel at a time).
    Step step = compute_step(op.kind == LlmOpKind::compute ? op.duration : 0, kLlmComputeChannel);
    if (op.kind == LlmOpKind::compute && op.duration > 0)
      step.memory_bound_share = op.memory_bound_share;
    add_dep(step, before.last(kLlmComputeChannel));
    switch (op.kind) {
    case LlmOpKind::compute:
      co_yield step;
      break;
    case LlmOpKind::tp:
    case LlmOpKind::ep:
    case LlmOpKind::pp_recv: // the collective's join, or the receive
      wait_for(step, channel_of(op.kind), walk.last(channel_of(op.kind)));
      co_yield step;
      break;
    case LlmOpKind::dp_wait:
      wait_for(step, kLlmDpChannel, walk.dp_joins[static_cast<std::size_t>(op.collective)]);
      co_yield step;
      break;
    case LlmOpKind::tp_wait: { // a receive of the last TP launch, or its join (the last step)
      std::uint32_t index = walk.last(kLlmTpChannel);
      if (op.part >= 0) {
        const LlmCollective& c = plan->collectives[static_cast<std::size_t>(walk.tp_collective)];
        const auto local = static_cast<std::size_t>(place.local[std::size_t(c.group)]);
        index = walk.tp_first +
                c.receives[local * std::size_t(c.call.ranks - 1) + std::size_t(op.part)];
      }
      wait_for(step, kLlmTpChannel, index);
      co_yield step;
      break;
    }
    case LlmOpKind::optimizer: {
      wait_for(step, kLlmDpChannel, walk.last(kLlmDpChannel));
      co_yield step;
      Step pipeline = compute_step(0, kLlmComputeChannel);
      wait_for(pipeline, kLlmPpChannel, walk.last(kLlmPpChannel));
      add_dep(pipeline, before.next[kLlmComputeChannel]); // the marker just emitted
      co_yield pipeline;
      break;
    }
    case LlmOpKind::pp_send:
    case LlmOpKind::dp:
    case LlmOpKind::tp_launch:
      break;
    }
  }
}

// The pipeline channel: a receive or send per transfer, to the same (tp, dp) rank of the
// neighbouring stage.
StepStream pipeline_program(std::shared_ptr<const LlmPlan> plan, Lanes lanes, int job_rank) {
  const Place place = place_of(*plan, job_rank);
  const LlmCoords c = llm_coords(plan->spec.parallel, job_rank);
  Walk walk;
  for (const LlmOp& op : stage_of(*plan, job_rank)) {
    if (op.kind != LlmOpKind::pp_recv && op.kind != LlmOpKind::pp_send) {
      advance_past(*plan, lanes, place, op, walk);
      continue;
    }
    const Position before = advance(*plan, lanes, place, op, walk);
    const bool send = op.kind == LlmOpKind::pp_send;
    // Forward: receive from the previous stage, send to the next; backward the other way.
    LlmCoords peer = c;
    peer.pp = llm_pipeline_peer(plan->spec.parallel, c.pp, op.forward_dir, send);
    Step s;
    s.kind = send ? StepKind::send : StepKind::recv;
    s.channel = kLlmPpChannel;
    s.peer = global_rank(*plan, llm_rank(plan->spec.parallel, peer));
    s.bytes = op.bytes;
    (send ? s.src : s.dst) = {send ? Buffer::input : Buffer::output, 0, op.bytes};
    if (send) wait_for(s, kLlmComputeChannel, before.last(kLlmComputeChannel));
    co_yield s;
  }
}

// A collective channel: lane `lane` of the collectives of one kind (TP, DP or EP).
StepStream collective_program(std::shared_ptr<const LlmPlan> plan,
                              std::shared_ptr<GeneratorPrograms> programs, Lanes lanes,
                              int job_rank, int channel) {
  const Place place = place_of(*plan, job_rank);
  const auto [kind, lane] = lanes.lane_of(channel);
  const int first = lanes.channel(kind, 0);
  Walk walk;
  for (const LlmOp& op : stage_of(*plan, job_rank)) {
    if (channel_of(op.kind) != first ||
        lane >= plan->collectives[static_cast<std::size_t>(op.collective)].lanes) {
      advance_past(*plan, lanes, place, op, walk);
      continue;
    }
    const Position before = advance(*plan, lanes, place, op, walk);
    const LlmCollective& c = plan->collectives[static_cast<std::size_t>(op.collective)];
    const std::size_t g = static_cast<std::size_t>(c.group);
    const std::vector<int>& members = place.members[g];
    const std::uint32_t ready = before.last(kLlmComputeChannel);
    std::uint32_t index = before.next[std::size_t(channel)];
    std::uint32_t previous = before.last(channel);
    if (lane > 0) { // the collective before has ended on every lane (its first lane's join)
      Step sync = compute_step(0, channel);
      wait_for(sync, first, before.last(first));
      add_dep(sync, previous);
      co_yield sync;
      previous = index++;
    }
    if (const Picoseconds cost = plan->launch_overhead > 0 ? plan->launch_overhead : c.overhead;
        cost > 0) {
      Step launch = compute_step(cost, channel);
      wait_for(launch, kLlmComputeChannel, ready);
      add_dep(launch, previous);
      co_yield launch;
      previous = index++;
    }
    const std::uint32_t base = index;
    // Where lane `other`'s generator steps of this collective begin: after its marker (lanes
    // after the first) and its launch, as on this lane.
    auto base_of = [&, kind = kind](int other) { // (clang 14 captures no structured binding)
      const Picoseconds cost = plan->launch_overhead > 0 ? plan->launch_overhead : c.overhead;
      return before.next[std::size_t(lanes.channel(kind, other))] + (other > 0 ? 1u : 0u) +
             (cost > 0 ? 1u : 0u);
    };
    std::uint32_t last_send = kNone, last_receive = kNone, last_local = kNone, last_switch = kNone;
    const std::shared_ptr<const std::vector<Step>> steps =
        programs->steps(*plan, op.collective, place.local[g], lane);
    for (Step step : *steps) {
      if (step.peer >= 0)
        step.peer = global_rank(*plan, members[static_cast<std::size_t>(step.peer)]);
      for (std::uint8_t d = 0; d < step.dep_count; ++d) step.deps[d] += base;
      step.channel = static_cast<std::uint16_t>(channel);
      step.protocol = c.protocol;
      if (step.has_wait()) { // a wait for another lane of the collective (its generator channel)
        const int other = step.wait_channel;
        if (other >= c.lanes)
          throw std::logic_error("llm schedule: " + c.call.algorithm +
                                 " waits for a channel it has no lane for");
        step.wait_step += base_of(other);
        step.wait_channel = static_cast<std::uint16_t>(lanes.channel(kind, other));
      }
      if (index == base) {
        // A first step that waits for another lane of the collective keeps that wait: the step
        // it names comes after that lane's first step, which waits for `ready`.
        if (!step.has_wait()) wait_for(step, kLlmComputeChannel, ready);
        add_dep(step, previous);
      }
      (step.is_send()      ? last_send
       : step.is_receive() ? last_receive
       : step.is_switch()  ? last_switch
                           : last_local) = index;
      co_yield step;
      ++index;
    }
    const bool chained = lane + 1 < c.lanes; // the join also waits for the next lane's
    Step join = compute_step(0, channel);
    add_dep(join, last_send);
    add_dep(join, last_receive);
    add_dep(join, last_local);
    add_dep(join, last_switch);
    if (index == base) { // no step of its own: it stands in for the collective on this lane
      if (chained) {     // the wait goes to the next lane; a marker waits for the compute
        Step marker = compute_step(0, channel);
        wait_for(marker, kLlmComputeChannel, ready);
        add_dep(marker, previous);
        co_yield marker;
        previous = index++;
      } else {
        wait_for(join, kLlmComputeChannel, ready);
      }
      add_dep(join, previous);
    }
    if (chained) { // the next lane's join: its last step for this collective
      const int next_lane = lanes.channel(kind, lane + 1);
      wait_for(join, next_lane,
               before.next[std::size_t(next_lane)] + steps_of(c, place, lane + 1) - 1);
    }
    co_yield join;
  }
}

StepStream no_program() {
  co_return;
}

class LlmSource final : public coll::ProgramSource {
public:
  explicit LlmSource(std::shared_ptr<const LlmPlan> plan)
      : plan_(std::move(plan)), lanes_(*plan_),
        programs_(std::make_shared<GeneratorPrograms>(*plan_)) {
    job_rank_.assign(static_cast<std::size_t>(plan_->ranks), -1);
    for (std::size_t r = 0; r < plan_->spec.gpus.size(); ++r)
      job_rank_[static_cast<std::size_t>(plan_->spec.gpus[r])] = static_cast<int>(r);
    for (const LlmCollective& c : plan_->collectives) {
      const coll::Algorithm* algorithm = coll::find_algorithm(c.call.op, c.call.algorithm);
      for (int r = 0; r < c.call.ranks; ++r) {
        input_ = std::max(input_, coll::input_bytes(c.call, r));
        output_ = std::max(output_, coll::output_bytes(c.call, r));
        scratch_ = std::max(scratch_, algorithm->scratch_bytes(c.call, r));
      }
    }
    for (const std::vector<LlmOp>& stage : plan_->stages)
      for (const LlmOp& op : stage) {
        input_ = std::max(input_, op.bytes);
        output_ = std::max(output_, op.bytes);
      }
  }

  std::string_view name() const override { return "llm_training"; }
  int ranks() const override { return plan_->ranks; }
  int channels() const override { return lanes_.channels; }
  std::vector<coll::Protocol> protocols() const override { return plan_->protocols; }
  std::uint64_t buffer_bytes(int rank, Buffer buffer) const override {
    if (job_rank_[static_cast<std::size_t>(rank)] < 0) return 0;
    return buffer == Buffer::input ? input_ : buffer == Buffer::output ? output_ : scratch_;
  }
  StepStream program(int rank, int channel) const override {
    const int job_rank = job_rank_[static_cast<std::size_t>(rank)];
    if (job_rank < 0) return no_program();
    if (channel == kLlmComputeChannel) return compute_program(plan_, lanes_, job_rank);
    if (channel == kLlmPpChannel) return pipeline_program(plan_, lanes_, job_rank);
    return collective_program(plan_, programs_, lanes_, job_rank, channel);
  }

private:
  std::shared_ptr<const LlmPlan> plan_;
  Lanes lanes_;
  std::shared_ptr<GeneratorPrograms> programs_;
  std::vector<int> job_rank_;
  std::uint64_t input_ = 0, output_ = 0, scratch_ = 0;
};

} // namespace

int llm_lane_channel(const LlmPlan& plan, LlmGroup group, int lane) {
  return Lanes(plan).channel(kind_of(group), lane);
}

coll::Schedule llm_schedule(std::shared_ptr<const LlmPlan> plan) {
  coll::CollectiveCall call;
  call.op = coll::Op::all_reduce;
  call.algorithm = "llm_training";
  call.dtype = coll::DataType::fp16;
  call.ranks = std::max(1, plan->ranks);
  call.bytes = 2;
  return coll::Schedule::composite(call, std::make_shared<LlmSource>(std::move(plan)));
}

} // namespace ddlsim::models
