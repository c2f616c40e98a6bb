#include "ddlsim/sim/analytic_engine.hpp"

#include "analytic_switch_groups.hpp"
#include "analytic_transfer.hpp"
#include "connection_fifo.hpp"
#include "ddlsim/core/sim_time.hpp"
#include "ddlsim/sim/compute_slowdown_tracker.hpp"
#include "ddlsim/sim/event_queue.hpp"
#include "ddlsim/sim/flow_network.hpp"
#include "ddlsim/sim/gpu_rates.hpp"
#include "ddlsim/sim/huge_page_allocator.hpp"
#include "ddlsim/sim/protocol_cost.hpp"
#include "peer_fifo.hpp"
#include "program_state.hpp"

#include <array>
#include <limits>
#include <optional>
#include <stdexcept>

namespace ddlsim::sim {
namespace {

using coll::Step;
using coll::StepKind;

using detail::PendingStep;
using detail::ProgramOverflow;
using detail::ProgramState;
using detail::StartedStep;
using detail::Waiting;
using StepRef = detail::AnalyticStepRef;
using Transfer = detail::AnalyticTransfer;
using Event = detail::AnalyticEvent;
using EventKind = detail::AnalyticEventKind;

Picoseconds duration(std::uint64_t bytes, double bytes_per_second) {
  return checked_transfer_ps(static_cast<double>(bytes), bytes_per_second);
}

class AnalyticRun {
public:
  AnalyticRun(const topo::Topology& topology, topo::Router& router, const coll::Schedule& schedule,
              const AnalyticOptions& options)
      : topology_(topology), router_(router), options_(options), flows_(topology),
        connections_(static_cast<std::size_t>(schedule.ranks()) *
                     static_cast<std::size_t>(schedule.channels())),
        proxies_(static_cast<std::size_t>(schedule.ranks())) {
    const int ranks = schedule.ranks();
    rates_ =
        rank_rates(topology, ranks, options.reduce_bytes_per_second, options.copy_bytes_per_second);
    protocols_ = protocol_costs(schedule);
    const int channels = schedule.channels();
    numbering_.channels = static_cast<std::uint32_t>(channels);
    const std::size_t programs = static_cast<std::size_t>(ranks) * numbering_.channels;
    programs_.resize(programs);
    overflow_.resize(programs);
    for (int r = 0; r < ranks; ++r)
      for (int c = 0; c < channels; ++c)
        programs_[program_of(r, static_cast<std::uint16_t>(c))].stream = schedule.program(r, c);
    if (options.compute_slowdown) slowdown_.emplace(programs, rates_, schedule.protocols());
  }

