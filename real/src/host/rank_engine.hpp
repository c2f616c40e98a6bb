// RankEngine: one rank of the host backend. Runs every channel program of its rank in one event
// loop over non-blocking sockets to its peers (rules of collectives/step.hpp, wire protocol in
// host_backend.hpp: DATA after the receiver's CTS, ACK when the bytes are in).
#pragma once

#include "ddlsim/real/host_backend.hpp"

#include "transport.hpp"

#include <array>
#include <atomic>
#include <deque>
#include <poll.h>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddlsim::real::host {

// A failure of this rank: the message names the rank, the step and the peer.
struct RankFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Thrown by an injected crash in thread mode: the rank vanishes without reporting.
struct InjectedCrash {};

// input, output and scratch of one rank, in the call's dtype encoding.
struct RankBuffers {
  std::array<std::vector<std::byte>, 3> data;
  std::span<std::byte> bytes(const coll::BufferRange& range) {
    if (range.bytes == 0) return {};
    return {data[std::size_t(range.buffer)].data() + range.offset, range.bytes};
  }
};

struct EngineOptions {
  std::chrono::milliseconds timeout{10000};
  HostFault fault;                          // applies when fault.rank is this rank
  bool in_process = true;                   // crash = _exit (process) or InjectedCrash (thread)
  const std::atomic<bool>* abort = nullptr; // set by the coordinator to stop a thread rank
  // How long to poll without sleeping before a blocking wait. A sleeping rank pays a wake-up
  // per message; spinning pays only where each rank has a core of its own, so the runner sets
  // it then and leaves it 0 when ranks outnumber cores (Open MPI likewise busy-polls unless
  // oversubscribed).
  std::chrono::microseconds spin{0};
};

class RankEngine {
public:
  // Takes ownership of `sockets` (one per rank, -1 for itself).
  RankEngine(const coll::Schedule& schedule, int rank, std::vector<int> sockets,
             RankBuffers& buffers, const EngineOptions& options);
  ~RankEngine();
  RankEngine(const RankEngine&) = delete;
  RankEngine& operator=(const RankEngine&) = delete;

  // Runs the rank's programs once; fills `timeline` (when not null) with every step's start and
  // end relative to the iteration's start. Throws RankFailure.
  void run_once(std::vector<StepTiming>* timeline);
  // Flushes what peers still need, then closes every connection in order (half-close, read to
  // end of stream), bounded by the timeout. Throws RankFailure.
  void finish();
  // Closes every socket at once (an injected crash of a thread rank).
  void drop_connections();

  std::uint64_t steps_completed() const { return steps_completed_; }
  std::uint64_t bytes_sent() const { return bytes_sent_; }

private:
  struct Ref {
    std::uint32_t program = 0, index = 0;
  };
  struct Program {
    int channel = 0;
    coll::StepStream stream;
    std::vector<coll::Step> steps; // started, in order
    std::vector<std::uint8_t> done;
    std::vector<std::int64_t> start_ns, end_ns;
    coll::Step next{};
    bool has_next = false, ended = false, queued = false;
    std::uint32_t unfinished = 0;
  };
  // The state of one (peer, channel) pair, kept across iterations.
  struct ChannelLink {
    std::uint32_t credits = 0;     // CTS received and not yet used by a send
    std::deque<Ref> waiting_sends; // started sends without a CTS yet
    std::deque<Ref> unacked;       // sends on the wire, completed by the peer's ACK
    std::deque<Ref> posted;        // receives whose CTS went out, in order
    std::uint32_t data_out = 0, data_in = 0, cts_out = 0, cts_in = 0, ack_out = 0, ack_in = 0;
  };
  struct Header {
    std::uint8_t type = 0;
    std::uint8_t pad = 0;
    std::uint16_t channel = 0;
    std::uint32_t seq = 0;
    std::uint64_t bytes = 0;
  };
  static_assert(sizeof(Header) == 16);
  struct OutItem {
    Header header;
    const std::byte* payload = nullptr;
    std::uint64_t sent = 0; // of sizeof(Header) + header.bytes (payload only for DATA)
  };
  struct Peer {
    int fd = -1;
    std::vector<ChannelLink> channels;
    std::deque<OutItem> out;
    // Incoming message being parsed.
    std::array<std::byte, sizeof(Header)> header_bytes{};
    std::size_t header_got = 0;
    bool in_payload = false;
    Header header;
    std::byte* payload = nullptr;
    std::uint64_t payload_got = 0, reduced = 0;
    std::vector<std::byte> staging; // recv_reduce: the incoming operand (or a window of it)
    bool windowed = false;          // staging is a window, reduced as it fills (not adasum)
    bool eof = false;
    bool half_closed = false;    // finish() sent our end of stream
    std::uint64_t low_water = 1; // the socket's SO_RCVLOWAT
  };

  void advance(std::uint32_t program);
  // Rule 1's cross-program wait: whether step `wait_step` of channel `wait_channel` completed.
  bool wait_done(const coll::Step& step) const;
  // Completes the compute steps whose time is up; the earliest pending end, or max().
  Clock::time_point finish_computes();
  void drain_ready();
  void start(std::uint32_t program, std::uint32_t index);
  void complete(Ref ref);
  void inject_fault(const Ref& at);
  void pump_sends(int peer, int channel);
  void enqueue(int peer, std::uint8_t type, int channel, std::uint32_t seq,
               const std::byte* payload, std::uint64_t bytes);
  bool pump_io(int wait_ms);
  // Fills wake_, per peer: how many incoming bytes are worth waking up for (SO_RCVLOWAT): 0
  // when nothing from it unblocks a step now, 1 for any message, the rest of a payload when only
  // that matters.
  void update_wake_bytes();
  bool read_peer(int peer);
  bool write_peer(int peer);
  void consume(int peer, const std::byte* data, std::size_t size);
  void on_header(int peer);
  // Where the next payload bytes of this peer's incoming DATA go, and how many fit there.
  std::span<std::byte> payload_room(Peer& peer);
  void on_payload_progress(int peer);
  void finish_receive(int peer);
  bool all_done() const;
  // Whether a step of ours still waits for something from that peer.
  bool needs(int peer_rank) const;
  void flush_acks(Clock::time_point last_progress);
  [[noreturn]] void fail(const std::string& what) const;
  std::string where(const Ref& ref) const;
  std::string stuck() const;
  std::int64_t now_ns() const;

  const coll::Schedule& schedule_;
  coll::CollectiveCall call_;
  int rank_ = 0, channels_ = 0;
  RankBuffers& buffers_;
  EngineOptions options_;
  std::vector<Peer> peers_;
  std::vector<Program> programs_;
  std::deque<std::uint32_t> ready_;
  // Compute steps in progress: they end at a time, while the loop keeps moving bytes (a GPU
  // computes while the NIC transfers).
  std::vector<std::pair<Clock::time_point, Ref>> computing_;
  std::vector<std::byte> inbox_;
  // pump_io's per-call state, kept so that the loop allocates nothing per wake-up.
  std::vector<pollfd> poll_fds_;
  std::vector<int> poll_owners_;
  std::vector<std::uint64_t> wake_;
  Clock::time_point iteration_start_;
  std::uint64_t steps_started_ = 0, steps_completed_ = 0, bytes_sent_ = 0;
};

} // namespace ddlsim::real::host
