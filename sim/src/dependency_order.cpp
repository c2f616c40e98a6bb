// Dependency-order evaluation: the analytic engine's fast path for schedules in which no link ever
// carries two transfers at once (see simulate_dependency_order in analytic_engine.hpp).
//
// Why it is exact. Without link sharing every transfer moves at its path's bottleneck bandwidth
// for its whole life, so every time the event-driven engine computes follows from dependencies
// alone, with the same arithmetic:
//  - a step starts at the later of the previous step's start and its deps' ends (rule 1 of
//    step.hpp);
//  - a transfer begins when both its send and its receive have started (rule 2); its bytes start
//    after per-step overhead + path latency and take llround(bytes / bottleneck * 1e12) ps; a
//    recv_reduce then reduces; the send and the receive both end then (rule 3);
//  - a local step ends overhead + bytes / rate after its start; a compute step its duration after.
// Those equations can be solved in any order that respects the dependencies. This one runs each
// program as far as it can go and parks it, in a FIFO worklist, until the end time it waits for
// is known: no event queue, no max-min solver, and programs visited in waves along the ring,
// which keeps memory access close to sequential at 16k ranks.
//
// Link sharing is checked as transfers are timed: each link keeps the end of the latest byte
// interval it carried. A transfer whose bytes would start before that end either shares the link
// or merely arrived out of time order; this check cannot tell the two apart, so both make the
// attempt give up and name the link's class. The next attempt times the transfers on that class
// event-driven (SharedLinkFlows), with sharing. Cross-program waits (training iterations) are
// followed like deps; an end is forgotten once its rank's floor, a lower bound on every later
// start of the rank's programs, has passed it (retire()). simulate_analytic runs the
// event-driven engine only when no attempt can succeed: a wait on an end forgotten before the
// first wait appeared, a schedule that cannot finish (the event-driven
// engine then names the stuck step), or a program of more than 2^31 steps.
#include "ddlsim/core/sim_time.hpp"
#include "ddlsim/sim/analytic_engine.hpp"

#include "ddlsim/sim/gpu_rates.hpp"
#include "ddlsim/sim/huge_page_allocator.hpp"
#include "ddlsim/sim/protocol_cost.hpp"
#include "dependency_order_state.hpp"
#include "rank_floor.hpp"
#include "round_half_away.hpp"
#include "shared_link_flows.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <optional>

namespace ddlsim::sim {
namespace {

using coll::StepKind;
using namespace detail::dependency_order;

constexpr int kStepsPerVisit = 16;
// Steps a program's window of ends holds once waits appear before unknown ends at its front move
// to ProgramRare::far: training programs wait on steps a few hundred back.
constexpr std::uint32_t kWindowStepsWithWaits = 4096;
// How often a program whose ends its rank's floor holds back asks for a new floor (see
// RankFloors::refresh): when its window holds more than this many ends and its next step index is a
// multiple of it, so that a floor held back by a slow program costs one look per 32 steps.
constexpr std::uint32_t kFloorRefreshSteps = 32;
// Started steps a program's window of ends holds before an older one that still matters moves to
// ProgramRare::far: a hierarchical leader's last chain receive ends only after thousands of
// ring steps, and a window reaching back to it spread each leader's ends over 32 KiB.
constexpr std::uint32_t kWindowSteps = 64;

Picoseconds duration(std::uint64_t bytes, double bytes_per_second) {
  return detail::round_half_away(static_cast<double>(bytes) / bytes_per_second * 1e12);
}

class DependencyOrderRun {
public:
  // Transfers on links of the classes in `shared_classes` (a bit per topo::LinkClass) are timed
  // event-driven, with sharing; all others must have their links to themselves.
  DependencyOrderRun(const topo::Topology& topology, topo::Router& router,
                     const coll::Schedule& schedule, const AnalyticOptions& options,
                     std::uint8_t shared_classes)
      : topology_(topology), router_(router), options_(options), shared_classes_(shared_classes),
        links_(topology.link_count()), floors_(static_cast<std::size_t>(schedule.ranks())),
        shared_(topology, static_cast<std::size_t>(schedule.ranks()) *
                              static_cast<std::size_t>(schedule.channels())) {
    const int ranks = schedule.ranks();
    rates_ =
        rank_rates(topology, ranks, options.reduce_bytes_per_second, options.copy_bytes_per_second);
    protocols_ = protocol_costs(schedule);
    numbering_.channels = static_cast<std::uint32_t>(schedule.channels());
    if (recording_) window_ = detail::kMaxProgramSteps; // records are indexed alike
    programs_.resize(static_cast<std::size_t>(ranks) * numbering_.channels);
    overflow_.resize(programs_.size());
    rare_.resize(programs_.size());
    for (int r = 0; r < ranks; ++r)
      for (std::uint32_t c = 0; c < numbering_.channels; ++c) {
        Program& program = programs_[program_of(r, static_cast<std::uint16_t>(c))];
        program.stream = schedule.program(r, static_cast<int>(c));
        program.recorded = recording_ && (options.record_steps || c >= 64 ||
                                          (options.on_step_channels >> c & 1) != 0);
      }
  }

