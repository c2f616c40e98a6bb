#include "flow_run.hpp"

#include "ddlsim/collectives/step_runner.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/sim_time.hpp"
#include "ddlsim/sim/compute_slowdown_tracker.hpp"
#include "ddlsim/sim/gpu_rates.hpp"
#include "ddlsim/sim/protocol_cost.hpp"
#include "platform.hpp"

#include <simgrid/s4u/Activity.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include <cmath>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace ddlsim::sim::flow {
namespace {

// Steps between progress callbacks (and --max-wall-seconds checks). A SimGrid step costs tens
// of microseconds at scale (its max-min sharing is re-solved as flows start and end), so the
// other engines' kProgressInterval (65,536) left a 4,096-rank run silent for seconds and
// overshot the deadline by 5 s; 1,024 keeps both well under a second.
constexpr std::uint64_t kFlowProgressInterval = 1 << 10;

namespace sg = simgrid::s4u;
using coll::Step;
using coll::StepKind;

Picoseconds duration(std::uint64_t bytes, double bytes_per_second) {
  return checked_transfer_ps(static_cast<double>(bytes), bytes_per_second);
}

// The traffic of one (sender, receiver, channel): its mailbox, where the k-th send meets the
// k-th receive (rule 2 of step.hpp: SimGrid matches a mailbox first-in first-out), and what the
// receiver's posted receives are, so that a sender whose bytes went to a recv_reduce knows its
// send completes only once that reduction is done (rule 3).
struct Channel {
  sg::Mailbox* mailbox = nullptr;
  std::uint64_t sends = 0; // sends posted so far (the sender's sequence numbers)
  std::uint64_t first = 0; // sequence number of receives.front()
  struct PostedReceive {
    std::uint64_t bytes = 0;
    bool reduce = false;
    bool consumed = false; // its sender has looked at it
    bool released = false; // its flow has left its links (Platform::flow_finished)
  };
  std::deque<PostedReceive> receives;
};

// What the engine keeps of a started step: its timing-relevant fields.
struct Slot {
  std::uint64_t bytes = 0; // for a compute step: its duration in picoseconds
  Picoseconds start = 0;
  std::int32_t peer = -1;
  StepKind kind = StepKind::send;
  std::uint8_t protocol = 0;    // Step::protocol
  float memory_bound_share = 0; // a compute step's (Step; a float, as every engine keeps it)