  CollectiveTiming run() {
    for (std::uint32_t p = 0; p < programs_.size(); ++p) start_ready(p);
    constexpr Picoseconds kNever = std::numeric_limits<Picoseconds>::max();
    std::vector<std::uint64_t> finished;
    while (true) {
      if (slowdown_) apply_slowdowns();
      flows_.update_rates(now_);
      fill_window();
      const Picoseconds next_event = events_.empty() ? kNever : events_.next_time();
      const Picoseconds next = std::min(next_event, flows_.next_completion());
      if (next == kNever || stopped_) break;
      now_ = next;
      finished.clear();
      flows_.collect_finished(now_, finished);
      pipelined(
          finished.size(), [&](std::size_t i, int level) { prefetch_arrival(finished[i], level); },
          [&](std::size_t i) { on_arrival(static_cast<std::uint32_t>(finished[i])); });
      while (next_event_at(now_)) {
        const Event event = events_.pop();
        advance_prefetch();
        handle(event);
      }
    }
    if (stopped_) {
      result_.complete = false;
    } else {
      check_finished();
    }
    result_.time = last_completion_;
    result_.peak_flows_per_link = flows_.peak_flows_per_link();
    return std::move(result_);
  }

private:
  // Prefetching: at 16k ranks most of the time goes to cache misses on the programs and
  // transfers an instant's events touch, one after another. Prefetching them a fixed distance
  // ahead of the event being handled overlaps those misses; it changes nothing else.
  //
  // The empty volatile asm is needed: GCC 12 takes a function whose only effect is
  // __builtin_prefetch for one without side effects (ipa-pure-const) and deletes the calls to
  // it, so the prefetches of a helper that is not inlined early silently vanish.
  static void prefetch(const void* address) {
    __builtin_prefetch(address, 1, 3);
    asm volatile("");
  }
  void prefetch_program(std::uint32_t p) {
    const auto* state = reinterpret_cast<const char*>(&programs_[p]);
    prefetch(state);
    prefetch(state + 64); // ProgramState is two cache lines
  }
  // The flow network's completions of an instant (shared flows) are prefetched as a batch:
  // three levels, each for the item a fixed distance ahead of the one being handled, so that
  // a few dozen misses are in flight at once and what arrives is still in cache when used.
  static constexpr std::size_t kAhead1 = 24, kAhead2 = 16, kAhead3 = 8;
  // A completed step starts the next ones of its program, which pulls from its stream: the
  // program's state first, then (once that is in cache) the coroutine frame it points to.
  void prefetch_completion(std::uint32_t p, int level) {
    if (level == 2)
      prefetch_program(p);
    else if (level == 3)
      programs_[p].stream.prefetch();
  }
  void prefetch_arrival(std::uint64_t id, int level) {
    const Transfer& transfer = transfers_[id];
    if (level == 1) {
      prefetch(&transfer);
    } else if (!transfer.recv_reduce) {
      prefetch_completion(transfer.recv.program, level);
      prefetch_completion(transfer.send.program, level);
    }
  }
  // Events are prefetched through the look-ahead window (LookaheadQueue): an event's memory is
  // fetched in four dependent levels, each when the event reaches a fixed distance from the
  // front, so that what a level reads has arrived by the time the next one needs it. An
  // instant at 16k ranks has only a few events, so looking ahead across instants is what hides
  // the misses of the next events while this one is handled.
  static constexpr std::size_t kWindow = 16;
  static constexpr std::array<std::size_t, 4> kLevelAt{kWindow - 1, 10, 6, 2};
  void prefetch_event(const Event& event, int level) {
    switch (event.kind) {
    case EventKind::slowed_done:
      return;
    case EventKind::compute_done:
    case EventKind::local_done:
      if (level == 1)
        prefetch_program(event.a);
      else if (level == 2)
        programs_[event.a].stream.prefetch();
      else if (level == 3)
        prefetch_receiver(event.a);
      return;
    case EventKind::latency_done: {
      const Transfer& transfer = transfers_[event.a];
      if (level == 1)
        prefetch(&transfer);
      else if (level == 2)
        prefetch(transfer.path);
      else if (level == 3)
        prefetch(transfer.path->data());
      else
        flows_.prefetch_path(*transfer.path);
      return;
    }
    case EventKind::reduce_done:
    case EventKind::lone_done:
    case EventKind::lone_through: {
      const Transfer& transfer = transfers_[event.a];
      if (level == 1) {
        prefetch(&transfer);
      } else if (level == 2) {
        prefetch_program(transfer.recv.program);
        prefetch_program(transfer.send.program);
      } else if (level == 3) {
        programs_[transfer.recv.program].stream.prefetch();
        programs_[transfer.send.program].stream.prefetch();
      } else {
        prefetch_receiver(transfer.recv.program);
        prefetch_receiver(transfer.send.program);
      }
      return;
    }
    }
  }
  // A completion in program p usually starts its pending step; if that is a send, its
  // receiver's state (the waiting receives, on its first line) is read next.
  void prefetch_receiver(std::uint32_t p) {
    const ProgramState& program = programs_[p];
    if (program.has_pending && program.pending.kind == StepKind::send)
      prefetch(&programs_[program_of(program.pending.peer, channel_of(p))]);
  }
  // Tops the window up, starting the prefetch of the events that entered it.
  void fill_window() {
    const std::size_t added = events_.fill();
    const std::size_t size = events_.window_size();
    for (std::size_t i = size - added; i < size; ++i) entered_window(i);
  }
  // Event `index` of the window has just entered it: every level due at its distance or later.
  void entered_window(std::size_t index) {
    const Event& event = events_.at(index).payload;
    for (std::size_t level = 0; level < kLevelAt.size(); ++level)
      if (level == 0 || index <= kLevelAt[level])
        prefetch_event(event, static_cast<int>(level + 1));
  }
  // The window moved up by one: the events now at each level's distance get that level.
  void advance_prefetch() {
    fill_window();
    const std::size_t size = events_.window_size();
    for (std::size_t level = 1; level < kLevelAt.size(); ++level)
      if (kLevelAt[level] < size)
        prefetch_event(events_.at(kLevelAt[level]).payload, static_cast<int>(level + 1));
  }
  // Whether the next event is at `time` (the window is topped up first).
  bool next_event_at(Picoseconds time) {
    fill_window();
    return !events_.empty() && events_.next_time() == time;
  }
  void schedule(Picoseconds time, const Event& event) {
    const std::size_t index = events_.push(time, event);
    if (index < events_.window_size()) entered_window(index);
  }

