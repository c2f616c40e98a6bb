#include "ddlsim/sim/analytic_engine.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/sim/event_queue.hpp"
#include "ddlsim/sim/flow_network.hpp"
#include "ddlsim/sim/gpu_rates.hpp"
#include "ring_window.hpp"

#include <array>
#include <limits>
#include <stdexcept>

namespace ddlsim::sim {
namespace {

using coll::Step;
using coll::StepKind;

struct StepRef {
  std::uint32_t program;
  std::uint32_t index;
};

// What the engine keeps of a step: its timing-relevant fields only (a third of a Step's size),
// because at 16k ranks the windows of all programs no longer fit in cache.
struct Slot {
  std::uint64_t bytes = 0; // for a compute step: its duration in picoseconds
  Picoseconds start = 0;
  std::array<std::uint32_t, coll::kMaxStepDeps> deps{};
  std::int32_t peer = -1;
  StepKind kind = StepKind::send;
  std::uint8_t dep_count = 0;
  std::uint16_t channel = 0;
  bool done = false;
  std::uint16_t wait_channel = coll::kNoWait;
  std::uint32_t wait_step = 0;

  static Slot of(const Step& step) {
    const std::uint64_t bytes = step.kind == StepKind::compute
                                    ? static_cast<std::uint64_t>(std::llround(step.param))
                                    : step.bytes;
    return Slot{bytes,        0,     step.deps,         step.peer,     step.kind, step.dep_count,
                step.channel, false, step.wait_channel, step.wait_step};
  }
  bool is_send() const { return kind == StepKind::send; }
  bool is_receive() const { return kind == StepKind::recv || kind == StepKind::recv_reduce; }
};

// A started send or receive waiting for its partner, kept by the receiving program.
struct Waiting {
  std::int32_t sender; // rank of the sending side
  StepRef step;
  std::uint64_t bytes = 0; // a waiting receive's bytes and kind, for its transfer
  bool reduce = false;
};

// A list of waiting sends or receives in start order: the first entry inline (usually the only
// one), the others in the program's matching *_rest vector, so that matching touches one cache
// line of the program.
struct WaitingList {
  std::uint32_t count = 0;
  Waiting first{};
};

// One (rank, channel) program: the steps pulled from its stream and not yet retired.
struct alignas(64) Program {
  // Matching (rule 2 of step.hpp): sends to this program that found no receive yet, and this
  // program's receives that found no send yet, each in start order. Usually zero or one entry,
  // so a scan beats a map. First, so that both first entries share one cache line.
  WaitingList sends_in;
  WaitingList receives;
  coll::StepStream stream;
  RingWindow<Slot> window; // window[i] is step base + i
  std::uint32_t base = 0;  // every step before base is done
  std::uint32_t next_start = 0;
  bool exhausted = false;
  std::int32_t rank = 0;
  std::uint16_t channel = 0;
  std::vector<Waiting> sends_in_rest; // entries after sends_in.first
  std::vector<Waiting> receives_rest;
  // The path of the last peer this program sent to: rings and trees send to the same peer over
  // and over, and the ECMP choice is a function of (src, dst, channel), so reusing it is exact.
  std::int32_t path_peer = -1;
  const topo::Path* path = nullptr;
  Picoseconds path_latency = 0;
  // Programs of the same rank whose next step waits (Step::wait_channel) for a step of this one;
  // they retry when a step of this program completes. Empty outside training workloads.
  std::vector<std::uint32_t> waiters;
  bool registered_as_waiter = false;
};

// Keeps what on_arrival needs (the receive's kind and rank) so that the arrival does not have to
// load the receiving program's slot, a cache miss at 16k ranks.
struct Transfer {
  StepRef send;
  StepRef recv;
  std::uint64_t bytes;
  const topo::Path* path;
  std::uint64_t recv_bytes;
  std::int32_t recv_rank;
  bool recv_reduce;
};

enum class EventKind : std::uint8_t { local_done, latency_done, reduce_done };
struct Event {
  EventKind kind;
  std::uint32_t a; // program (local_done) or transfer id
  std::uint32_t b; // step index (local_done)
};

std::uint64_t mix(std::uint64_t x) { // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

Picoseconds duration(std::uint64_t bytes, double bytes_per_second) {
  return static_cast<Picoseconds>(
      std::llround(static_cast<double>(bytes) / bytes_per_second * 1e12));
}

class AnalyticRun {
public:
  AnalyticRun(const topo::Topology& topology, topo::Router& router, const coll::Schedule& schedule,
              const AnalyticOptions& options)
      : topology_(topology), router_(router), schedule_(schedule), options_(options),
        flows_(topology) {
    const int ranks = schedule.ranks();
    if (static_cast<std::size_t>(ranks) > topology.gpus().size())
      throw InputError("schedule", "has " + std::to_string(ranks) + " ranks but the topology has " +
                                       std::to_string(topology.gpus().size()) + " GPUs");
    rates_.reserve(static_cast<std::size_t>(ranks));
    for (int r = 0; r < ranks; ++r) {
      const topo::Vertex& gpu = topology.vertex(topology.gpus()[static_cast<std::size_t>(r)]);
      GpuRates rates = gpu_rates(topology.node(gpu.node).gpu_model);
      if (options.reduce_bytes_per_second > 0)
        rates.reduce_bytes_per_second = options.reduce_bytes_per_second;
      if (options.copy_bytes_per_second > 0)
        rates.copy_bytes_per_second = options.copy_bytes_per_second;
      rates_.push_back(rates);
    }
    const int channels = schedule.channels();
    channels_ = static_cast<std::uint32_t>(channels);
    programs_.resize(static_cast<std::size_t>(ranks) * static_cast<std::size_t>(channels));
    for (int r = 0; r < ranks; ++r)
      for (int c = 0; c < channels; ++c) {
        Program& program = programs_[static_cast<std::size_t>(r * channels + c)];
        program.stream = schedule.program(r, c);
        program.rank = r;
        program.channel = static_cast<std::uint16_t>(c);
      }
  }

  CollectiveTiming run() {
    for (std::uint32_t p = 0; p < programs_.size(); ++p) start_ready(p);
    constexpr Picoseconds kNever = std::numeric_limits<Picoseconds>::max();
    std::vector<std::uint64_t> finished;
    while (true) {
      flows_.update_rates(now_);
      const Picoseconds next_event = events_.empty() ? kNever : events_.next_time();
      const Picoseconds next = std::min(next_event, flows_.next_completion());
      if (next == kNever || stopped_) break;
      now_ = next;
      finished.clear();
      flows_.collect_finished(now_, finished);
      pipelined(
          finished.size(), [&](std::size_t i, int level) { prefetch_arrival(finished[i], level); },
          [&](std::size_t i) { on_arrival(static_cast<std::uint32_t>(finished[i])); });
      // Every event at now_ is taken out before any is handled, so that the memory they touch can
      // be prefetched together. The order is the queue's: an event that handling adds at now_ has
      // a later insertion number than all of the batch, so it would have come after them anyway.
      while (!events_.empty() && events_.next_time() == now_) {
        batch_.clear();
        while (!events_.empty() && events_.next_time() == now_) batch_.push_back(events_.pop());
        pipelined(
            batch_.size(), [&](std::size_t i, int level) { prefetch_event(batch_[i], level); },
            [&](std::size_t i) { handle(batch_[i]); });
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
  // Prefetching: at 16k ranks most of the time goes to cache misses on the programs, windows and
  // transfers an instant's events touch, one after another. Prefetching them a fixed distance
  // ahead of the event being handled overlaps those misses; it changes nothing else.
  static void prefetch(const void* address) { __builtin_prefetch(address, 1, 3); }
  void prefetch_step(StepRef ref) {
    const Program& program = programs_[ref.program];
    prefetch(&program.window[ref.index - program.base]);
  }
  // Three levels, each for the item a fixed distance ahead of the one being handled, so that
  // a few dozen misses are in flight at once and what arrives is still in cache when used.
  static constexpr std::size_t kAhead1 = 24, kAhead2 = 16, kAhead3 = 8;
  void prefetch_arrival(std::uint64_t id, int level) {
    const Transfer& transfer = transfers_[id];
    if (level == 1) {
      prefetch(&transfer);
    } else if (!transfer.recv_reduce) {
      if (level == 2) {
        prefetch(&programs_[transfer.recv.program]);
        prefetch(&programs_[transfer.send.program]);
      } else {
        prefetch_step(transfer.recv);
        prefetch_step(transfer.send);
      }
    }
  }
  void prefetch_event(const Event& event, int level) {
    if (event.kind == EventKind::local_done) {
      if (level == 1)
        prefetch(&programs_[event.a]);
      else if (level == 3)
        prefetch_step(StepRef{event.a, event.b});
      return;
    }
    const Transfer& transfer = transfers_[event.a];
    if (level == 1) {
      prefetch(&transfer);
    } else if (event.kind == EventKind::reduce_done) {
      if (level == 2) {
        prefetch(&programs_[transfer.recv.program]);
        prefetch(&programs_[transfer.send.program]);
      } else {
        prefetch_step(transfer.recv);
        prefetch_step(transfer.send);
      }
    } else if (level == 2) {
      prefetch(transfer.path->data());
    } else {
      flows_.prefetch_path(*transfer.path);
    }
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

  Slot& slot(StepRef ref) {
    Program& program = programs_[ref.program];
    return program.window[ref.index - program.base];
  }

  // Starts steps of program p in order while their dependencies are done (rule 1 of step.hpp).
  void start_ready(std::uint32_t p) {
    Program& program = programs_[p];
    while (true) {
      const std::uint32_t index = program.next_start;
      while (program.base + program.window.size() <= index) {
        Step step;
        if (!program.stream.next(step)) {
          program.exhausted = true;
          return;
        }
        program.window.push_back(Slot::of(step));
        ++result_.steps;
      }
      Slot& next = program.window[index - program.base];
      for (std::uint8_t d = 0; d < next.dep_count; ++d) {
        const std::uint32_t dep = next.deps[d];
        if (dep >= program.base && !program.window[dep - program.base].done) return;
      }
      if (next.wait_channel != coll::kNoWait && !wait_done(p, next)) return;
      next.start = now_;
      ++program.next_start;
      begin(next, StepRef{p, index}, program.rank);
    }
  }

  // Whether the cross-program wait of `step` (next in program p) is satisfied; if not, p is
  // registered to retry when the awaited program completes a step.
  bool wait_done(std::uint32_t p, const Slot& step) {
    Program& program = programs_[p];
    if (step.wait_channel >= channels_)
      throw std::logic_error("rank " + std::to_string(program.rank) + " channel " +
                             std::to_string(program.channel) + " waits for channel " +
                             std::to_string(step.wait_channel) + " of a schedule with " +
                             std::to_string(channels_) + " channels");
    Program& awaited = programs_[program_of(program.rank, step.wait_channel)];
    const std::uint32_t k = step.wait_step;
    if (k < awaited.base) return true; // retired, hence done
    if (k - awaited.base < awaited.window.size() && awaited.window[k - awaited.base].done)
      return true;
    if (!program.registered_as_waiter) {
      program.registered_as_waiter = true;
      awaited.waiters.push_back(p);
    }
    return false;
  }

  std::uint32_t program_of(std::int32_t rank, std::uint16_t channel) const {
    return static_cast<std::uint32_t>(rank) * channels_ + channel;
  }

  // Removes and returns the first entry from `sender`, if any.
  static bool take(WaitingList& list, std::vector<Waiting>& rest, std::int32_t sender,
                   Waiting& found) {
    if (list.count == 0) return false;
    if (list.first.sender == sender) {
      found = list.first;
      if (--list.count != 0) {
        list.first = rest.front();
        rest.erase(rest.begin());
      }
      return true;
    }
    for (auto it = rest.begin(); it != rest.end(); ++it) {
      if (it->sender != sender) continue;
      found = *it;
      rest.erase(it);
      --list.count;
      return true;
    }
    return false;
  }
  static void put(WaitingList& list, std::vector<Waiting>& rest, const Waiting& waiting) {
    if (list.count++ == 0)
      list.first = waiting;
    else
      rest.push_back(waiting);
  }

  void begin(const Slot& step, StepRef ref, std::int32_t rank) {
    if (step.is_send()) {
      Program& receiver = programs_[program_of(step.peer, step.channel)];
      Waiting receive;
      if (take(receiver.receives, receiver.receives_rest, rank, receive))
        start_transfer(ref, receive.step, receive.bytes, receive.reduce);
      else
        put(receiver.sends_in, receiver.sends_in_rest, Waiting{rank, ref});
    } else if (step.is_receive()) {
      Program& self = programs_[ref.program];
      const bool reduce = step.kind == StepKind::recv_reduce;
      Waiting send;
      if (take(self.sends_in, self.sends_in_rest, step.peer, send))
        start_transfer(send.step, ref, step.bytes, reduce);
      else
        put(self.receives, self.receives_rest, Waiting{step.peer, ref, step.bytes, reduce});
    } else if (step.kind == StepKind::compute) {
      // A modelled duration: no per-step overhead on top (the workload model includes it).
      events_.push(now_ + static_cast<Picoseconds>(step.bytes),
                   Event{EventKind::local_done, ref.program, ref.index});
    } else {
      const GpuRates& rates = rates_[static_cast<std::size_t>(rank)];
      double rate = rates.codec_bytes_per_second;
      if (step.kind == StepKind::reduce)
        rate = rates.reduce_bytes_per_second;
      else if (step.kind == StepKind::copy || step.kind == StepKind::scale)
        rate = rates.copy_bytes_per_second;
      events_.push(now_ + options_.per_step_overhead + duration(step.bytes, rate),
                   Event{EventKind::local_done, ref.program, ref.index});
    }
  }

  // The ECMP path of (sender, receiver, channel): a seeded hash picks one of the equal-cost paths.
  void choose_path(Program& sender, std::int32_t receiver) {
    const topo::VertexId src = topology_.gpus()[static_cast<std::size_t>(sender.rank)];
    const topo::VertexId dst = topology_.gpus()[static_cast<std::size_t>(receiver)];
    const std::vector<topo::Path>& paths = router_.paths(src, dst);
    if (paths.empty())
      throw InputError("topology", "no route from " + topology_.vertex(src).name + " to " +
                                       topology_.vertex(dst).name);
    const std::uint64_t hash =
        mix(options_.seed ^ mix((static_cast<std::uint64_t>(sender.rank) << 32) ^
                                (static_cast<std::uint64_t>(receiver) << 8) ^ sender.channel));
    sender.path_peer = receiver;
    sender.path = &paths[hash % paths.size()];
    sender.path_latency = 0;
    for (topo::LinkId link : *sender.path) sender.path_latency += topology_.link(link).latency;
  }

  void start_transfer(StepRef send, StepRef receive, std::uint64_t receive_bytes,
                      bool receive_reduce) {
    Program& sender = programs_[send.program];
    const std::int32_t receiver = programs_[receive.program].rank;
    if (sender.path_peer != receiver) choose_path(sender, receiver);
    const topo::Path& path = *sender.path;
    const Picoseconds latency = options_.per_step_overhead + sender.path_latency;
    // Transfer ids are recycled: memory follows the transfers in flight, not the total.
    std::uint32_t id;
    if (free_transfers_.empty()) {
      id = static_cast<std::uint32_t>(transfers_.size());
      transfers_.emplace_back();
    } else {
      id = free_transfers_.back();
      free_transfers_.pop_back();
    }
    const std::uint64_t bytes = slot(send).bytes;
    transfers_[id] = Transfer{send, receive, bytes, &path, receive_bytes, receiver, receive_reduce};
    ++result_.transfers;
    result_.bytes_sent += bytes;
    events_.push(now_ + latency, Event{EventKind::latency_done, id, 0});
  }

  // The bytes of a transfer have all arrived: a plain receive is done; a recv_reduce now reduces.
  void on_arrival(std::uint32_t id) {
    const Transfer& transfer = transfers_[id];
    if (transfer.recv_reduce) {
      const double rate =
          rates_[static_cast<std::size_t>(transfer.recv_rank)].reduce_bytes_per_second;
      events_.push(now_ + duration(transfer.recv_bytes, rate),
                   Event{EventKind::reduce_done, id, 0});
      return;
    }
    finish_transfer(id);
  }

  void finish_transfer(std::uint32_t id) {
    const Transfer transfer = transfers_[id];
    free_transfers_.push_back(id);
    complete(transfer.recv);
    complete(transfer.send);
  }

  void handle(const Event& event) {
    switch (event.kind) {
    case EventKind::local_done:
      complete(StepRef{event.a, event.b});
      break;
    case EventKind::latency_done: {
      const Transfer& transfer = transfers_[event.a];
      flows_.start(*transfer.path, static_cast<double>(transfer.bytes), event.a, now_);
      break;
    }
    case EventKind::reduce_done:
      finish_transfer(event.a);
      break;
    }
  }

  void complete(StepRef ref) {
    Program& program = programs_[ref.program];
    Slot& done = slot(ref);
    done.done = true;
    last_completion_ = now_;
    if (++steps_done_ % kProgressInterval == 0 && options_.progress &&
        !options_.progress(now_, steps_done_))
      stopped_ = true;
    if (options_.record_steps)
      result_.steps_recorded.push_back(
          StepRecord{program.rank, program.channel, done.kind, done.peer,
                     done.kind == StepKind::compute ? 0 : done.bytes, done.start, now_});
    while (!program.window.empty() && program.window.front().done) {
      program.window.pop_front();
      ++program.base;
    }
    start_ready(ref.program);
    if (!program.waiters.empty()) {
      std::vector<std::uint32_t> waiters;
      waiters.swap(program.waiters);
      for (std::uint32_t w : waiters) {
        programs_[w].registered_as_waiter = false;
        start_ready(w);
      }
    }
  }

  void check_finished() const {
    for (const Program& program : programs_) {
      if (program.exhausted && program.window.empty()) continue;
      const std::uint32_t stuck = program.next_start;
      std::string what = "schedule deadlocked: rank " + std::to_string(program.rank) + " channel " +
                         std::to_string(program.channel) + " cannot finish step " +
                         std::to_string(stuck);
      if (stuck >= program.base && stuck - program.base < program.window.size()) {
        const Slot& step = program.window[stuck - program.base];
        what += " (" + std::string(coll::to_string(step.kind)) + " peer " +
                std::to_string(step.peer) + ")";
      }
      throw std::logic_error(what);
    }
  }

  const topo::Topology& topology_;
  topo::Router& router_;
  const coll::Schedule& schedule_;
  const AnalyticOptions& options_;
  FlowNetwork flows_;
  EventQueue<Event> events_;
  std::vector<GpuRates> rates_;
  std::vector<Program> programs_;
  std::vector<Transfer> transfers_;
  std::vector<std::uint32_t> free_transfers_;
  std::vector<Event> batch_;
  std::uint32_t channels_ = 1;
  Picoseconds now_ = 0;
  Picoseconds last_completion_ = 0;
  std::uint64_t steps_done_ = 0;
  bool stopped_ = false;
  CollectiveTiming result_;
};

} // namespace

CollectiveTiming simulate_analytic(const topo::Topology& topology, topo::Router& router,
                                   const coll::Schedule& schedule, const AnalyticOptions& options) {
  return AnalyticRun(topology, router, schedule, options).run();
}

} // namespace ddlsim::sim