  std::uint8_t classes_to_share() const { return classes_to_share_; }

  std::optional<CollectiveTiming> run() {
    for (std::uint32_t p = 0; p < programs_.size(); ++p) enqueue(p);
    auto done = [this](const detail::SharedTransfer& transfer, Picoseconds time) {
      end(transfer.recv_program, transfer.recv_index, time);
      end(transfer.send_program, transfer.send_index, time);
    };
    while (!gave_up_ && !stopped_) {
      while (!worklist_.empty() && !gave_up_ && !stopped_) {
        const std::uint32_t p = worklist_.front();
        worklist_.pop_front();
        prefetch_ahead();
        programs_[p].queued = false;
        advance(p);
      }
      // Every program waits for an end time from the shared links (or is finished): their next
      // instant is final, since nothing can start before it any more.
      if (gave_up_ || stopped_ || !shared_.advance(done)) break;
    }
    if (gave_up_) return std::nullopt;
    if (stopped_) {
      result_.complete = false;
    } else {
      for (std::uint32_t p = 0; p < programs_.size(); ++p)
        if (!finished(p)) return std::nullopt; // the event-driven engine names the step
    }
    result_.time = last_end_;
    result_.peak_flows_per_link =
        std::max(result_.peak_flows_per_link, shared_.peak_flows_per_link());
    result_.evaluated_in_dependency_order = true;
    return std::move(result_);
  }

private:
  std::uint32_t program_of(std::int32_t rank, std::uint16_t channel) const {
    return numbering_.program_of(rank, channel);
  }
  std::int32_t rank_of(std::uint32_t p) const { return numbering_.rank_of(p); }
  std::uint16_t channel_of(std::uint32_t p) const { return numbering_.channel_of(p); }

  // Prefetching: the worklist says which programs come next. At 16k ranks a program's state, its
  // window of end times and its next buffered step are cache misses; fetching them a few
  // programs ahead overlaps those misses. It changes nothing else. The empty volatile asm keeps
  // GCC from deleting a call to a function whose only effect is prefetching (ipa-pure-const; see
  // analytic_engine.cpp).
  static constexpr std::size_t kAheadState = 8, kAheadData = 4, kAheadLinks = 2;
  void prefetch_ahead() const {
    if (worklist_.size() > kAheadState) {
      const auto* state = reinterpret_cast<const char*>(&programs_[worklist_[kAheadState]]);
      for (std::size_t line = 0; line < sizeof(Program); line += 64)
        __builtin_prefetch(state + line, 1, 3);
    }
    if (worklist_.size() > kAheadData) {
      const Program& program = programs_[worklist_[kAheadData]];
      program.stream.prefetch();
      if (!program.ends.empty()) __builtin_prefetch(&program.ends[0], 1, 3);
      if (program.path != nullptr) __builtin_prefetch(program.path->data(), 0, 3);
    }
    // The links its next send will claim (rings send to the same peer over and over).
    if (worklist_.size() > kAheadLinks) {
      const Program& program = programs_[worklist_[kAheadLinks]];
      if (program.path != nullptr)
        for (const topo::LinkId link : *program.path) __builtin_prefetch(&links_[link], 1, 3);
    }
    asm volatile("");
  }