  // Calls handle(i) for i in [0, n) in order while prefetching ahead with prefetch_at(i, level).
  template <typename Prefetch, typename Handle>
  static void pipelined(std::size_t n, Prefetch&& prefetch_at, Handle&& handle) {
    if (n > 1) {
      for (std::size_t i = 0; i < std::min(n, kAhead1); ++i) prefetch_at(i, 1);
      for (std::size_t i = 0; i < std::min(n, kAhead2); ++i) prefetch_at(i, 2);
      for (std::size_t i = 0; i < std::min(n, kAhead3); ++i) prefetch_at(i, 3);
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (i + kAhead1 < n) prefetch_at(i + kAhead1, 1);
      if (i + kAhead2 < n) prefetch_at(i + kAhead2, 2);
      if (i + kAhead3 < n) prefetch_at(i + kAhead3, 3);
      handle(i);
    }
  }

  std::uint32_t program_of(std::int32_t rank, std::uint16_t channel) const {
    return numbering_.program_of(rank, channel);
  }
  std::int32_t rank_of(std::uint32_t p) const { return numbering_.rank_of(p); }
  std::uint16_t channel_of(std::uint32_t p) const { return numbering_.channel_of(p); }

  // Makes the next step of program p its pending step; false at the end of its stream.
  bool pull(std::uint32_t p, ProgramState& program) {
    if (program.exhausted) return false;
    const Step* step = program.stream.next();
    if (step == nullptr) {
      program.exhausted = true;
      return false;
    }
    if (program.next_start == detail::kMaxProgramSteps)
      throw std::logic_error("rank " + std::to_string(rank_of(p)) + " channel " +
                             std::to_string(channel_of(p)) + " has more than 2^31 steps");
    program.pending.assign(*step);
    program.pending_protocol = step->protocol;
    protocol_cost(protocols_, step->protocol); // throws for a protocol the schedule lacks
    if (step->has_wait()) overflow_[p].pending_wait_step = step->wait_step;
    if (step->is_switch()) overflow_[p].pending_group = static_cast<std::int32_t>(step->param);
    if (slowdown_ && step->kind == StepKind::compute)
      overflow_[p].pending_memory_bound_share = static_cast<float>(step->memory_bound_share);
    program.has_pending = true;
    ++result_.steps;
    return true;
  }

  // Starts steps of program p in order while their dependencies are done (rule 1 of step.hpp).
  void start_ready(std::uint32_t p) {
    ProgramState& program = programs_[p];
    while (true) {
      if (!program.has_pending && !pull(p, program)) return;
      const PendingStep& next = program.pending;
      for (std::uint8_t d = 0; d < next.dep_count; ++d)
        if (!program.is_done(next.deps[d], overflow_[p])) return;
      if (next.has_wait() && !wait_done(p)) return;
      const std::uint32_t index = program.next_start++;
      program.has_pending = false;
      if (recording_)
        overflow_[p].started.push_back(StartedStep{
            next.kind, next.peer, next.kind == StepKind::compute ? 0 : next.bytes, now_});
      // begin() never pulls from this program, so `next` stays valid through it.
      begin(next, p, index);
    }
  }

  // Whether the cross-program wait of program p's pending step is satisfied; if not, p is
  // registered to retry when the awaited program completes a step.
  bool wait_done(std::uint32_t p) {
    const std::int32_t rank = rank_of(p);
    const std::uint16_t wait_channel = programs_[p].pending.wait_channel;
    if (wait_channel >= numbering_.channels)
      throw std::logic_error("rank " + std::to_string(rank) + " channel " +
                             std::to_string(channel_of(p)) + " waits for channel " +
                             std::to_string(wait_channel) + " of a schedule with " +
                             std::to_string(numbering_.channels) + " channels");
    const std::uint32_t q = program_of(rank, wait_channel);
    ProgramState& awaited = programs_[q];
    if (awaited.is_done(overflow_[p].pending_wait_step, overflow_[q])) return true;
    ProgramState& program = programs_[p];
    if (!program.waits_on_other) {
      program.waits_on_other = true;
      overflow_[q].waiters.push_back(p);
      awaited.has_waiters = true;
    }
    return false;
  }