  static Slot of(const Step& step, Picoseconds start) {
    const std::uint64_t bytes = step.kind == StepKind::compute
                                    ? static_cast<std::uint64_t>(checked_ps(step.param))
                                    : step.bytes;
    return Slot{bytes,     start,         step.peer,
                step.kind, step.protocol, static_cast<float>(step.memory_bound_share)};
  }
};

// What an in-flight activity or pending local work of a program is doing for which step.
enum class Phase : std::uint8_t {
  local,              // a local step's work
  send,               // a send's bytes on the wire
  send_awaits_reduce, // a send whose bytes arrived, waiting out the receiver's reduction
  receive,            // a receive's bytes on the wire
  reduce,             // a recv_reduce reducing what arrived
  wake,               // the program waits for a step of another channel (Step::wait_channel)
  post,               // a network send waiting for its rank's proxy to post it (ProxyPosts)
  rate,               // with compute_slowdown: the end of one of its slowed compute steps moved
};
struct InFlight {
  std::uint32_t index;
  Phase phase;
  Channel* channel;
  std::uint64_t sequence; // send or receive: which one of its channel
};

class FlowRun;

// One (rank, channel) program, run by its actor: it issues steps in order as their
// dependencies complete (rule 1 of step.hpp, kept by the shared ProgramCursor) and waits for
// whichever of its activities ends first, so that every completion is handled at the simulated time
// it happens.
//
// Local work (local steps, the reduction of a recv_reduce, compute steps) is not a SimGrid
// execution: hosts have so many cores that an execution always runs at the host's speed, so its
// end is known when it starts, and the actor waits for its communications with a timeout at the
// earliest such end instead. An execution would cost an activity and four simcalls (init, set
// the work, set the host, start), each a switch to SimGrid's maestro and back.
//
// With compute_slowdown, a compute step on the compute channel is slowed by its rank's
// communication (ComputeSlowdownTracker, shared with the other engines): when another program of
// the rank starts or ends communication, the tracker gives the step a new end at once, and that
// program wakes this one with a message of 0 bytes on its rate mailbox, so that its wait times
// out at the new end. An execution could not follow the rate: SimGrid 3.32 sets an Exec's bound
// before it starts (s4u/Exec.hpp: set_bound), and its priority shares a host's speed only among
// executions on that host, which a compute step has to itself.
class Program {
public:
  Program(FlowRun& run, int rank, int channel, coll::StepStream stream)
      : run_(run), cursor_(std::move(stream)), rank_(rank), channel_(channel) {}
  void operator()();
  bool finished() const { return cursor_.finished(); }
  bool step_done(std::uint32_t index) const { return cursor_.done(index); }
  // With compute_slowdown: the slowed compute step of tracker slot `slot` now ends at `end`
  // (called by the program whose communication changed the rate).
  void slowed_moved(std::uint32_t slot, std::uint32_t generation, Picoseconds end);
  // With compute_slowdown, on the compute channel: its rate mailbox, made before the run starts
  // (Mailbox::by_name is a simcall, during which another program may move an end).
  void make_rate_mailbox() {
    rate_mailbox_ =
        sg::Mailbox::by_name("rate " + std::to_string(rank_) + "#" + std::to_string(channel_));
  }
  // Program `waiter` of this rank waits for step `index` of this program.
  void add_waiter(Program* waiter, std::uint32_t index) { waiters_.emplace_back(waiter, index); }
  std::string describe_stuck() const;

private:
  void issue_ready();
  bool wait_done(const Step& step);
  void wake_waiters();
  void begin(Slot& step, std::uint32_t index);
  // Puts the bytes of send `index` (the `sequence`-th of `channel`) on the wire.
  void put(const Slot& step, std::uint32_t index, Channel& channel, std::uint64_t sequence);
  void on_completed(std::size_t position);
  // How long after the arrival of the bytes of `comm` (between this program and `peer`, sender
  // first) its receive ends: the protocol's hop latency, after the reduction of `reduce_bytes`
  // at the receiver (0 for a plain receive), overlapped with the transfer when in flight.
  Picoseconds after_arrival(const sg::Activity& comm, const Slot& step, int sender, int receiver,
                            std::uint64_t reduce_bytes);
  void complete(std::uint32_t index);
  void track(sg::ActivityPtr activity, InFlight what) {
    activities_.push_back(std::move(activity));
    in_flight_.push_back(what);
  }
  // Starts `work` picoseconds of local work, or completes the step now when there is none.
  void execute(Picoseconds work, InFlight what);
  // Starts compute step `index`, slowed by the rank's communication (compute_slowdown).
  void start_slowed(std::uint32_t index, Picoseconds work, double memory_bound_share);
  // Posts the receive of the rate mailbox; ends it with a message to itself once nothing else is
  // left to wait for (close_rate), so that the actor can finish.
  void post_rate();
  void close_rate();
  // Waits for the next completion (an activity or local work) and handles it.
  void wait_next();
  // Local work local_[position] has ended: handles it.
  void local_ended(std::size_t position);
  std::size_t earliest_local() const;
  // The flow of `receive` ended: whichever of its two programs sees it first takes it off its
  // links (both see it at the same simulated instant).
  void release(Channel::PostedReceive& receive, int sender, int receiver);
  Channel& channel_to(std::int32_t peer);
  Channel& channel_from(std::int32_t peer);