  void enqueue(std::uint32_t p) {
    Program& program = programs_[p];
    if (program.queued) return;
    program.queued = true;
    worklist_.push_back(p);
  }

  bool finished(std::uint32_t p) const {
    const Program& program = programs_[p];
    if (!program.exhausted || program.has_pending) return false;
    for (std::size_t i = 0; i < program.ends.size(); ++i)
      if (program.ends[i] == kUnknown) return false;
    if (program.has_far)
      for (const auto& entry : rare_[p].far)
        if (entry.second == kUnknown) return false;
    return true;
  }

  // Makes the next step of program p pending; false at the end of its stream or on giving up.
  bool pull(Program& program) {
    if (program.exhausted) return false;
    const coll::Step* step = program.stream.next();
    if (step == nullptr) {
      program.exhausted = true;
      return false;
    }
    if (program.next_index() >= detail::kMaxProgramSteps) {
      give_up(); // the event-driven engine names the program
      return false;
    }
    if (step->has_wait() && !waits_) [[unlikely]]
      first_wait();
    program.pending.assign(*step);
    program.pending_protocol = step->protocol;
    protocol_cost(protocols_, step->protocol); // throws for a protocol the schedule lacks
    program.pending_wait_step = step->wait_step;
    program.has_pending = true;
    ++result_.steps;
    return true;
  }

  // Starts program p's steps in order until one needs an end time that is not known yet.
  void advance(std::uint32_t p) {
    Program& program = programs_[p];
    for (int budget = kStepsPerVisit; !gave_up_; --budget) {
      if (budget == 0) {
        enqueue(p);
        return;
      }
      if (!program.has_pending && !pull(program)) return;
      const detail::PendingStep& next = program.pending;
      Picoseconds start = program.last_start;
      for (std::uint8_t d = 0; d < next.dep_count; ++d) {
        const std::uint32_t dep = next.deps[d];
        const Picoseconds end = end_of(p, dep);
        if (end == kUnknown) {
          program.blocked_on = dep;
          return;
        }
        start = std::max(start, end); // kRetired is below every time
      }
      if (next.has_wait() && !wait_end(p, next, start)) return;
      const std::uint32_t index = program.next_index();
      program.ends.push_back(kUnknown);
      program.last_start = start;
      program.has_pending = false;
      // begin() never pulls from this program, so `next` stays valid through it.
      if (program.recorded)
        rare_[p].started.push_back(detail::StartedStep{
            next.kind, next.peer, next.kind == StepKind::compute ? 0 : next.bytes, start});
      begin(next, p, index, start);
      retire(p);
    }
  }

  // Rule 1's cross-program wait of program p's next step: raises `start` to the awaited step's
  // end and returns true, or registers p to be visited again when the awaited program ends a
  // step and returns false. Gives up on what only the event-driven engine can tell: a channel
  // the schedule lacks (it names it) or an end forgotten before the wait was seen.
  bool wait_end(std::uint32_t p, const detail::PendingStep& next, Picoseconds& start) {
    if (next.wait_channel >= numbering_.channels) {
      give_up();
      return false;
    }
    const std::uint32_t q = program_of(rank_of(p), next.wait_channel);
    Program& awaited = programs_[q];
    const std::uint32_t wait_step = programs_[p].pending_wait_step;
    const Picoseconds end = end_of(q, wait_step);
    if (end == kRetired && q != p) {
      // Forgotten before waits appeared: only "at or before its last_start" is left of it.
      if (wait_step < rare_[q].floorless_base) {
        give_up();
        return false;
      }
      // Forgotten at or below the rank's floor, which is at or below this step's start: the
      // start is the floor if nothing else raised it past it (see rank_floor.hpp).
      start = std::max(start, floors_.of(rank_of(p)));
      return true;
    }
    if (end != kUnknown) {
      start = std::max(start, end);
      return true;
    }
    if (q == p) {
      programs_[p].blocked_on = wait_step; // a wait on itself is a dep
    } else {
      rare_[q].waiters.push_back(p);
      awaited.has_waiters = true;
    }
    return false;
  }

