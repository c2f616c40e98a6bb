// The lower bound on a layout's iteration time (llm_layout_bound.hpp).
//
// The compute stream of a rank (channel 0 of llm_schedule.cpp) runs its steps one after another,
// and the iteration ends no sooner than its last step. Every rank of a pipeline stage runs the
// same work, so one pace per stage bounds them all, by induction over the stage's work:
//  - a compute step ends its duration after the one before (every engine);
//  - a pipeline receive's marker waits for the receive, which ends no sooner than the matching
//    send starts, which waits for the sending stage's compute step before it (a pair of stages
//    exchanges in order on the pipeline channel; every engine).
// On the analytic engine, whose rules (step.hpp, sim/analytic_engine.hpp) the rest follows, also
// the collectives the stream waits for. A collective's launch step (NCCL's per-call cost or the
// calibrated launch overhead: a compute step of that duration) waits for the compute step before
// it, so on every member of the group (all of the stage) it ends no sooner than the stage's pace
// there plus the launch. Its first lane's first step depends on the launch, every later step
// starts no sooner than the step before it (rule 1), and the join waits for its last steps. So
// walking the members' first-lane programs together from that common time, each step starting
// at the later of the previous step's start and its deps' ends, and ending
//  - a compute step: its duration after its start;
//  - a send and its receive (rule 2, matched in order per pair of ranks): no sooner than
//    per-step overhead + path latency + the protocol's latency beyond the path after the later
//    of their starts, plus the wire bytes at the path's bottleneck rate (a flow never moves
//    faster than the slowest link of its path; sharing only slows it); a recv_reduce ends at or
//    after its bytes arrived, and the send when its receive does (rule 3);
//  - a local step: per-step overhead after its start (its bytes take more); a switch step: at
//    its start;
// bounds each member's join, and the least over the stage's groups bounds every rank's. Waits on
// other channels and ranks, the previous collective on the lane and the later lanes are left
// out: each only delays. A TP or EP collective adds its bound where the stream waits for it at
// once, a TP overlap launch its launch at its waits, a DP collective its bound at its ZeRO-3
// wait and at the optimizer's markers (which wait for the stage's last DP collective); a DP
// collective's launch also waits for the previous one's join on the lane, so DP collectives
// follow each other. And the iteration lasts no less than the busiest link takes to carry the
// bytes all the collectives send over it (busiest_link_bound).
#include "ddlsim/runner/llm_layout_bound.hpp"

#include "ddlsim/collectives/algorithm.hpp"
#include "ddlsim/sim/engine.hpp"
#include "ddlsim/sim/protocol_cost.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <variant>
#include <vector>

namespace ddlsim::runner {
namespace {

// A flow's bytes take at least their alone time at the bottleneck rate less half a picosecond:
// its time at each rate runs between whole-picosecond events, and only its finish is rounded
// (FlowNetwork::finish_time; alone, round_half_away). 99% of the alone time, rounded down, stays
// below that for every length, with room for floating-point error.
constexpr double kBytesTermShare = 0.99;

class CollectiveChains {
public:
  CollectiveChains(const models::LlmPlan& plan, const sim::EngineSpec& engine,
                   const topo::Topology& topology, topo::Router& router, std::uint64_t seed)
      : plan_(plan), engine_(engine), topology_(topology), router_(router), seed_(seed) {}

  // The least time, over the ranks of pipeline stage `stage`, from the end of collective `c`'s
  // launch (the same lower bound for every rank of the stage) to the end of its join on the
  // first lane: every group of the stage walked.
  Picoseconds chain(int c, int stage) {
    const auto key = std::make_pair(c, stage);
    if (auto it = chains_.find(key); it != chains_.end()) return it->second;
    const models::LlmCollective& collective = plan_.collectives[static_cast<std::size_t>(c)];
    const models::LlmParallel& p = plan_.spec.parallel;
    Picoseconds least = std::numeric_limits<Picoseconds>::max();
    std::vector<bool> walked(static_cast<std::size_t>(p.gpus()), false);
    for (int r = 0; r < p.gpus(); ++r) {
      if (walked[static_cast<std::size_t>(r)] || models::llm_coords(p, r).pp != stage) continue;
      const std::vector<int> members = plan_.group_members(collective.group, r);
      for (const int m : members) walked[static_cast<std::size_t>(m)] = true;
      for (const Picoseconds join : walk(collective, members)) least = std::min(least, join);
    }
    if (least == std::numeric_limits<Picoseconds>::max()) least = 0;
    return chains_[key] = least;
  }