  FlowRun& run_;
  coll::ProgramCursor cursor_;
  std::deque<Slot> window_; // window_[i] is started step base_ + i, kept until it completes
  std::uint32_t base_ = 0;
  int rank_;
  int channel_;
  std::vector<sg::ActivityPtr> activities_;
  std::vector<InFlight> in_flight_; // in_flight_[i] describes activities_[i]
  // Comms that Activity::test_any found ended. SimGrid 3.32 takes a comm out of its actors'
  // activity lists (std::list) only when it finishes with a wait of that actor registered
  // (CommImpl::finish in src/kernel/activity/CommImpl.cpp); one that a test finds ended stays
  // in the list for the actor's whole life, never freed, and every later completion of the
  // actor walks the list to remove its own comm: a ring step left one behind per rank, so a
  // completion cost grew with the steps done (56% of the CPU at 256 ranks) and memory with them.
  // A wait on the ended comm takes it out; it is done when the actor is about to block anyway,
  // so no flow starts or ends in a different order.
  std::vector<sg::ActivityPtr> ended_by_test_;
  // Local work under way, each with its end (SimGrid's clock, seconds); a handful at most.
  static constexpr std::uint32_t kNotSlowed = UINT32_MAX;
  struct LocalWork {
    double end;
    InFlight what;
    std::uint32_t slot = kNotSlowed; // a slowed compute step: its tracker slot and generation
    std::uint32_t generation = 0;
  };
  std::vector<LocalWork> local_;
  std::uint32_t slowed_ = 0; // slowed compute steps in local_
  sg::Mailbox* rate_mailbox_ = nullptr;
  bool rate_posted_ = false; // a receive on rate_mailbox_ is in activities_
  bool rate_woken_ = false;  // and a message to it is on its way
  std::int32_t send_peer_ = -1, receive_peer_ = -1;
  Channel* send_channel_ = nullptr;
  Channel* receive_channel_ = nullptr;
  void* received_ = nullptr; // where SimGrid writes the (meaningless) payload pointer
  // Cross-program waits: programs of this rank waiting for a step of this one, and this
  // program's own wake-up mailbox. A wake-up is a message of 0 bytes between two hosts of the
  // same GPU, whose route is empty: it arrives at the instant it is sent.
  std::vector<std::pair<Program*, std::uint32_t>> waiters_;
  sg::Mailbox* wake_mailbox_ = nullptr;
  bool waiting_ = false; // a wake-up receive is posted
};

class FlowRun {
public:
  FlowRun(const topo::Topology& topology, topo::Router& router, const coll::Schedule& schedule,
          const FlowOptions& options, const ReportNow& report_now)
      : options_(options), report_now_(report_now) {
    const int ranks = schedule.ranks();
    channels_ = schedule.channels();
    rates_ =
        rank_rates(topology, ranks, options.reduce_bytes_per_second, options.copy_bytes_per_second);
    protocols_ = protocol_costs(schedule);
    proxies_ = ProxyPosts(static_cast<std::size_t>(ranks));
    const std::size_t programs =
        static_cast<std::size_t>(ranks) * static_cast<std::size_t>(channels_);
    if (options.compute_slowdown) slowdown_.emplace(programs, rates_, schedule.protocols());
    start_simgrid(options.model, programs);
    platform_ = std::make_unique<Platform>(topology, router, ranks, channels_, options.seed,
                                           options.per_step_overhead);
    programs_.reserve(programs);
    for (int r = 0; r < ranks; ++r)
      for (int c = 0; c < channels_; ++c) {
        programs_.push_back(std::make_unique<Program>(*this, r, c, schedule.program(r, c)));
        Program* program = programs_.back().get();
        if (slows(c)) program->make_rate_mailbox();
        sg::Actor::create("rank" + std::to_string(r) + "#" + std::to_string(c),
                          platform_->host(r, c), [program] { (*program)(); });
      }
  }

  CollectiveTiming run() {
    Platform::run();
    if (!platform_->routing_error().empty())
      throw InputError("topology", platform_->routing_error());
    if (input_error_) throw *input_error_;
    if (!input_why_.empty()) throw InputError("engine", input_why_);
    if (!error_.empty()) throw std::logic_error(error_);
    for (const auto& program : programs_)
      if (!program->finished()) throw std::logic_error(program->describe_stuck());
    return timing();
  }