  void begin(const PendingStep& step, std::uint32_t p, std::uint32_t index) {
    const std::int32_t rank = rank_of(p);
    // A send and its receive belong to one call (rule 2 of step.hpp): either names its protocol.
    const std::uint8_t protocol = programs_[p].pending_protocol;
    if (slowdown_ && step.kind != StepKind::compute && channel_of(p) != options_.compute_channel)
      slowdown_->comm_started(p, rank, protocol);
    if (step.kind == StepKind::send) {
      const std::uint32_t q = program_of(step.peer, channel_of(p));
      ProgramState& receiver = programs_[q];
      Waiting receive;
      if (detail::take_posted(receiver.receives_count, receiver.receives_first,
                              overflow_[q].receives_rest, rank, receive))
        start_transfer(StepRef{p, index}, step.bytes, StepRef{q, receive.index}, receive.bytes,
                       receive.reduce != 0, protocol);
      else
        detail::put_posted(receiver.sends_in_count, receiver.sends_in_first,
                           overflow_[q].sends_in_rest, Waiting{step.bytes, rank, index, 0});
    } else if (step.kind == StepKind::recv || step.kind == StepKind::recv_reduce) {
      ProgramState& self = programs_[p];
      const bool reduce = step.kind == StepKind::recv_reduce;
      Waiting send;
      if (detail::take_posted(self.sends_in_count, self.sends_in_first, overflow_[p].sends_in_rest,
                              step.peer, send))
        start_transfer(StepRef{program_of(send.peer, channel_of(p)), send.index}, send.bytes,
                       StepRef{p, index}, step.bytes, reduce, protocol);
      else
        detail::put_posted(self.receives_count, self.receives_first, overflow_[p].receives_rest,
                           Waiting{step.bytes, step.peer, index, reduce ? 1u : 0u});
    } else if (step.kind == StepKind::switch_reduce || step.kind == StepKind::switch_multicast) {
      begin_switch(step, p, index);
    } else if (step.kind == StepKind::compute) {
      // A modelled duration: no per-step overhead on top (the workload model includes it).
      if (!slowdown_)
        schedule(now_ + static_cast<Picoseconds>(step.bytes),
                 Event{EventKind::local_done, p, index});
      else
        begin_compute(p, index, static_cast<Picoseconds>(step.bytes),
                      overflow_[p].pending_memory_bound_share);
      return; // not communication
    } else {
      const double rate = local_step_rate(rates_[static_cast<std::size_t>(rank)], step.kind);
      schedule(now_ + options_.per_step_overhead + duration(step.bytes, rate),
               Event{EventKind::local_done, p, index});
    }
  }

  // The ECMP path of (sender, receiver, channel): a seeded hash picks one of the equal-cost paths.
  void choose_path(std::uint32_t p, ProgramState& sender, std::int32_t receiver) {
    sender.path_peer = receiver;
    sender.path = &router_.ecmp_path(options_.seed, rank_of(p), receiver, channel_of(p));
    sender.path_latency = 0;
    for (topo::LinkId link : *sender.path) sender.path_latency += topology_.link(link).latency;
    sender.path_crosses_network = crosses_network(topology_, *sender.path);
  }

  // Transfer ids are recycled: memory follows the transfers in flight, not the total.
  std::uint32_t new_transfer() {
    if (free_transfers_.empty()) {
      transfers_.emplace_back();
      return static_cast<std::uint32_t>(transfers_.size() - 1);
    }
    const std::uint32_t id = free_transfers_.back();
    free_transfers_.pop_back();
    return id;
  }

