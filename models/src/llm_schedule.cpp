// An LLM iteration plan (llm_plan.cpp) as one coll::Schedule, a composite like the data-parallel
// iteration's (iteration_schedule.cpp), so every engine runs it.
//
// Per rank, five channels: 0 the compute stream (the stage's compute steps in order, each after
// the one before, and a zero-duration marker wherever the stream waits: for a TP or EP
// collective's end, a pipeline receive, a ZeRO-3 gather, or, before the optimizer, every DP
// collective and pipeline send), 1 the TP collectives, 2 the pipeline sends and receives, 3 the
// DP collectives, 4 the EP all-to-alls. A collective on channel 1, 3 or 4 is its registry
// generator's program (one channel: see docs/large-model-training.md) for the rank's place in
// its group, re-emitted with peers mapped to global ranks and its deps moved, after a launch step
// (NCCL's per-call cost, or a calibrated launch overhead) that waits for the compute step before
// it and for the previous collective on that channel, and followed by a zero-duration join that
// waits for its last steps. Every channel walks the stage's work in the same order and counts the
// steps every other channel emits, so that waits name steps by index; nothing is held whole.
#include "ddlsim/collectives/algorithm.hpp"
#include "ddlsim/models/llm.hpp"
#include "schedule_steps.hpp"

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

void wait_for(Step& step, int channel, std::uint32_t index) {
  if (index == kNone) return;
  step.wait_channel = static_cast<std::uint16_t>(channel);
  step.wait_step = index;
}