  // --- for the programs ---
  const FlowOptions& options() const { return options_; }
  const GpuRates& rates(int rank) const { return rates_[static_cast<std::size_t>(rank)]; }
  const ProtocolCost& protocol(std::uint8_t index) const {
    return protocol_cost(protocols_, index);
  }
  CollectiveTiming& result() { return result_; }
  Platform& platform() { return *platform_; }
  ProxyPosts& proxies() { return proxies_; }
  Program* program(int rank, int channel) {
    return programs_[static_cast<std::size_t>(rank * channels_ + channel)].get();
  }
  int channels() const { return channels_; }
  std::uint32_t program_index(int rank, int channel) const {
    return static_cast<std::uint32_t>(rank * channels_ + channel);
  }
  // With compute_slowdown: whether compute steps of `channel` are slowed (the compute channel),
  // and the tracker.
  bool slows(int channel) const { return slowdown_ && channel == options_.compute_channel; }
  detail::ComputeSlowdownTracker& slowdown() { return *slowdown_; }
  void own_slot(std::uint32_t slot, Program* owner) {
    if (slot >= slot_owners_.size()) slot_owners_.resize(slot + 1, nullptr);
    slot_owners_[slot] = owner;
  }
  // A communication step of program (rank, channel) started / ended: it holds its call's thread
  // blocks on its rank's GPU meanwhile (the compute channel's own steps hold none).
  void comm_started(int rank, int channel, std::uint8_t protocol) {
    if (!slowdown_ || channel == options_.compute_channel) return;
    slowdown_->comm_started(program_index(rank, channel), rank, protocol);
    move_slowed_ends();
  }
  void comm_ended(int rank, int channel) {
    if (!slowdown_ || channel == options_.compute_channel) return;
    slowdown_->comm_ended(program_index(rank, channel), rank);
    move_slowed_ends();
  }
  Channel& channel(int sender, int receiver, int channel) {
    const std::uint64_t key = (static_cast<std::uint64_t>(sender) << 40) ^
                              (static_cast<std::uint64_t>(receiver) << 16) ^
                              static_cast<std::uint64_t>(channel);
    Channel& found = channels_by_key_[key];
    if (!found.mailbox)
      found.mailbox = sg::Mailbox::by_name(std::to_string(sender) + ">" + std::to_string(receiver) +
                                           "#" + std::to_string(channel));
    return found;
  }
  // A step completed now; false once the run must stop.
  void step_completed(Picoseconds now) {
    last_completion_ = std::max(last_completion_, now);
    if (++steps_done_ % kFlowProgressInterval == 0 && options_.progress &&
        !options_.progress(now, steps_done_)) {
      result_.complete = false;
      report_now_(timing());
    }
  }
  // A program failed (a bug): every program stops at its next step and the run ends.
  void fail(const std::string& what) {
    if (error_.empty()) error_ = what;
  }
  // The schedule asks for something this engine does not model: the run stops, and ends in an
  // InputError at "engine" saying `why`.
  void reject(const std::string& why) {
    if (input_why_.empty()) input_why_ = why;
    fail(why);
  }
  // Bad input found mid-run (a simulated time past what picoseconds count, sim_time.hpp): the
  // run ends in that InputError. The other actors are killed at once: left waiting on their
  // transfers, SimGrid would report a deadlock.
  void reject_input(const InputError& error) {
    if (!input_error_) input_error_ = error;
    fail(error.what());
    sg::Actor::kill_all();
  }
  bool stopped() const { return !error_.empty(); }

private:
  // The slowed compute steps of the ranks whose blocks just changed get their new ends now (a
  // second change at the same instant recomputes them with nothing done in between).
  void move_slowed_ends() {
    if (!slowdown_->has_changes()) return;
    slowdown_->apply_changes(Platform::now(),
                             [this](Picoseconds end, std::uint32_t slot, std::uint32_t generation) {
                               slot_owners_[slot]->slowed_moved(slot, generation, end);
                             });
  }

  CollectiveTiming timing() {
    result_.time = last_completion_;
    result_.peak_flows_per_link = platform_->peak_flows_per_link();
    return std::move(result_);
  }

  const FlowOptions& options_;
  const ReportNow& report_now_;
  int channels_ = 1;
  std::vector<GpuRates> rates_;
  std::vector<ProtocolCost> protocols_;                    // indexed by Step::protocol
  ProxyPosts proxies_{};                                   // each rank's proxy thread
  std::optional<detail::ComputeSlowdownTracker> slowdown_; // with compute_slowdown
  std::vector<Program*> slot_owners_;                      // by tracker slot
  std::unique_ptr<Platform> platform_;
  std::vector<std::unique_ptr<Program>> programs_;
  std::unordered_map<std::uint64_t, Channel> channels_by_key_;
  CollectiveTiming result_;
  Picoseconds last_completion_ = 0;
  std::uint64_t steps_done_ = 0;
  std::string error_;
  std::string input_why_;
  std::optional<InputError> input_error_;
};

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
    // overlapped with the transfer) and the protocol's hop latency.
    if (const Picoseconds after =
            after_arrival(*activity, step, rank_, step.peer, reduce ? bytes : 0);
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
    if (const Picoseconds after =
            after_arrival(*activity, step, step.peer, rank_, reduce ? step.bytes : 0);
        reduce || after > 0)
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

} // namespace

CollectiveTiming run_flow_in_this_process(const topo::Topology& topology, topo::Router& router,
                                          const coll::Schedule& schedule,
                                          const FlowOptions& options, const ReportNow& report_now) {
  return FlowRun(topology, router, schedule, options, report_now).run();
}

} // namespace ddlsim::sim::flow