  // Rule 4 of step.hpp: a switch step waits for the rest of its group (AnalyticSwitchGroups);
  // the complete group is one transfer over its route, owned by the group's owner.
  void begin_switch(const PendingStep& pending, std::uint32_t p, std::uint32_t index) {
    coll::Step step;
    step.kind = pending.kind;
    step.peer = pending.peer;
    step.channel = channel_of(p);
    step.bytes = pending.bytes;
    step.param = overflow_[p].pending_group;
    const auto group = switch_groups_.post(rank_of(p), step, StepRef{p, index}, index);
    if (!group) return;
    const std::uint8_t protocol = programs_[p].pending_protocol;
    const std::uint32_t id = new_transfer();
    Transfer& transfer = transfers_[id];
    transfer.send = group->owner;
    transfer.recv = group->owner;
    // Multimem traffic puts the protocol's switch wire bytes on the links (NVLS's efficiency).
    transfer.bytes = protocols_[protocol].switch_wire_bytes(group->bytes);
    transfer.path = &group->route->links;
    transfer.recv_bytes = group->bytes;
    transfer.recv_rank = static_cast<std::int32_t>(group->slot);
    transfer.recv_reduce = false;
    transfer.protocol = protocol;
    transfer.group = true;
    transfer.flushes = false;
    ++result_.transfers;
    result_.bytes_sent += group->bytes_sent;
    schedule(now_ + options_.per_step_overhead + group->route->latency,
             Event{EventKind::latency_done, id, 0});
  }

  void start_transfer(StepRef send, std::uint64_t send_bytes, StepRef receive,
                      std::uint64_t receive_bytes, bool receive_reduce, std::uint8_t protocol) {
    ProgramState& sender = programs_[send.program];
    const std::int32_t receiver = rank_of(receive.program);
    if (sender.path_peer != receiver) choose_path(send.program, sender, receiver);
    const topo::Path& path = *sender.path;
    const ProtocolCost& cost = protocols_[protocol];
    const Picoseconds latency =
        options_.per_step_overhead + sender.path_latency +
        cost.latency_beyond_path(sender.path_crosses_network, sender.path_latency);
    const std::uint32_t id = new_transfer();
    Transfer& transfer = transfers_[id];
    transfer.send = send;
    transfer.recv = receive;
    transfer.bytes = cost.wire_bytes(send_bytes);
    transfer.path = &path;
    transfer.recv_bytes = receive_bytes;
    transfer.recv_rank = receiver;
    transfer.recv_reduce = receive_reduce;
    transfer.protocol = protocol;
    transfer.group = false;
    transfer.flushes = cost.flushes(sender.path_crosses_network);
    ++result_.transfers;
    result_.bytes_sent += send_bytes;
    // A network step is posted by its sender's proxy first (ProxyPosts): start_transfer runs in
    // time order, so the posts queue in the order the steps become ready.
    const Picoseconds posted = proxies_.post(static_cast<std::size_t>(rank_of(send.program)), now_,
                                             cost, sender.path_crosses_network);
    schedule(posted + latency, Event{EventKind::latency_done, id, 0});
  }

  // The bytes of a transfer have all arrived: a plain receive is done; a recv_reduce now reduces.
  void on_arrival(std::uint32_t id) {
    bytes_through(id);
    const Transfer& transfer = transfers_[id];
    if (transfer.flushes) [[unlikely]] {
      flush(id);
      return;
    }
    if (transfer.recv_reduce) {
      schedule(protocols_[transfer.protocol].receive_end(now_, transfer.byte_start,
                                                         reduce_time(transfer)),
               Event{EventKind::reduce_done, id, 0});
      return;
    }
    finish_transfer(id);
  }

  // Transfer `id` has arrived and its receiver's proxy flushes it (ProxyPosts::flush): its send
  // and receive are done once the flush has ended (after a recv_reduce's reduction, which reads
  // the flushed bytes).
  void flush(std::uint32_t id) {
    const Transfer& transfer = transfers_[id];
    const Picoseconds flushed = proxies_.flush(static_cast<std::size_t>(transfer.recv_rank), now_,
                                               protocols_[transfer.protocol].net_flush);
    schedule(transfer.recv_reduce ? flushed + reduce_time(transfer) : flushed,
             Event{EventKind::reduce_done, id, 0});
  }

  Picoseconds reduce_time(const Transfer& transfer) const {
    return duration(transfer.recv_bytes,
                    rates_[static_cast<std::size_t>(transfer.recv_rank)].reduce_bytes_per_second);
  }

  void finish_transfer(std::uint32_t id) {
    const Transfer transfer = transfers_[id];
    free_transfers_.push_back(id);
    if (transfer.group) [[unlikely]] {
      for (const StepRef& member :
           switch_groups_.release(static_cast<std::uint32_t>(transfer.recv_rank)))
        complete(member);
      return;
    }
    complete(transfer.recv);
    complete(transfer.send);
  }

