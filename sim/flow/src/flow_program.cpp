// A Program's logic: issuing its steps in order, waiting for the first of its activities to
// end, and handling each completion at the simulated time it happens (flow_actors.hpp).
#include "flow_actors.hpp"

#include <cmath>
#include <stdexcept>

namespace ddlsim::sim::flow::run_detail {

void Program::operator()() {
  try {
    while (!run_.stopped()) {
      issue_ready();
      if (rate_posted_ && !rate_woken_ && local_.empty() && activities_.size() == 1)
        close_rate(); // nothing but the rate mailbox to wait for: finished (or stuck)
      if (run_.stopped() || (activities_.empty() && local_.empty()))
        break; // finished, or stuck (found afterwards)
      wait_next();
    }
  } catch (const InputError& error) {
    run_.reject_input(error);
  } catch (const std::exception& error) {
    run_.fail(error.what());
  }
}

void Program::wait_next() {
  for (const sg::ActivityPtr& ended : ended_by_test_) ended->wait();
  ended_by_test_.clear();
  if (local_.empty()) {
    on_completed(static_cast<std::size_t>(sg::Activity::wait_any(activities_)));
  } else {
    const std::size_t first = earliest_local();
    const double now = Platform::clock();
    // The timeout ends at now + (end - now), which may miss `end` by a rounding error: when it
    // fires, that work has ended.
    const ssize_t which = local_[first].end <= now
                              ? -1
                              : sg::Activity::wait_any_for(activities_, local_[first].end - now);
    if (which < 0)
      local_ended(first);
    else
      on_completed(static_cast<std::size_t>(which));
  }
  // Everything else that ended at this instant is handled before new steps start, so that a
  // flow that ended is off its links before the next one is routed: SimGrid's lazy max-min
  // solver gives results that depend (by ~1e-4) on the order of the flows' starts and ends
  // within one instant, and this order is the one the engine always had.
  while (!activities_.empty()) {
    const ssize_t also = sg::Activity::test_any(activities_);
    if (also < 0) break;
    ended_by_test_.push_back(activities_[static_cast<std::size_t>(also)]);
    on_completed(static_cast<std::size_t>(also));
  }
  const double now = Platform::clock();
  for (std::size_t i = 0; i < local_.size();)
    if (local_[i].end <= now)
      local_ended(i); // moves the last entry to i
    else
      ++i;
}

std::size_t Program::earliest_local() const {
  std::size_t first = 0;
  for (std::size_t i = 1; i < local_.size(); ++i)
    if (local_[i].end < local_[first].end) first = i;
  return first;
}

void Program::local_ended(std::size_t position) {
  const LocalWork work = local_[position];
  local_[position] = local_.back();
  local_.pop_back();
  if (work.what.phase == Phase::post) {
    put(window_[work.what.index - base_], work.what.index, *work.what.channel, work.what.sequence);
    return;
  }
  if (work.slot != kNotSlowed) {
    detail::ComputeSlowdownTracker::Finished done;
    if (!run_.slowdown().finish(work.slot, work.generation, done))
      throw std::logic_error("flow engine: a slowed compute step ended at a stale time");
    --slowed_;
  }
  complete(work.what.index);
}

void Program::start_slowed(std::uint32_t index, Picoseconds work, double memory_bound_share) {
  const Picoseconds now = Platform::now();
  run_.slowdown().start(
      run_.program_index(rank_, channel_), index, rank_, work, memory_bound_share, now,
      [&](Picoseconds end, std::uint32_t slot, std::uint32_t generation) {
        run_.own_slot(slot, this);
        local_.push_back(LocalWork{Platform::clock() + Platform::work_seconds(end - now),
                                   InFlight{index, Phase::local, nullptr, 0}, slot, generation});
      });
  ++slowed_;
  if (!rate_posted_) post_rate();
}

void Program::slowed_moved(std::uint32_t slot, std::uint32_t generation, Picoseconds end) {
  for (LocalWork& work : local_)
    if (work.slot == slot) {
      work.end = Platform::clock() + Platform::work_seconds(end - Platform::now());
      work.generation = generation;
    }
  if (rate_woken_) return; // it looks at every end when it wakes
  rate_woken_ = true;
  // Sent from the host of another program of this GPU: no links, no latency.
  rate_mailbox_->put_init(this, 0)->detach();
}

void Program::post_rate() {
  track(rate_mailbox_->get_async<void>(&received_), InFlight{0, Phase::rate, nullptr, 0});
  rate_posted_ = true;
}

void Program::close_rate() {
  rate_woken_ = true;
  rate_mailbox_->put_init(this, 0)->detach();
}

void Program::release(Channel::PostedReceive& receive, int sender, int receiver) {
  if (receive.released) return;
  receive.released = true;
  run_.platform().flow_finished(sender, receiver, channel_);
}

Channel& Program::channel_to(std::int32_t peer) {
  if (peer != send_peer_) {
    send_channel_ = &run_.channel(rank_, peer, channel_);
    send_peer_ = peer;
  }
  return *send_channel_;
}
Channel& Program::channel_from(std::int32_t peer) {
  if (peer != receive_peer_) {
    receive_channel_ = &run_.channel(peer, rank_, channel_);
    receive_peer_ = peer;
  }
  return *receive_channel_;
}

void Program::issue_ready() {
  while (!run_.stopped()) {
    if (!cursor_.has_next()) {
      if (!cursor_.pull()) return;
      ++run_.result().steps;
    }
    if (!cursor_.deps_done()) return;
    if (cursor_.pending().has_wait() && !wait_done(cursor_.pending())) return;
    const std::uint32_t index = cursor_.start();
    window_.push_back(Slot::of(cursor_.pending(), Platform::now()));
    begin(window_.back(), index);
  }
}

bool Program::wait_done(const Step& step) {
  if (step.wait_channel >= run_.channels())
    throw std::logic_error("rank " + std::to_string(rank_) + " channel " +
                           std::to_string(channel_) + " waits for channel " +
                           std::to_string(step.wait_channel) + " of a schedule with " +
                           std::to_string(run_.channels()) + " channels");
  Program* awaited = run_.program(rank_, step.wait_channel);
  if (awaited->step_done(step.wait_step)) return true;
  if (!waiting_) {
    waiting_ = true;
    awaited->add_waiter(this, step.wait_step);
    if (!wake_mailbox_)
      wake_mailbox_ =
          sg::Mailbox::by_name("wake " + std::to_string(rank_) + "#" + std::to_string(channel_));
    track(wake_mailbox_->get_async<void>(&received_), InFlight{0, Phase::wake, nullptr, 0});
  }
  return false;
}

void Program::wake_waiters() {
  for (std::size_t i = 0; i < waiters_.size();) {
    auto [waiter, index] = waiters_[i];
    if (!step_done(index)) {
      ++i;
      continue;
    }
    waiters_[i] = waiters_.back();
    waiters_.pop_back();
    // Sent from this program's host to the waiter's, both on this GPU: no links, no latency.
    waiter->wake_mailbox_->put_init(waiter, 0)->detach();
  }
}

void Program::put(const Slot& step, std::uint32_t index, Channel& channel, std::uint64_t sequence) {
  // SimGrid refuses a null payload; the address of the channel is as good as any.
  track(channel.mailbox->put_async(&channel, run_.protocol(step.protocol).wire_bytes(step.bytes)),
        InFlight{index, Phase::send, &channel, sequence});
}

void Program::begin(Slot& step, std::uint32_t index) {
  const FlowOptions& options = run_.options();
  if (step.kind != StepKind::compute) run_.comm_started(rank_, channel_, step.protocol);
  if (step.kind == StepKind::send) {
    Channel& channel = channel_to(step.peer);
    CollectiveTiming& result = run_.result();
    ++result.transfers;
    result.bytes_sent += step.bytes;
    const std::uint64_t sequence = channel.sends++;
    // A network send is posted by its rank's proxy first (ProxyPosts). The proxy posts one step
    // at a time, so a rank's network sends reach the wire in the order they began, and the k-th
    // send of a channel still meets its k-th receive.
    const ProtocolCost& cost = run_.protocol(step.protocol);
    if (cost.net_post > 0) {
      const bool crosses = run_.platform().route_facts(rank_, step.peer, channel_).crosses_network;
      const Picoseconds now = Platform::now();
      const Picoseconds posted =
          run_.proxies().post(static_cast<std::size_t>(rank_), now, cost, crosses);
      if (posted > now) {
        local_.push_back(LocalWork{Platform::clock() + Platform::work_seconds(posted - now),
                                   InFlight{index, Phase::post, &channel, sequence}});
        return;
      }
    }
    put(step, index, channel, sequence);
  } else if (step.kind == StepKind::recv || step.kind == StepKind::recv_reduce) {
    Channel& channel = channel_from(step.peer);
    const std::uint64_t sequence = channel.first + channel.receives.size();
    channel.receives.push_back(
        Channel::PostedReceive{step.bytes, step.kind == StepKind::recv_reduce, false, false});
    track(channel.mailbox->get_async<void>(&received_),
          InFlight{index, Phase::receive, &channel, sequence});
  } else if (step.kind == StepKind::switch_reduce || step.kind == StepKind::switch_multicast) {
    // SimGrid's comms join two hosts; a group reduced in the switch is not one of them.
    run_.reject("the flow engine does not model in-switch reduction (the " +
                std::string(coll::to_string(step.kind)) +
                " steps of the nvls algorithms); use the analytic engine, or an algorithm "
                "without NVLS (e.g. ring, nccl_ring)");
  } else if (step.kind == StepKind::compute) {
    // A modelled duration: no per-step overhead on top (the workload model includes it).
    if (run_.slows(channel_) && step.bytes > 0)
      start_slowed(index, static_cast<Picoseconds>(step.bytes), step.memory_bound_share);
    else
      execute(static_cast<Picoseconds>(step.bytes), InFlight{index, Phase::local, nullptr, 0});
  } else {
    const double rate = local_step_rate(run_.rates(rank_), step.kind);
    execute(options.per_step_overhead + duration(step.bytes, rate),
            InFlight{index, Phase::local, nullptr, 0});
  }
}

void Program::execute(Picoseconds work, InFlight what) {
  if (work <= 0) {
    complete(what.index);
    return;
  }
  local_.push_back(LocalWork{Platform::clock() + Platform::work_seconds(work), what});
}

Picoseconds Program::after_arrival(const sg::Activity& comm, const Slot& step, int sender,
                                   int receiver, std::uint64_t reduce_bytes) {
  const ProtocolCost& cost = run_.protocol(step.protocol);
  const Picoseconds reduce =
      reduce_bytes > 0 ? duration(reduce_bytes, run_.rates(receiver).reduce_bytes_per_second) : 0;
  if (cost == ProtocolCost{}) return reduce; // the common case, without protocol charges
  const Platform::RouteFacts route = run_.platform().route_facts(sender, receiver, channel_);
  const Picoseconds arrival = Platform::now();
  // The first bytes arrive once the transfer started (both ends posted) and its latency passed.
  const Picoseconds bytes_start =
      checked_ps((comm.get_start_time() + route.latency_seconds) * 1e12);
  const Picoseconds path_latency = checked_ps(route.latency_seconds * 1e12);
  return cost.receive_end(arrival, bytes_start, reduce) - arrival +
         cost.latency_beyond_path(route.crosses_network, path_latency);
}

std::optional<Picoseconds> Program::after_flush(Channel& channel, std::uint64_t sequence,
                                                const Slot& step, int sender, int receiver,
                                                std::uint64_t reduce_bytes) {
  const ProtocolCost& cost = run_.protocol(step.protocol);
  if (cost.net_flush == 0) return std::nullopt;
  const Platform::RouteFacts route = run_.platform().route_facts(sender, receiver, channel_);
  if (!route.crosses_network) return std::nullopt;
  const Picoseconds now = Platform::now();
  Picoseconds flushed = 0;
  if (const auto it = channel.flushed.find(sequence); it != channel.flushed.end()) {
    flushed = it->second;
    channel.flushed.erase(it);
  } else {
    flushed = run_.proxies().flush(static_cast<std::size_t>(receiver), now, cost.net_flush);
    channel.flushed.emplace(sequence, flushed);
  }
  const Picoseconds reduce =
      reduce_bytes > 0 ? duration(reduce_bytes, run_.rates(receiver).reduce_bytes_per_second) : 0;
  return flushed - now + cost.latency_beyond_path(true, checked_ps(route.latency_seconds * 1e12)) +
         reduce;
}

void Program::on_completed(std::size_t position) {
  const InFlight what = in_flight_[position];
  const sg::ActivityPtr activity = activities_[position];
  activities_[position] = std::move(activities_.back());
  activities_.pop_back();
  in_flight_[position] = in_flight_.back();
  in_flight_.pop_back();
  switch (what.phase) {
  case Phase::send: {
    const Slot& step = window_[what.index - base_];
    // The matching receive was posted before the bytes could move, so it is known by now.
    Channel& channel = *what.channel;
    Channel::PostedReceive& receive = channel.receives[what.sequence - channel.first];
    release(receive, rank_, step.peer);
    receive.consumed = true;
    const bool reduce = receive.reduce;
    const std::uint64_t bytes = receive.bytes;
    while (!channel.receives.empty() && channel.receives.front().consumed) {
      channel.receives.pop_front();
      ++channel.first;
    }
    // This send completes with its receive: after the receiver's reduction (from now on, or
    // overlapped with the transfer) and the protocol's hop latency, and its flush if any.
    const std::optional<Picoseconds> flushed =
        after_flush(channel, what.sequence, step, rank_, step.peer, reduce ? bytes : 0);
    if (const Picoseconds after =
            flushed ? *flushed
                    : after_arrival(*activity, step, rank_, step.peer, reduce ? bytes : 0);
        reduce || after > 0)
      execute(after, InFlight{what.index, Phase::send_awaits_reduce, nullptr, 0});
    else
      complete(what.index);
    break;
  }
  case Phase::receive: {
    const Slot& step = window_[what.index - base_];
    Channel& channel = *what.channel;
    if (what.sequence >= channel.first)
      release(channel.receives[what.sequence - channel.first], step.peer, rank_);
    const bool reduce = step.kind == StepKind::recv_reduce;
    const std::optional<Picoseconds> flushed =
        after_flush(channel, what.sequence, step, step.peer, rank_, reduce ? step.bytes : 0);
    const Picoseconds after =
        flushed ? *flushed
                : after_arrival(*activity, step, step.peer, rank_, reduce ? step.bytes : 0);
    if (reduce || after > 0)
      execute(after, InFlight{what.index, Phase::reduce, nullptr, 0});
    else
      complete(what.index);
    break;
  }
  case Phase::wake:
    waiting_ = false; // issue_ready looks again
    break;
  case Phase::rate: // wait_next looks at the new ends
    rate_posted_ = false;
    rate_woken_ = false;
    if (slowed_ > 0) post_rate();
    break;
  case Phase::local: // local work is never an activity (see local_ended)
  case Phase::post:
  case Phase::send_awaits_reduce:
  case Phase::reduce:
    throw std::logic_error("flow engine: local work completed as an activity");
  }
}

void Program::complete(std::uint32_t index) {
  cursor_.complete(index);
  const Slot& done = window_[index - base_];
  if (done.kind != StepKind::compute) run_.comm_ended(rank_, channel_);
  const Picoseconds now = Platform::now();
  if (run_.options().record_steps)
    run_.result().steps_recorded.push_back(
        StepRecord{rank_, static_cast<std::uint16_t>(channel_), done.kind, done.peer,
                   done.kind == StepKind::compute ? 0 : done.bytes, done.start, now});
  while (!window_.empty() && cursor_.done(base_)) {
    window_.pop_front();
    ++base_;
  }
  if (!waiters_.empty()) wake_waiters();
  run_.step_completed(now);
}

std::string Program::describe_stuck() const {
  std::string what = "schedule deadlocked: rank " + std::to_string(rank_) + " channel " +
                     std::to_string(channel_) + " cannot finish step " +
                     std::to_string(cursor_.started());
  if (cursor_.has_next()) {
    const Step& step = cursor_.pending();
    what +=
        " (" + std::string(coll::to_string(step.kind)) + " peer " + std::to_string(step.peer) + ")";
  }
  return what;
}

} // namespace ddlsim::sim::flow::run_detail