int channel_of(LlmOpKind kind) {
  switch (kind) {
  case LlmOpKind::tp:
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

// Where a rank's walk over its stage's work stands: the next step index on every channel.
struct Position {
  std::array<std::uint32_t, kLlmChannels> next{};
  std::uint32_t last(int channel) const {
    return next[std::size_t(channel)] == 0 ? kNone : next[std::size_t(channel)] - 1;
  }
};

// What the walk knows: its position, and where each DP launch's join is.
struct Walk {
  Position at;
  std::vector<std::uint32_t> dp_joins;
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

std::uint32_t steps_of(const LlmPlan& plan, const Place& place, const LlmOp& op) {
  const LlmCollective& c = plan.collectives[static_cast<std::size_t>(op.collective)];
  return c.steps[static_cast<std::size_t>(place.local[static_cast<std::size_t>(c.group)])];
}

// Advances the walk past `op` (what every channel emits for it); returns where it stood before.
Position advance(const LlmPlan& plan, const Place& place, const LlmOp& op, Walk& walk) {
  const Position before = walk.at;
  auto& next = walk.at.next;
  switch (op.kind) {
  case LlmOpKind::compute:
    ++next[kLlmComputeChannel];
    break;
  case LlmOpKind::tp:
  case LlmOpKind::ep:
    next[std::size_t(channel_of(op.kind))] += steps_of(plan, place, op);
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
    next[kLlmDpChannel] += steps_of(plan, place, op);
    walk.dp_joins.push_back(next[kLlmDpChannel] - 1);
    break;
  case LlmOpKind::dp_wait:
    ++next[kLlmComputeChannel];
    break;
  case LlmOpKind::optimizer:
    next[kLlmComputeChannel] += 2; // a marker for the DP channel, one for the pipeline
    break;
  }
  return before;
}

// The work of the job rank's pipeline stage, which every channel's program walks.
const std::vector<LlmOp>& stage_of(const LlmPlan& plan, int job_rank) {
  return plan.stages[static_cast<std::size_t>(llm_coords(plan.spec.parallel, job_rank).pp)];
}

int global_rank(const LlmPlan& plan, int job_rank) {
  return plan.spec.gpus[static_cast<std::size_t>(job_rank)];
}

StepStream compute_program(std::shared_ptr<const LlmPlan> plan, int job_rank) {
  const Place place = place_of(*plan, job_rank);
  Walk walk;
  for (const LlmOp& op : stage_of(*plan, job_rank)) {
    const Position before = advance(*plan, place, op, walk);
    // Every step of the stream follows the one before it (one kernel at a time).
    Step step = compute_step(op.kind == LlmOpKind::compute ? op.duration : 0, kLlmComputeChannel);
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
      break;
    }
  }
}

// The pipeline channel: a receive or send per transfer, to the same (tp, dp) rank of the
// neighbouring stage.
StepStream pipeline_program(std::shared_ptr<const LlmPlan> plan, int job_rank) {
  const Place place = place_of(*plan, job_rank);
  const LlmCoords c = llm_coords(plan->spec.parallel, job_rank);
  Walk walk;
  for (const LlmOp& op : stage_of(*plan, job_rank)) {
    const Position before = advance(*plan, place, op, walk);
    if (op.kind != LlmOpKind::pp_recv && op.kind != LlmOpKind::pp_send) continue;
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

// Channel 1, 3 or 4: the collectives of that stream.
StepStream collective_program(std::shared_ptr<const LlmPlan> plan, int job_rank, int channel) {
  const Place place = place_of(*plan, job_rank);
  Walk walk;
  for (const LlmOp& op : stage_of(*plan, job_rank)) {
    const Position before = advance(*plan, place, op, walk);
    if (channel_of(op.kind) != channel) continue;
    const LlmCollective& c = plan->collectives[static_cast<std::size_t>(op.collective)];
    const std::size_t g = static_cast<std::size_t>(c.group);
    const std::vector<int>& members = place.members[g];
    const std::uint32_t ready = before.last(kLlmComputeChannel);
    std::uint32_t index = before.next[std::size_t(channel)];
    std::uint32_t previous = before.last(channel);
    if (const Picoseconds cost = plan->launch_overhead > 0 ? plan->launch_overhead : c.overhead;
        cost > 0) {
      Step launch = compute_step(cost, channel);
      wait_for(launch, kLlmComputeChannel, ready);
      add_dep(launch, previous);
      co_yield launch;
      previous = index++;
    }
    const std::uint32_t base = index;
    std::uint32_t last_send = kNone, last_receive = kNone, last_local = kNone, last_switch = kNone;
    StepStream stream =
        coll::find_algorithm(c.call.op, c.call.algorithm)->program(c.call, place.local[g], 0);
    for (Step step; stream.next(step);) {
      if (step.peer >= 0)
        step.peer = global_rank(*plan, members[static_cast<std::size_t>(step.peer)]);
      for (std::uint8_t d = 0; d < step.dep_count; ++d) step.deps[d] += base;
      step.channel = static_cast<std::uint16_t>(channel);
      step.protocol = c.protocol;
      if (index == base) {
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
    Step join = compute_step(0, channel);
    add_dep(join, last_send);
    add_dep(join, last_receive);
    add_dep(join, last_local);
    add_dep(join, last_switch);
    if (index == base) {
      wait_for(join, kLlmComputeChannel, ready);
      add_dep(join, previous);
    }
    co_yield join;
  }
}

StepStream no_program() {
  co_return;
}

class LlmSource final : public coll::ProgramSource {
public:
  explicit LlmSource(std::shared_ptr<const LlmPlan> plan) : plan_(std::move(plan)) {
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
  int channels() const override { return kLlmChannels; }
  std::vector<coll::Protocol> protocols() const override { return plan_->protocols; }
  std::uint64_t buffer_bytes(int rank, Buffer buffer) const override {
    if (job_rank_[static_cast<std::size_t>(rank)] < 0) return 0;
    return buffer == Buffer::input ? input_ : buffer == Buffer::output ? output_ : scratch_;
  }
  StepStream program(int rank, int channel) const override {
    const int job_rank = job_rank_[static_cast<std::size_t>(rank)];
    if (job_rank < 0) return no_program();
    if (channel == kLlmComputeChannel) return compute_program(plan_, job_rank);
    if (channel == kLlmPpChannel) return pipeline_program(plan_, job_rank);
    return collective_program(plan_, job_rank, channel);
  }

private:
  std::shared_ptr<const LlmPlan> plan_;
  std::vector<int> job_rank_;
  std::uint64_t input_ = 0, output_ = 0, scratch_ = 0;
};

} // namespace

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