  void begin(const detail::PendingStep& step, std::uint32_t p, std::uint32_t index,
             Picoseconds start) {
    const std::int32_t rank = rank_of(p);
    const std::uint16_t channel = channel_of(p);
    if (step.kind == StepKind::switch_reduce || step.kind == StepKind::switch_multicast) {
      // A switch step's time depends on when its whole group posted, across programs: the
      // event-driven evaluation times it (no attempt here can).
      give_up();
      return;
    }
    // A send and its receive belong to one call (rule 2 of step.hpp): either names its protocol.
    const ProtocolCost& cost = protocols_[programs_[p].pending_protocol];
    if (step.kind == StepKind::send) {
      const std::uint32_t q = program_of(step.peer, channel);
      Posted receive;
      if (programs_[q].receives.take(rank, receive, overflow_[q].receives))
        transfer(p, index, start, step.bytes, q, receive, cost);
      else
        programs_[q].sends_in.put(Posted{step.bytes, start, rank, index, 0}, overflow_[q].sends_in);
    } else if (step.kind == StepKind::recv || step.kind == StepKind::recv_reduce) {
      const Posted receive{step.bytes, start, step.peer, index,
                           step.kind == StepKind::recv_reduce ? 1u : 0u};
      Posted send;
      if (programs_[p].sends_in.take(step.peer, send, overflow_[p].sends_in))
        transfer(program_of(send.peer, channel), send.index, send.start, send.bytes, p, receive,
                 cost);
      else
        programs_[p].receives.put(receive, overflow_[p].receives);
    } else if (step.kind == StepKind::compute) {
      // With compute_slowdown, a compute step of the compute channel on a GPU with an SM figure
      // ends when the communication beside it on its rank lets it, which only the event-driven
      // evaluation follows in time order; collectives alone (no compute steps) stay here.
      if (options_.compute_slowdown && channel == options_.compute_channel &&
          rates_[static_cast<std::size_t>(rank)].sms > 0) {
        give_up();
        return;
      }
      end(p, index, start + static_cast<Picoseconds>(step.bytes));
    } else {
      const double rate = local_step_rate(rates_[static_cast<std::size_t>(rank)], step.kind);
      end(p, index, start + options_.per_step_overhead + duration(step.bytes, rate));
    }
  }

  // The ECMP path of (sender, receiver, channel), chosen as the event-driven engine chooses it.
  void choose_path(std::uint32_t p, Program& sender, std::int32_t receiver) {
    sender.path_peer = receiver;
    sender.path = &router_.ecmp_path(options_.seed, rank_of(p), receiver, channel_of(p));
    sender.path_latency = 0;
    sender.path_rate = std::numeric_limits<double>::infinity();
    sender.path_classes = 0;
    for (const topo::LinkId link : *sender.path) {
      sender.path_latency += topology_.link(link).latency;
      sender.path_rate =
          std::min(sender.path_rate, topology_.link(link).bandwidth_bytes_per_second);
      sender.path_classes |= class_bit(link);
    }
  }

  // Times the transfer of send (program s, step s_index) to `receive` of program r.
  void transfer(std::uint32_t s, std::uint32_t s_index, Picoseconds send_start,
                std::uint64_t send_bytes, std::uint32_t r, const Posted& receive,
                const ProtocolCost& cost) {
    Program& sender = programs_[s];
    const std::int32_t receiver = rank_of(r);
    if (sender.path_peer != receiver) choose_path(s, sender, receiver);
    const bool crosses_network =
        (sender.path_classes & (1u << static_cast<unsigned>(topo::LinkClass::nic))) != 0;
    const Picoseconds bytes_start = std::max(send_start, receive.start) +
                                    options_.per_step_overhead + sender.path_latency +
                                    cost.latency_beyond_path(crosses_network, sender.path_latency);
    const std::uint64_t wire_bytes = cost.wire_bytes(send_bytes);
    Picoseconds arrived = bytes_start;
    const bool placed = wire_bytes > 0 && !sender.path->empty();
    if (placed && (sender.path_classes & shared_classes_) != 0) {
      share(sender, s, s_index, send_bytes, r, receive, bytes_start, cost);
      return;
    }
    // As FlowNetwork: a flow with bytes and links moves at its bottleneck; others end at once.
    if (placed) {
      const double rate = sender.path_rate;
      const double seconds = rate > 0 ? static_cast<double>(wire_bytes) / rate : 0.0;
      arrived = bytes_start + detail::round_half_away(seconds * 1e12);
      if (!claim_links(*sender.path, bytes_start, arrived)) return;
      result_.peak_flows_per_link = 1;
    }
    Picoseconds done = arrived;
    if (receive.reduce != 0)
      done = cost.receive_end(
          arrived, bytes_start,
          duration(receive.bytes,
                   rates_[static_cast<std::size_t>(receiver)].reduce_bytes_per_second));
    ++result_.transfers;
    result_.bytes_sent += send_bytes;
    end(r, receive.index, done);
    end(s, s_index, done);
  }

