// The actors of one flow simulation: a Program per (rank, channel) and the FlowRun that owns
// them, the platform and what they share (channels, proxies, the compute-slowdown tracker).
// Private to the flow engine: flow_run.cpp runs them, flow_program.cpp is a Program's logic.
#pragma once

#include "child_process.hpp"
#include "ddlsim/collectives/step_runner.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/sim_time.hpp"
#include "ddlsim/sim/compute_slowdown_tracker.hpp"
#include "ddlsim/sim/flow/flow_engine.hpp"
#include "ddlsim/sim/gpu_rates.hpp"
#include "ddlsim/sim/protocol_cost.hpp"
#include "platform.hpp"

#include <simgrid/s4u/Activity.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ddlsim::sim::flow::run_detail {
// Steps between progress callbacks (and --max-wall-seconds checks). A SimGrid step costs tens
// of microseconds at scale (its max-min sharing is re-solved as flows start and end), so the
// other engines' kProgressInterval (65,536) left a 4,096-rank run silent for seconds and
// overshot the deadline by 5 s; 1,024 keeps both well under a second.
constexpr std::uint64_t kFlowProgressInterval = 1 << 10;

namespace sg = simgrid::s4u;
using coll::Step;
using coll::StepKind;

inline Picoseconds duration(std::uint64_t bytes, double bytes_per_second) {
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
  // When the receiver's proxy has flushed the k-th transfer (ProxyPosts::flush), by k: set by
  // whichever end sees the arrival first, taken by the other (both see it at one instant).
  std::unordered_map<std::uint64_t, Picoseconds> flushed;
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
  // The same for the `sequence`-th transfer of `channel` when its receiver's proxy flushes it
  // (ProxyPosts::flush; both ends get the same time), or nullopt when it needs no flush: the
  // flush, queued at the arrival with that proxy's posts, then the hop's latency and the
  // reduction of the flushed bytes.
  std::optional<Picoseconds> after_flush(Channel& channel, std::uint64_t sequence, const Slot& step,
                                         int sender, int receiver, std::uint64_t reduce_bytes);
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
          const FlowOptions& options, const ReportNow& report_now);
  // Runs SimGrid to the end; throws what a program met (InputError for bad input).
  CollectiveTiming run();

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

} // namespace ddlsim::sim::flow::run_detail