  void handle(const Event& event) {
    switch (event.kind) {
    case EventKind::local_done:
      complete(StepRef{event.a, event.b});
      break;
    case EventKind::latency_done:
      start_bytes(event.a);
      break;
    case EventKind::reduce_done:
      finish_transfer(event.a);
      break;
    case EventKind::lone_done:
      // Stale if the transfer was handed to the flow network after this event was pushed.
      if (transfers_[event.a].generation == event.b) {
        bytes_through(event.a);
        if (transfers_[event.a].flushes) [[unlikely]]
          flush(event.a);
        else
          finish_transfer(event.a);
      }
      break;
    case EventKind::lone_through:
      if (transfers_[event.a].generation == event.b) bytes_through(event.a);
      break;
    case EventKind::compute_done:
      complete(StepRef{event.a, event.b}, false);
      break;
    case EventKind::slowed_done: {
      detail::ComputeSlowdownTracker::Finished done;
      if (slowdown_->finish(event.a, event.b, done))
        complete(StepRef{done.program, done.index}, false);
      break;
    }
    }
  }

  // A compute step: slowed on the compute stream, as it was elsewhere (launch costs, markers).
  void begin_compute(std::uint32_t p, std::uint32_t index, Picoseconds duration,
                     double memory_bound_share) {
    if (channel_of(p) != options_.compute_channel) {
      schedule(now_ + duration, Event{EventKind::compute_done, p, index});
      return;
    }
    slowdown_->start(p, index, rank_of(p), duration, memory_bound_share, now_,
                     [&](Picoseconds end, std::uint32_t slot, std::uint32_t generation) {
                       schedule(end, Event{EventKind::slowed_done, slot, generation});
                     });
  }
  // Once per instant: the compute steps of the ranks whose communication changed get new ends.
  void apply_slowdowns() {
    slowdown_->apply_changes(now_,
                             [&](Picoseconds end, std::uint32_t slot, std::uint32_t generation) {
                               schedule(end, Event{EventKind::slowed_done, slot, generation});
                             });
  }

  // The latency of transfer `id` is over: its bytes start to move once the transfer before it on
  // its connection has put its bytes through (ConnectionFifo); a switch group's at once.
  void start_bytes(std::uint32_t id) {
    Transfer& transfer = transfers_[id];
    transfer.through = false;
    if (!transfer.group && !connections_.acquire(transfer.send.program, transfer.recv.program, id))
      return;
    move_bytes(id);
  }
  // The bytes of transfer `id` have all arrived: the next transfer queued on its connection (if
  // any) starts moving its bytes. Once per transfer.
  void bytes_through(std::uint32_t id) {
    Transfer& transfer = transfers_[id];
    if (transfer.group || transfer.through) return;
    transfer.through = true;
    std::uint32_t next = 0;
    if (connections_.release(transfer.send.program, transfer.recv.program, next)) move_bytes(next);
  }

  // Transfer `id`'s bytes start to move. Alone on its links, it is reserved and its end
  // (arrival, and for a recv_reduce the reduction too) is one event (with one more at the
  // arrival when the reduction ends later); otherwise the reserved transfers it overlaps are
  // handed to the flow network first.
  void move_bytes(std::uint32_t id) {
    Transfer& transfer = transfers_[id];
    const double bytes = static_cast<double>(transfer.bytes);
    transfer.byte_start = now_;
    overlapped_.clear();
    const Picoseconds finish = flows_.reserve(*transfer.path, bytes, id, now_, overlapped_);
    if (finish != std::numeric_limits<Picoseconds>::max()) {
      const std::uint32_t generation = ++transfer.generation;
      Picoseconds done = finish;
      if (transfer.recv_reduce && !transfer.flushes) // a flushed one reduces after its flush
        done = protocols_[transfer.protocol].receive_end(finish, now_, reduce_time(transfer));
      if (done != finish && !transfer.group)
        schedule(finish, Event{EventKind::lone_through, id, generation});
      schedule(done, Event{EventKind::lone_done, id, generation});
      return;
    }
    for (const std::uint64_t tag : overlapped_) {
      Transfer& reserved = transfers_[tag];
      ++reserved.generation;
      flows_.adopt(*reserved.path, static_cast<double>(reserved.bytes), tag, reserved.byte_start);
    }
    flows_.start(*transfer.path, bytes, id, now_);
  }