  // Records the byte interval [from, to] on every link of `path`; false (and gives up) if a link
  // may carry another transfer at the same time. Touching is fine when the earlier interval has
  // length: the event-driven engine removes a finished flow before it starts the flows of that
  // instant. A zero-length one is still on the link then.
  bool claim_links(const topo::Path& path, Picoseconds from, Picoseconds to) {
    for (const topo::LinkId link : path) {
      const LinkUse& use = links_[link];
      if (from < use.until || (from == use.until && use.zero_length_at_until)) {
        give_up(class_bit(link));
        return false;
      }
    }
    for (const topo::LinkId link : path) {
      LinkUse& use = links_[link];
      use.zero_length_at_until = from == to;
      use.until = to;
    }
    return true;
  }

  // Hands a transfer on shared links to the event-driven part. Its path must lie wholly on
  // shared links: a link outside them is claimed by transfers that assume they are alone.
  void share(const Program& sender, std::uint32_t s, std::uint32_t s_index,
             std::uint64_t send_bytes, std::uint32_t r, const Posted& receive,
             Picoseconds bytes_start, const ProtocolCost& cost) {
    if ((sender.path_classes & ~shared_classes_) != 0 || bytes_start < shared_.now()) {
      give_up(sender.path_classes);
      return;
    }
    const Picoseconds reduce_time =
        receive.reduce != 0
            ? duration(receive.bytes,
                       rates_[static_cast<std::size_t>(rank_of(r))].reduce_bytes_per_second)
            : 0;
    detail::SharedTransfer shared;
    shared.path = sender.path;
    shared.bytes = cost.wire_bytes(send_bytes);
    shared.reduce = receive.reduce != 0;
    shared.reduce_in_flight = cost.reduce_in_flight;
    shared.reduce_time = reduce_time;
    shared.send_program = s;
    shared.send_index = s_index;
    shared.recv_program = r;
    shared.recv_index = receive.index;
    shared_.add(shared, bytes_start);
    ++result_.transfers;
    result_.bytes_sent += send_bytes;
  }

  std::uint8_t class_bit(topo::LinkId link) const {
    return static_cast<std::uint8_t>(1u << static_cast<unsigned>(topology_.link(link).link_class));
  }
  // Gives up; classes_to_share() says which link classes a new attempt should time with sharing
  // (none when no attempt can succeed).
  void give_up(std::uint8_t classes = 0) {
    gave_up_ = true;
    classes_to_share_ |= classes;
  }

  // Step `index` of program p ends at `time`. Runs twice per transfer: the rare cases (an end
  // outside the window, recording, progress, waiters) are out of line, which keeps this inlined
  // into transfer(); out of line it cost a ring at 8k ranks 10%.
  [[gnu::always_inline]] void end(std::uint32_t p, std::uint32_t index, Picoseconds time) {
    Program& program = programs_[p];
    if (index >= program.base) [[likely]]
      program.ends[index - program.base] = time;
    else
      end_far(p, index, time);
    last_end_ = std::max(last_end_, checked_time(time)); // never a wrapped clock (sim_time.hpp)
    if (program.recorded) [[unlikely]]
      record(p, index, time);
    if (++steps_done_ % kProgressInterval == 0) [[unlikely]]
      report_progress();
    if (program.blocked_on == index) {
      program.blocked_on = kNotBlocked;
      enqueue(p);
    }
    if (program.has_waiters) [[unlikely]]
      wake_waiters(p);
    if (index <= program.base) retire(p);
  }