  // The launch step's duration (0: no launch step).
  Picoseconds launch(int c) const {
    return plan_.launch_overhead > 0 ? plan_.launch_overhead
                                     : plan_.collectives[static_cast<std::size_t>(c)].overhead;
  }

private:
  // A transfer's path and what it costs alone.
  struct Transfer {
    const topo::Path* path = nullptr;
    Picoseconds latency = 0; // before its first byte moves: overhead, path and protocol
    std::uint64_t wire = 0;  // bytes on the wire
    double rate = 0;         // bottleneck, bytes per second
    Picoseconds bytes_time() const { return bytes_at(static_cast<double>(wire), rate); }
  };

  // One member's first-lane program during the walk.
  struct Member {
    std::int32_t rank = 0; // global
    std::vector<coll::Step> steps;
    std::vector<Transfer> transfers; // per step (a default one for a step that moves nothing)
    std::vector<Picoseconds> ends;   // kUnknown until known
    std::size_t next = 0;            // the next step to start
    Picoseconds last_start = 0;
  };
  static constexpr Picoseconds kUnknown = std::numeric_limits<Picoseconds>::min();
  // A started send or receive waiting for its partner: (member, step, start).
  struct Posted {
    std::size_t member = 0, step = 0;
    Picoseconds start = 0;
  };

  // Every member's first-lane program walked together from the launch's end (0 here), each
  // transfer timed alone once both its send and its receive have started (matched in order per
  // pair of ranks, as the engines match them); the least end of each member's join.
  std::vector<Picoseconds> walk(const models::LlmCollective& c, const std::vector<int>& members) {
    const coll::Algorithm* algorithm = coll::find_algorithm(c.call.op, c.call.algorithm);
    if (algorithm == nullptr || algorithm->channels(c.call) < 1) return {0};
    const auto channel = static_cast<std::uint16_t>(models::llm_lane_channel(plan_, c.group, 0));
    const sim::ProtocolCost cost(plan_.protocols.empty()
                                     ? coll::Protocol{}
                                     : plan_.protocols[static_cast<std::size_t>(c.protocol)]);
    const std::size_t n = members.size();
    std::vector<Member> group(n);
    for (std::size_t m = 0; m < n; ++m) {
      group[m].rank = plan_.spec.gpus[static_cast<std::size_t>(members[m])];
      coll::StepStream stream = algorithm->program(c.call, static_cast<int>(m), 0);
      for (coll::Step step; stream.next(step);) group[m].steps.push_back(step);
      group[m].transfers.resize(group[m].steps.size());
      group[m].ends.assign(group[m].steps.size(), kUnknown);
    }
    // Per (sender, receiver) member pair: sends and receives not matched yet, in start order.
    std::map<std::pair<std::size_t, std::size_t>, std::array<std::vector<Posted>, 2>> posted;
    for (bool moved = true; moved;) {
      moved = false;
      for (std::size_t m = 0; m < n; ++m) {
        Member& member = group[m];
        while (member.next < member.steps.size()) {
          const std::size_t i = member.next;
          const coll::Step& step = member.steps[i];
          Picoseconds start = member.last_start;
          bool ready = true;
          for (std::uint8_t d = 0; d < step.dep_count && ready; ++d) {
            const std::uint32_t dep = step.deps[d];
            ready = dep < i && member.ends[dep] != kUnknown;
            if (ready) start = std::max(start, member.ends[dep]);
          }
          if (!ready) break;
          member.last_start = start;
          ++member.next;
          moved = true;
          if (step.is_send() || step.is_receive()) {
            const auto peer = static_cast<std::size_t>(step.peer);
            if (peer >= n) return {0}; // not a member: nothing is known
            const auto key = step.is_send() ? std::make_pair(m, peer) : std::make_pair(peer, m);
            auto& queues = posted[key];
            queues[step.is_send() ? 0 : 1].push_back(Posted{m, i, start});
            if (!queues[0].empty() && !queues[1].empty()) {
              const Posted send = queues[0].front(), receive = queues[1].front();
              queues[0].erase(queues[0].begin());
              queues[1].erase(queues[1].begin());
              const Transfer t = transfer(group[send.member].rank, group[receive.member].rank,
                                          channel, group[send.member].steps[send.step].bytes, cost);
              const Picoseconds end =
                  std::max(send.start, receive.start) + t.latency + t.bytes_time();
              group[send.member].ends[send.step] = end;
              group[send.member].transfers[send.step] = t;
              group[receive.member].ends[receive.step] = end;
              group[receive.member].transfers[receive.step] = t;
            }
          } else if (step.kind == coll::StepKind::compute) {
            member.ends[i] = start + static_cast<Picoseconds>(step.param);
          } else if (step.is_switch()) {
            member.ends[i] = start;
          } else {
            member.ends[i] = start + engine_.per_step_overhead;
          }
        }
      }
    }
    std::vector<Picoseconds> joins;
    for (const Member& member : group) joins.push_back(join_of(member));
    return joins;
  }

