// ScheduleDriver: runs the Schedule's programs (one per rank and channel, programs.hpp) under
// the execution rules of collectives/step.hpp. A step starts once its dependencies are done
// (rule 1, kept by each program's coll::ProgramCursor); a send and its receive rendezvous first-in
// first-out per peer and channel (rule 2) and then open a message (sender.hpp); local steps
// (reduce, copy, compress, compute) take their modelled time. A step completes when its message's
// receive completed (plus the reduction of a recv_reduce) or its local time has passed, which may
// start the next steps.
#pragma once

#include "ddlsim/collectives/step.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/sim/compute_slowdown_tracker.hpp"
#include "ddlsim/sim/gpu_rates.hpp"
#include "ddlsim/sim/protocol_cost.hpp"
#include "network.hpp"
#include "programs.hpp"
#include "sender.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddlsim::sim::packet {

template <typename Engine> class ScheduleDriver {
public:
  explicit ScheduleDriver(const Network& net) {
    const coll::Schedule& schedule = net.schedule;
    const int ranks = schedule.ranks();
    const PacketOptions& options = net.options;
    rates_ = rank_rates(net.topology, ranks, options.reduce_bytes_per_second,
                        options.copy_bytes_per_second);
    protocols_ = protocol_costs(schedule);
    proxies_ = ProxyPosts(static_cast<std::size_t>(ranks));
    channels_ = static_cast<std::uint32_t>(schedule.channels());
    programs_.resize(static_cast<std::size_t>(ranks) * channels_);
    for (int r = 0; r < ranks; ++r)
      for (std::uint32_t c = 0; c < channels_; ++c) {
        Program& program = programs_[static_cast<std::size_t>(r) * channels_ + c];
        program.cursor = coll::ProgramCursor(schedule.program(r, static_cast<int>(c)));
        program.rank = r;
        program.channel = static_cast<std::uint16_t>(c);
      }
    if (options.compute_slowdown) slowdown_.emplace(programs_.size(), rates_, schedule.protocols());
  }

  // With compute_slowdown: gives the compute steps of the ranks whose communication changed
  // this instant their new ends; whether there was anything to do.
  bool apply_slowdowns() {
    if (!slowdown_ || !slowdown_->has_changes()) return false;
    slowdown_->apply_changes(net().now, [&](Picoseconds end, std::uint32_t id, std::uint32_t g) {
      net().events.push(end, Event::slowed_done(id, g));
    });
    return true;
  }

  // A slowed compute step's end came (unless a later one replaced it).
  void finish_slowed(std::uint32_t id, std::uint32_t generation) {
    detail::ComputeSlowdownTracker::Finished done;
    if (slowdown_->finish(id, generation, done)) complete(StepRef{done.program, done.index}, false);
  }

  // Starts what every program can start at time zero.
  void start() {
    for (std::uint32_t p = 0; p < programs_.size(); ++p) start_ready(p);
  }

  // The receive of message `id` has all the bytes it needs: its steps complete, after the
  // reduction for a recv_reduce (overlapped with the arrivals when the protocol reduces in
  // flight).
  void receive_complete(std::uint32_t id) {
    const Message& m = net().messages[id];
    if (m.net_flush > 0) [[unlikely]] {
      // Its receiver's proxy flushes it first (ProxyPosts::flush); its steps are done once
      // flushed (after a recv_reduce's reduction, which reads the flushed bytes).
      const Picoseconds flushed =
          proxies_.flush(static_cast<std::size_t>(m.recv_rank), net().now, m.net_flush);
      const double rate = rates_[static_cast<std::size_t>(m.recv_rank)].reduce_bytes_per_second;
      net().events.push(m.recv_reduce ? flushed + duration(m.recv_bytes, rate) : flushed,
                        Event::reduce_done(id));
      return;
    }
    if (m.recv_reduce) {
      const double rate = rates_[static_cast<std::size_t>(m.recv_rank)].reduce_bytes_per_second;
      net().events.push(sim::receive_end(net().now, m.first_arrival, duration(m.recv_bytes, rate),
                                         m.reduce_in_flight),
                        Event::reduce_done(id));
      return;
    }
    finish_steps(id);
  }

  // The send and the receive that message `id` served are done.
  void finish_steps(std::uint32_t id) {
    Message& m = net().messages[id];
    m.steps_done = true;
    const StepRef recv = m.recv, send = m.send;
    complete(recv);
    complete(send);
    engine().sender().maybe_free(id);
  }

  // `communication`: a step other than a compute step (it held its call's thread blocks).
  void complete(StepRef ref, bool communication = true) {
    Program& program = programs_[ref.program];
    if (slowdown_ && communication && program.channel != net().options.compute_channel)
      slowdown_->comm_ended(ref.program, program.rank);
    program.cursor.complete(ref.index);
    const Slot& done = slot(ref);
    const Picoseconds now = net().now;
    net().last_completion = now;
    if (net().options.record_steps)
      net().result.steps_recorded.push_back(
          StepRecord{program.rank, program.channel, done.kind, done.peer,
                     done.kind == coll::StepKind::compute ? 0 : done.bytes, done.start, now});
    while (!program.window.empty() && program.cursor.done(program.base)) {
      program.window.pop_front();
      ++program.base;
    }
    start_ready(ref.program);
    if (!programs_[ref.program].waiters.empty()) {
      std::vector<std::uint32_t> waiters;
      waiters.swap(programs_[ref.program].waiters);
      for (std::uint32_t w : waiters) {
        programs_[w].registered_as_waiter = false;
        start_ready(w);
      }
    }
  }

  // Throws when a program did not finish: the schedule (or the lossless network) deadlocked.
  void check_finished() const {
    for (const Program& program : programs_) {
      if (program.cursor.finished()) continue;
      const std::uint32_t stuck = program.cursor.started();
      const bool network = net().pool.in_use() > 0;
      std::string what = std::string(network ? "packet network deadlocked (lossless ports "
                                               "waiting on each other in a cycle)"
                                             : "schedule deadlocked") +
                         ": rank " + std::to_string(program.rank) + " channel " +
                         std::to_string(program.channel) + " cannot finish step " +
                         std::to_string(stuck);
      throw std::logic_error(what);
    }
  }

private:
  Slot& slot(StepRef ref) {
    Program& program = programs_[ref.program];
    return program.window[ref.index - program.base];
  }

  std::uint32_t program_of(std::int32_t rank, std::uint16_t channel) const {
    return static_cast<std::uint32_t>(rank) * channels_ + channel;
  }

  // Starts steps of program p in order while their dependencies are done (rule 1 of step.hpp).
  void start_ready(std::uint32_t p) {
    while (true) {
      Program& program = programs_[p];
      coll::ProgramCursor& cursor = program.cursor;
      if (!cursor.has_next()) {
        if (!cursor.pull()) return;
        ++net().result.steps;
      }
      if (!cursor.deps_done()) return;
      if (cursor.pending().has_wait() && !wait_done(p, cursor.pending())) return;
      const std::uint32_t index = cursor.start();
      program.window.push_back(Slot::of(cursor.pending(), net().now));
      begin(program.window.back(), StepRef{p, index}, program.rank, program.channel);
    }
  }

  // Whether the cross-program wait of `step` (next in program p) is satisfied; if not, p is
  // registered to retry when the awaited program completes a step.
  bool wait_done(std::uint32_t p, const coll::Step& step) {
    Program& program = programs_[p];
    if (step.wait_channel >= channels_)
      throw std::logic_error("rank " + std::to_string(program.rank) + " channel " +
                             std::to_string(program.channel) + " waits for channel " +
                             std::to_string(step.wait_channel) + " of a schedule with " +
                             std::to_string(channels_) + " channels");
    Program& awaited = programs_[program_of(program.rank, step.wait_channel)];
    if (awaited.cursor.done(step.wait_step)) return true;
    if (!program.registered_as_waiter) {
      program.registered_as_waiter = true;
      awaited.waiters.push_back(p);
    }
    return false;
  }

  void begin(const Slot step, StepRef ref, std::int32_t rank, std::uint16_t channel) {
    if (slowdown_ && step.kind != coll::StepKind::compute &&
        channel != net().options.compute_channel)
      slowdown_->comm_started(ref.program, rank, step.protocol);
    if (step.is_send()) {
      Program& receiver = programs_[program_of(step.peer, channel)];
      Waiting receive;
      if (take_waiting(receiver.receives, rank, receive))
        start_message(ref, receive.step, receive.bytes, receive.reduce);
      else
        receiver.sends_in.push_back(Waiting{rank, ref});
    } else if (step.is_receive()) {
      Program& self = programs_[ref.program];
      const bool reduce = step.kind == coll::StepKind::recv_reduce;
      Waiting send;
      if (take_waiting(self.sends_in, step.peer, send))
        start_message(send.step, ref, step.bytes, reduce);
      else
        self.receives.push_back(Waiting{step.peer, ref, step.bytes, reduce});
    } else if (step.kind == coll::StepKind::switch_reduce ||
               step.kind == coll::StepKind::switch_multicast) {
      // Packets would have to be added up (and copied) inside an NVSwitch port: not modelled.
      throw InputError("engine", "the packet engine does not model in-switch reduction (the " +
                                     std::string(coll::to_string(step.kind)) +
                                     " steps of the nvls algorithms); use the analytic engine, "
                                     "or an algorithm without NVLS (e.g. ring, nccl_ring)");
    } else if (step.kind == coll::StepKind::compute) {
      // A modelled duration: no per-step overhead on top (the workload model includes it).
      const auto time = static_cast<Picoseconds>(step.bytes);
      if (!slowdown_)
        net().events.push(net().now + time, Event::local_done(ref.program, ref.index));
      else if (channel != net().options.compute_channel)
        net().events.push(net().now + time, Event::compute_done(ref.program, ref.index));
      else
        slowdown_->start(ref.program, ref.index, rank, time, step.memory_bound_share, net().now,
                         [&](Picoseconds end, std::uint32_t id, std::uint32_t g) {
                           net().events.push(end, Event::slowed_done(id, g));
                         });
    } else {
      const double rate = local_step_rate(rates_[static_cast<std::size_t>(rank)], step.kind);
      net().events.push(net().now + net().options.per_step_overhead + duration(step.bytes, rate),
                        Event::local_done(ref.program, ref.index));
    }
  }

  std::uint8_t priority_of(StepRef receive, std::uint16_t channel) {
    const TransportSpec& transport = net().spec.transport;
    const int classes = net().sw.priorities;
    switch (transport.priority_rule) {
    case TransportSpec::PriorityRule::constant:
      return static_cast<std::uint8_t>(transport.priority);
    case TransportSpec::PriorityRule::by_channel:
      return static_cast<std::uint8_t>(std::min<int>(channel, classes - 1));
    case TransportSpec::PriorityRule::by_magnitude: // its top packets go as class 0 (sender.hpp)
      return static_cast<std::uint8_t>(classes - 1);
    case TransportSpec::PriorityRule::by_offset:
    case TransportSpec::PriorityRule::by_layer: {
      const Slot& step = slot(receive);
      const std::uint64_t size =
          net().schedule.buffer_bytes(programs_[receive.program].rank, step.dst_buffer);
      if (size == 0) return 0;
      const auto c = static_cast<int>(static_cast<double>(step.dst_offset) * classes /
                                      static_cast<double>(size));
      const int by_offset = std::clamp(c, 0, classes - 1);
      return static_cast<std::uint8_t>(transport.priority_rule ==
                                               TransportSpec::PriorityRule::by_offset
                                           ? by_offset
                                           : classes - 1 - by_offset);
    }
    }
    return 0;
  }

  // A send met its receive: the message between them opens.
  void start_message(StepRef send, StepRef receive, std::uint64_t receive_bytes, bool reduce) {
    const Program& sender = programs_[send.program];
    const std::int32_t src = sender.rank;
    const std::int32_t dst = programs_[receive.program].rank;
    const std::uint16_t channel = sender.channel;
    const topo::Topology& topology = net().topology;
    const std::vector<topo::Path>& paths = net().router.channel_paths(src, dst, channel);
    if (paths.empty() || paths.front().empty())
      throw InputError("topology", "no route from rank " + std::to_string(src) + " to rank " +
                                       std::to_string(dst));
    // A send and its receive belong to one call (rule 2 of step.hpp): the send names its protocol.
    const Slot& sent = slot(send);
    const ProtocolCost& cost = protocol_cost(protocols_, sent.protocol);
    MessageSetup setup;
    setup.send = send;
    setup.recv = receive;
    setup.bytes = cost.wire_bytes(sent.bytes);
    setup.payload_bytes = sent.bytes;
    setup.recv_bytes = receive_bytes;
    setup.send_rank = src;
    setup.recv_rank = dst;
    setup.recv_reduce = reduce;
    setup.reduce_in_flight = cost.reduce_in_flight;
    const bool crosses = crosses_network(topology, paths.front());
    setup.hop_latency = cost.latency_beyond_path(crosses, path_latency(topology, paths.front()));
    // A network message is posted by its sender's proxy first (ProxyPosts); messages open in
    // time order, so the posts queue in the order the steps become ready.
    setup.post_wait =
        proxies_.post(static_cast<std::size_t>(src), net().now, cost, crosses) - net().now;
    setup.net_flush = cost.flushes(crosses) ? cost.net_flush : 0;
    setup.channel = channel;
    setup.priority = priority_of(receive, channel);
    if (net().spec.transport.priority_rule == TransportSpec::PriorityRule::by_magnitude) {
      // Where the message lands, read as by_layer reads the buffer (0 = its end), for the
      // magnitude profile; packet s covers the s-th slice of it.
      const Slot& step = slot(receive);
      const std::uint64_t size = net().schedule.buffer_bytes(dst, step.dst_buffer);
      if (size > 0) {
        setup.span_from = 1 - static_cast<double>(step.dst_offset) / static_cast<double>(size);
        setup.span_to =
            1 - static_cast<double>(step.dst_offset + receive_bytes) / static_cast<double>(size);
      }
    }
    setup.paths = &paths;
    engine().sender().open(setup);
  }

  Engine& engine() { return static_cast<Engine&>(*this); }
  const Engine& engine() const { return static_cast<const Engine&>(*this); }
  Network& net() { return engine().network(); }
  const Network& net() const { return engine().network(); }
  std::vector<GpuRates> rates_;
  std::vector<ProtocolCost> protocols_; // indexed by Step::protocol
  ProxyPosts proxies_;                  // each rank's proxy thread: network posts one at a time
  std::vector<Program> programs_;
  std::uint32_t channels_ = 1;
  // With PacketOptions::compute_slowdown: the thread blocks in flight per rank and the slowed
  // compute steps.
  std::optional<detail::ComputeSlowdownTracker> slowdown_;
};

} // namespace ddlsim::sim::packet