  [[gnu::noinline]] void end_far(std::uint32_t p, std::uint32_t index, Picoseconds time) {
    ProgramRare& rare = rare_[p];
    for (auto& [far_index, far_end] : rare.far)
      if (far_index == index) far_end = time;
    rare.far_least_end = std::min(rare.far_least_end, time);
  }
  [[gnu::noinline]] void record(std::uint32_t p, std::uint32_t index, Picoseconds time) {
    const detail::StartedStep& step = rare_[p].started[index - programs_[p].base];
    const StepRecord record{rank_of(p), channel_of(p), step.kind, step.peer,
                            step.bytes, step.start,    time};
    if (options_.on_step) options_.on_step(record);
    if (options_.record_steps) result_.steps_recorded.push_back(record);
  }
  [[gnu::noinline]] void report_progress() {
    if (options_.progress && !options_.progress(last_end_, steps_done_)) stopped_ = true;
  }
  [[gnu::noinline]] void wake_waiters(std::uint32_t p) {
    programs_[p].has_waiters = false;
    for (const std::uint32_t waiter : rare_[p].waiters) enqueue(waiter);
    rare_[p].waiters.clear();
  }

  // The end of started step `index` of program p (dependency_order_state.hpp).
  Picoseconds end_of(std::uint32_t p, std::uint32_t index) const {
    return detail::dependency_order::end_of(programs_[p], rare_[p], index);
  }

  // Forgets the ends no later step can wait for, and moves older ones that still matter out of
  // the window. Without cross-program waits an end matters until its program's last_start
  // passes it (every later step of the program starts at or after last_start); once waits
  // appear, also until the rank's floor passes it (rank_floor.hpp). Recording keeps every
  // started step of a recorded program in the window (its records are indexed alike).
  // Inline, it runs after every step: the common work (forgetting ended steps at the front) is
  // here, moving ends out of the window and dropping moved ones out of line.
  [[gnu::always_inline]] void retire(std::uint32_t p) {
    Program& program = programs_[p];
    forget_front(p);
    if (program.ends.size() > window_ || program.has_far) [[unlikely]]
      retire_slowly(p);
    else if (waits_ && program.ends.size() >= kFloorRefreshSteps &&
             program.next_index() % kFloorRefreshSteps == 0) [[unlikely]]
      retire_below_new_floor(p);
  }
  [[gnu::always_inline]] void forget_front(std::uint32_t p) {
    Program& program = programs_[p];
    const Picoseconds limit = forget_limit(p);
    while (!program.ends.empty()) {
      const Picoseconds front = program.ends.front();
      if (front == kUnknown || front > limit) break;
      if (program.recorded) [[unlikely]]
        rare_[p].started.pop_front();
      program.ends.pop_front();
      ++program.base;
    }
  }
  [[gnu::noinline]] void retire_slowly(std::uint32_t p) {
    Program& program = programs_[p];
    const Picoseconds limit = forget_limit(p);
    while (!program.ends.empty()) {
      const Picoseconds front = program.ends.front();
      const bool ended = front != kUnknown && front <= limit;
      if (ended) {
        if (program.recorded) rare_[p].started.pop_front();
      } else if (program.ends.size() > window_) {
        ProgramRare& rare = rare_[p];
        rare.far.emplace_back(program.base, front);
        if (front != kUnknown) rare.far_least_end = std::min(rare.far_least_end, front);
        program.has_far = true;
      } else {
        break;
      }
      program.ends.pop_front();
      ++program.base;
    }
    if (program.has_far && rare_[p].far_least_end <= limit) prune_far(p);
  }
  // The front of p's window is ended but above the rank's floor: a new floor may let it go.
  [[gnu::noinline]] void retire_below_new_floor(std::uint32_t p) {
    const Picoseconds front = programs_[p].ends.front();
    if (front == kUnknown || front > programs_[p].last_start) return; // not the floor's doing
    refresh_floor(rank_of(p));
    forget_front(p);
  }