  // `communication`: a step other than a compute step (it held its call's thread blocks).
  void complete(StepRef ref, bool communication = true) {
    ProgramState& program = programs_[ref.program];
    if (slowdown_ && communication && channel_of(ref.program) != options_.compute_channel)
      slowdown_->comm_ended(ref.program, rank_of(ref.program));
    ProgramOverflow& overflow = overflow_[ref.program];
    last_completion_ = now_;
    if (++steps_done_ % kProgressInterval == 0 && options_.progress &&
        !options_.progress(now_, steps_done_))
      stopped_ = true;
    if (recording_) {
      const StartedStep& step = overflow.started[ref.index - program.base];
      const StepRecord record{rank_of(ref.program),
                              channel_of(ref.program),
                              step.kind,
                              step.peer,
                              step.bytes,
                              step.start,
                              now_};
      if (options_.on_step) options_.on_step(record);
      if (options_.record_steps) result_.steps_recorded.push_back(record);
    }
    const std::uint32_t retired = program.mark_done(ref.index, overflow);
    if (recording_)
      for (std::uint32_t i = 0; i < retired; ++i) overflow.started.pop_front();
    start_ready(ref.program);
    if (program.has_waiters) {
      std::vector<std::uint32_t> waiters;
      waiters.swap(overflow.waiters);
      program.has_waiters = false;
      for (std::uint32_t w : waiters) {
        programs_[w].waits_on_other = false;
        start_ready(w);
      }
    }
  }

  void check_finished() const {
    for (std::uint32_t p = 0; p < programs_.size(); ++p) {
      const ProgramState& program = programs_[p];
      if (program.finished()) continue;
      std::string what = "schedule deadlocked: rank " + std::to_string(rank_of(p)) + " channel " +
                         std::to_string(channel_of(p)) + " cannot finish step " +
                         std::to_string(program.next_start);
      if (program.has_pending)
        what += " (" + std::string(coll::to_string(program.pending.kind)) + " peer " +
                std::to_string(program.pending.peer) + ")";
      throw std::logic_error(what);
    }
  }

  const topo::Topology& topology_;
  topo::Router& router_;
  const AnalyticOptions& options_;
  FlowNetwork flows_;
  detail::ConnectionFifo connections_;
  ProxyPosts proxies_; // each rank's proxy thread: network posts one at a time
  LookaheadQueue<Event> events_{kWindow};
  std::vector<GpuRates> rates_;
  std::vector<ProtocolCost> protocols_;                                 // indexed by Step::protocol
  std::vector<ProgramState, HugePageAllocator<ProgramState>> programs_; // hot: every step
  std::vector<ProgramOverflow> overflow_; // cold: indexed like programs_
  std::vector<Transfer> transfers_;
  std::vector<std::uint32_t> free_transfers_;
  std::vector<std::uint64_t> overlapped_; // scratch for start_bytes
  // Rule 4: switch steps waiting for their group and the groups in flight (by
  // Transfer::recv_rank).
  detail::AnalyticSwitchGroups<StepRef> switch_groups_{topology_, router_, options_.seed};
  detail::ProgramNumbering numbering_;
  Picoseconds now_ = 0;
  Picoseconds last_completion_ = 0;
  std::uint64_t steps_done_ = 0;
  bool stopped_ = false;
  // Steps are recorded for CollectiveTiming::steps_recorded, AnalyticOptions::on_step or both.
  const bool recording_ = options_.record_steps || options_.on_step != nullptr;
  // With AnalyticOptions::compute_slowdown: the thread blocks in flight per rank and the slowed
  // compute steps.
  std::optional<detail::ComputeSlowdownTracker> slowdown_;
  CollectiveTiming result_;
};

} // namespace

CollectiveTiming simulate_analytic(const topo::Topology& topology, topo::Router& router,
                                   const coll::Schedule& schedule, const AnalyticOptions& options) {
  if (options.try_dependency_order) { // declines compute_slowdown itself
    if (std::optional<CollectiveTiming> timing =
            simulate_dependency_order(topology, router, schedule, options))
      return *std::move(timing);
    if (options.on_restart) options.on_restart(); // it may have handed steps over already
  }
  return AnalyticRun(topology, router, schedule, options).run();
}

} // namespace ddlsim::sim