  // The join of a walked member: no sooner than its last start, than the end of its last step
  // of each kind (those it waits for), and than its links' bytes allow (shared_links). A step
  // whose end the walk could not tell counts from its start.
  Picoseconds join_of(const Member& member) const {
    std::array<std::size_t, 4> last{}; // 1 + the last send, receive, switch and local step
    Picoseconds join = member.last_start;
    for (std::size_t i = 0; i < member.next; ++i) {
      const coll::Step& step = member.steps[i];
      last[step.is_send() ? 0 : step.is_receive() ? 1 : step.is_switch() ? 2 : 3] = i + 1;
    }
    for (const std::size_t l : last)
      if (l > 0 && member.ends[l - 1] != kUnknown) join = std::max(join, member.ends[l - 1]);
    return std::max(join, shared_links(member, last));
  }

  // The transfers the join waits for (those of its deps and, through deps, of theirs) move their
  // bytes after the launch plus the least of their latencies, and end by the join. On a link
  // their rates add up to its bandwidth at most (max-min sharing, or one at a time where the
  // dependency-order evaluation times them), so the join is no sooner than the least latency
  // plus the most bytes any one link carries of them, at its bandwidth.
  Picoseconds shared_links(const Member& member, const std::array<std::size_t, 4>& last) const {
    const std::vector<coll::Step>& steps = member.steps;
    const std::vector<Transfer>& transfers = member.transfers;
    std::vector<bool> awaited(steps.size(), false);
    for (const std::size_t l : last)
      if (l > 0) awaited[l - 1] = true;
    Picoseconds first_byte = std::numeric_limits<Picoseconds>::max();
    // Per link, the wire bytes of the awaited transfers and how many they are.
    std::map<topo::LinkId, std::pair<double, Picoseconds>> bytes;
    for (std::size_t i = steps.size(); i-- > 0;) {
      if (!awaited[i]) continue;
      for (std::uint8_t d = 0; d < steps[i].dep_count; ++d)
        if (steps[i].deps[d] < i) awaited[steps[i].deps[d]] = true;
      const Transfer& t = transfers[i];
      if (t.path == nullptr || t.path->empty() || t.wire == 0) continue;
      first_byte = std::min(first_byte, t.latency);
      for (const topo::LinkId link : *t.path) {
        bytes[link].first += static_cast<double>(t.wire);
        ++bytes[link].second;
      }
    }
    // Each transfer's finish may be rounded half a picosecond early: a picosecond per transfer
    // less.
    Picoseconds most = 0;
    for (const auto& [link, carried] : bytes)
      most =
          std::max(most, bytes_at(carried.first, topology_.link(link).bandwidth_bytes_per_second) -
                             carried.second);
    return most > 0 ? first_byte + most : 0;
  }

  // The least time `wire` bytes take at `rate` (kBytesTermShare).
  static Picoseconds bytes_at(double wire, double rate) {
    if (wire <= 0 || !(rate > 0) || !std::isfinite(rate)) return 0;
    return static_cast<Picoseconds>(std::floor(wire / rate * 1e12 * kBytesTermShare));
  }

  // A transfer of `bytes` from `src` to `dst`: its bytes start its latency after the later of
  // its send's and its receive's starts, and take their wire size at the bottleneck rate at
  // least.
  Transfer transfer(std::int32_t src, std::int32_t dst, std::uint16_t channel, std::uint64_t bytes,
                    const sim::ProtocolCost& cost) {
    Transfer t;
    t.path = &router_.ecmp_path(seed_, src, dst, channel);
    const Picoseconds latency = sim::path_latency(topology_, *t.path);
    t.latency = engine_.per_step_overhead + latency +
                cost.latency_beyond_path(sim::crosses_network(topology_, *t.path), latency);
    t.rate = std::numeric_limits<double>::infinity();
    for (const topo::LinkId link : *t.path)
      t.rate = std::min(t.rate, topology_.link(link).bandwidth_bytes_per_second);
    t.wire = t.path->empty() ? 0 : cost.wire_bytes(bytes);
    return t;
  }