  // The latest end program p may forget: one at or before it no later step needs.
  Picoseconds forget_limit(std::uint32_t p) const {
    return waits_ ? floors_.forget_limit(programs_[p], rank_of(p)) : programs_[p].last_start;
  }

  void refresh_floor(std::int32_t rank) {
    floors_.refresh(rank, std::span<const Program>(programs_.data(), programs_.size()), rare_,
                    numbering_);
  }

  // The first cross-program wait: ends forgotten so far were forgotten without the floor, so a
  // wait on one of them cannot be timed (wait_end gives up).
  void first_wait() {
    waits_ = true;
    window_ = std::max(window_, kWindowStepsWithWaits);
    for (std::uint32_t p = 0; p < programs_.size(); ++p)
      rare_[p].floorless_base = programs_[p].base;
  }

  void prune_far(std::uint32_t p) {
    Program& program = programs_[p];
    ProgramRare& rare = rare_[p];
    const Picoseconds limit = forget_limit(p);
    std::erase_if(rare.far, [limit](const std::pair<std::uint32_t, Picoseconds>& entry) {
      return entry.second != kUnknown && entry.second <= limit;
    });
    rare.far_least_end = std::numeric_limits<Picoseconds>::max();
    for (const auto& entry : rare.far)
      if (entry.second != kUnknown) rare.far_least_end = std::min(rare.far_least_end, entry.second);
    program.has_far = !rare.far.empty();
  }

  const topo::Topology& topology_;
  topo::Router& router_;
  const AnalyticOptions& options_;
  // Steps are recorded for CollectiveTiming::steps_recorded, AnalyticOptions::on_step or both.
  const bool recording_ = options_.record_steps || options_.on_step != nullptr;
  std::uint8_t shared_classes_ = 0;
  std::uint8_t classes_to_share_ = 0;
  std::vector<LinkUse, HugePageAllocator<LinkUse>> links_;
  RankFloors floors_; // see retire()
  detail::SharedLinkFlows shared_;
  std::vector<GpuRates> rates_;
  std::vector<ProtocolCost> protocols_;                       // indexed by Step::protocol
  std::vector<Program, HugePageAllocator<Program>> programs_; // hot: what every visit touches
  std::vector<ProgramOverflow> overflow_;                     // cold: indexed like programs_
  std::vector<ProgramRare> rare_;                             // colder: indexed like programs_
  RingWindow<std::uint32_t> worklist_;
  detail::ProgramNumbering numbering_;
  Picoseconds last_end_ = 0;
  std::uint64_t steps_done_ = 0;
  bool gave_up_ = false;
  bool waits_ = false; // a step with a cross-program wait was pulled (see retire())
  // Started steps a window holds before older ones that still matter move out (see retire()).
  std::uint32_t window_ = kWindowSteps;
  bool stopped_ = false;
  CollectiveTiming result_;
};

} // namespace

std::optional<CollectiveTiming> simulate_dependency_order(const topo::Topology& topology,
                                                          topo::Router& router,
                                                          const coll::Schedule& schedule,
                                                          const AnalyticOptions& options) {
  // First every transfer is assumed alone on its links; each attempt that finds sharing on a
  // class of links times that class event-driven in the next, until one succeeds or no new
  // class is named (cross-program waits, a schedule that cannot finish).
  // A network post (ProxyPosts) waits for its rank's proxy, which posts the steps of all the
  // rank's channels in the order they become ready in time: an order this evaluation, which
  // times each program's steps in dependency order, does not follow.
  if (has_net_post(protocol_costs(schedule))) return std::nullopt;
  std::uint8_t shared_classes = 0;
  while (true) {
    DependencyOrderRun attempt(topology, router, schedule, options, shared_classes);
    if (std::optional<CollectiveTiming> timing = attempt.run()) return timing;
    const std::uint8_t more = attempt.classes_to_share();
    if ((shared_classes | more) == shared_classes) return std::nullopt;
    shared_classes |= more;
    if (options.on_restart) options.on_restart(); // the attempt may have handed steps over
  }
}

} // namespace ddlsim::sim