  const models::LlmPlan& plan_;
  const sim::EngineSpec& engine_;
  const topo::Topology& topology_;
  topo::Router& router_;
  std::uint64_t seed_;
  std::map<std::pair<int, int>, Picoseconds> chains_;
};

// Every link carries the bytes of every transfer whose path holds it, at its bandwidth at most
// (the rates of the flows on it add up to its bandwidth at most, or they take it one at a time),
// between the iteration's start and its end. So the iteration lasts at least the most bytes one
// link carries in it at that link's bandwidth: here the sends of every lane of every collective
// the stages launch, on the paths the engine gives them (a picosecond less per transfer against
// the rounding of each finish, and kBytesTermShare).
Picoseconds busiest_link_bound(const models::LlmPlan& plan, const topo::Topology& topology,
                               topo::Router& router, std::uint64_t seed) {
  const models::LlmParallel& p = plan.spec.parallel;
  // Per (stage, collective), how many times each rank of the stage launches it.
  std::map<std::pair<int, int>, double> launches;
  for (std::size_t stage = 0; stage < plan.stages.size(); ++stage)
    for (const models::LlmOp& op : plan.stages[stage])
      if (op.collective >= 0 &&
          (op.kind == models::LlmOpKind::tp || op.kind == models::LlmOpKind::ep ||
           op.kind == models::LlmOpKind::dp || op.kind == models::LlmOpKind::tp_launch))
        ++launches[{static_cast<int>(stage), op.collective}];
  std::vector<double> bytes(topology.link_count(), 0.0);
  std::vector<double> transfers(topology.link_count(), 0.0);
  for (const auto& [key, times] : launches) {
    const auto [stage, index] = key;
    const models::LlmCollective& c = plan.collectives[static_cast<std::size_t>(index)];
    const coll::Algorithm* algorithm = coll::find_algorithm(c.call.op, c.call.algorithm);
    if (algorithm == nullptr) continue;
    const sim::ProtocolCost cost(plan.protocols.empty()
                                     ? coll::Protocol{}
                                     : plan.protocols[static_cast<std::size_t>(c.protocol)]);
    // The stage's groups of the collective, each once.
    std::vector<std::vector<int>> groups;
    std::vector<bool> placed(static_cast<std::size_t>(p.gpus()), false);
    for (int r = 0; r < p.gpus(); ++r) {
      if (placed[static_cast<std::size_t>(r)] || models::llm_coords(p, r).pp != stage) continue;
      groups.push_back(plan.group_members(c.group, r));
      for (const int m : groups.back()) placed[static_cast<std::size_t>(m)] = true;
    }
    const int lanes = std::min(c.lanes, algorithm->channels(c.call));
    for (int lane = 0; lane < lanes; ++lane) {
      const auto channel =
          static_cast<std::uint16_t>(models::llm_lane_channel(plan, c.group, lane));
      for (int local = 0; local < c.call.ranks; ++local) {
        coll::StepStream stream = algorithm->program(c.call, local, lane);
        for (coll::Step step; stream.next(step);) {
          if (!step.is_send()) continue;
          const double wire = static_cast<double>(cost.wire_bytes(step.bytes));
          if (wire <= 0) continue;
          for (const std::vector<int>& group : groups) {
            const std::int32_t self =
                plan.spec.gpus[static_cast<std::size_t>(group[static_cast<std::size_t>(local)])];
            const std::int32_t peer =
                plan.spec
                    .gpus[static_cast<std::size_t>(group[static_cast<std::size_t>(step.peer)])];
            for (const topo::LinkId link : router.ecmp_path(seed, self, peer, channel)) {
              bytes[link] += times * wire;
              transfers[link] += times;
            }
          }
        }
      }
    }
  }
  Picoseconds most = 0;
  for (std::size_t link = 0; link < bytes.size(); ++link) {
    const double rate = topology.link(static_cast<topo::LinkId>(link)).bandwidth_bytes_per_second;
    if (bytes[link] <= 0 || !(rate > 0) || !std::isfinite(rate)) continue;
    most = std::max(most, static_cast<Picoseconds>(std::floor(
                              bytes[link] / rate * 1e12 * kBytesTermShare - transfers[link])));
  }
  return most;
}

} // namespace

Picoseconds llm_iteration_lower_bound(const models::LlmPlan& plan, const sim::EngineSpec& engine,
                                      const topo::Topology& topology, topo::Router& router,
                                      std::uint64_t seed) {
  using models::LlmOpKind;
  const models::LlmParallel& layout = plan.spec.parallel;
  const bool analytic = sim::transfers_cost_at_least_alone(engine);
  CollectiveChains chains(plan, engine, topology, router, seed);
  const std::size_t stages = plan.stages.size();
  // The least end of collective `c`'s join on the first lane when launched after `ready`.
  auto done = [&](int c, Picoseconds ready, std::size_t stage) {
    if (!analytic) return ready;
    return ready + chains.launch(c) + chains.chain(c, static_cast<int>(stage));
  };
  // Send times in flight per (receiving stage, direction), in program order (a pair of stages
  // exchanges in order on the pipeline channel).
  std::vector<std::array<std::vector<Picoseconds>, 2>> sent(stages);
  std::vector<std::array<std::size_t, 2>> received(stages, {0, 0});
  std::vector<std::size_t> at(stages, 0);
  std::vector<Picoseconds> now(stages, 0);
  // Per stage: the least ends of its DP collectives (in launch order) and of its last TP overlap
  // launch.
  std::vector<std::vector<Picoseconds>> dp_done(stages);
  std::vector<Picoseconds> tp_done(stages, 0);
  for (bool moved = true; moved;) {
    moved = false;
    for (std::size_t stage = 0; stage < stages; ++stage) {
      const std::vector<models::LlmOp>& ops = plan.stages[stage];
      Picoseconds& t = now[stage];
      for (bool blocked = false; !blocked && at[stage] < ops.size();) {
        const models::LlmOp& op = ops[at[stage]];
        switch (op.kind) {
        case LlmOpKind::compute:
          t += op.duration;
          break;
        case LlmOpKind::tp:
        case LlmOpKind::ep:
          t = done(op.collective, t, stage);
          break;
        case LlmOpKind::tp_launch: // its waits are for receives: the launch bounds them
          tp_done[stage] = analytic ? t + chains.launch(op.collective) : t;
          break;
        case LlmOpKind::tp_wait:
          t = std::max(t, tp_done[stage]);
          break;
        case LlmOpKind::dp:
          // After the previous DP collective's join on the lane, too (its launch depends on it).
          dp_done[stage].push_back(
              done(op.collective, dp_done[stage].empty() ? t : std::max(t, dp_done[stage].back()),
                   stage));
          break;
        case LlmOpKind::dp_wait:
          if (static_cast<std::size_t>(op.collective) < dp_done[stage].size())
            t = std::max(t, dp_done[stage][static_cast<std::size_t>(op.collective)]);
          break;
        case LlmOpKind::optimizer: // its markers wait for the stage's last DP collective
          if (!dp_done[stage].empty()) t = std::max(t, dp_done[stage].back());
          break;
        case LlmOpKind::pp_send: {
          const std::size_t to = static_cast<std::size_t>(
              models::llm_pipeline_peer(layout, static_cast<int>(stage), op.forward_dir, true));
          sent[to][op.forward_dir ? 1 : 0].push_back(t);
          break;
        }
        case LlmOpKind::pp_recv: {
          const std::vector<Picoseconds>& from = sent[stage][op.forward_dir ? 1 : 0];
          std::size_t& next = received[stage][op.forward_dir ? 1 : 0];
          blocked = next >= from.size(); // not sent yet: another stage moves first
          if (!blocked) t = std::max(t, from[next++]);
          break;
        }
        }
        if (!blocked) {
          ++at[stage];
          moved = true;
        }
      }
    }
  }
  for (std::size_t stage = 0; stage < stages; ++stage)
    if (at[stage] < plan.stages[stage].size()) // a plan that deadlocks: no bound
      return 0;
  const Picoseconds paced = *std::max_element(now.begin(), now.end());
  return analytic ? std::max(paced, busiest_link_bound(plan, topology, router, seed)) : paced;
}

} // namespace ddlsim::runner
