#include "rank_engine.hpp"

#include "host_kernels.hpp"
#include "step_rules.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <thread>
#include <unistd.h>

namespace ddlsim::real::host {

namespace {

enum MessageType : std::uint8_t { kData = 1, kClearToSend = 2, kAck = 3 };

constexpr std::size_t kInboxBytes = 256 << 10;
// Payload reads of at least this size go straight into the destination, not through the inbox.
constexpr std::uint64_t kDirectReadBytes = 64 << 10;
// Bounds on the work of one wake-up per peer, so that no socket starves the others.
constexpr int kReadsPerWakeup = 32;
constexpr int kWritesPerWakeup = 32;
constexpr int kIovecs = 64;
// A streamed recv_reduce lands in a staging window of this size and is reduced from there while
// the window is still in the core's L2 cache (a whole-payload staging buffer of a few MiB is
// not: the reduction then reads it back from memory).
constexpr std::uint64_t kReduceWindowBytes = 256 << 10;
// Largest SO_RCVLOWAT asked for (the kernel caps it at half the receive buffer anyway).
constexpr std::uint64_t kMaxWakeBytes = 4 << 20;

std::string kind_name(std::uint8_t type) {
  return type == kData ? "DATA" : type == kClearToSend ? "CTS" : type == kAck ? "ACK" : "?";
}

} // namespace

RankEngine::RankEngine(const coll::Schedule& schedule, int rank, std::vector<int> sockets,
                       RankBuffers& buffers, const EngineOptions& options)
    : schedule_(schedule), call_(schedule.call()), rank_(rank), channels_(schedule.channels()),
      buffers_(buffers), options_(options), inbox_(kInboxBytes) {
  peers_.resize(sockets.size());
  for (std::size_t p = 0; p < sockets.size(); ++p) {
    peers_[p].fd = sockets[p];
    peers_[p].channels.resize(std::size_t(channels_));
  }
}

RankEngine::~RankEngine() {
  drop_connections();
}

void RankEngine::drop_connections() {
  for (Peer& peer : peers_)
    if (peer.fd >= 0) {
      ::close(peer.fd);
      peer.fd = -1;
    }
}

std::int64_t RankEngine::now_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - iteration_start_)
      .count();
}

void RankEngine::run_once(std::vector<StepTiming>* timeline) {
  programs_.clear();
  programs_.resize(std::size_t(channels_));
  ready_.clear();
  computing_.clear();
  iteration_start_ = Clock::now();
  for (int c = 0; c < channels_; ++c) {
    programs_[std::size_t(c)].channel = c;
    programs_[std::size_t(c)].stream = schedule_.program(rank_, c);
    programs_[std::size_t(c)].queued = true;
    ready_.push_back(std::uint32_t(c));
  }
  drain_ready();
  auto last_progress = Clock::now();
  while (!all_done()) {
    if (options_.abort && options_.abort->load()) fail("stopped by the coordinator");
    const auto next_compute_end = finish_computes();
    drain_ready();
    if (all_done()) break;
    // A compute step in progress is progress until it ends.
    if (next_compute_end != Clock::time_point::max())
      last_progress = std::max(last_progress, Clock::now());
    const auto limit = last_progress + options_.timeout;
    const auto wake = std::min(limit, next_compute_end);
    const bool progress = pump_io(millis_until(wake, 100));
    drain_ready();
    if (progress) {
      last_progress = Clock::now();
    } else if (Clock::now() >= limit) {
      fail("no progress for " + std::to_string(options_.timeout.count()) + " ms: " + stuck());
    }
  }
  // What peers still need from us is only acknowledgements: hand them to the kernel now, since
  // between iterations (at the barrier) nobody services the sockets.
  flush_acks(last_progress);
  if (!timeline) return;
  timeline->clear();
  for (const Program& program : programs_)
    for (std::size_t i = 0; i < program.steps.size(); ++i) {
      const coll::Step& step = program.steps[i];
      timeline->push_back({std::uint16_t(program.channel), std::uint32_t(i), step.kind, step.peer,
                           step.bytes, program.start_ns[i], program.end_ns[i]});
    }
}

void RankEngine::flush_acks(Clock::time_point last_progress) {
  for (;;) {
    bool pending = false;
    for (std::size_t p = 0; p < peers_.size(); ++p)
      if (peers_[p].fd >= 0 && !peers_[p].out.empty()) {
        if (write_peer(int(p))) last_progress = Clock::now();
        pending |= !peers_[p].out.empty();
      }
    if (!pending) return;
    if (Clock::now() - last_progress > options_.timeout)
      fail("could not hand the last acknowledgements to the kernel within " +
           std::to_string(options_.timeout.count()) + " ms");
    pump_io(10);
  }
}

bool RankEngine::needs(int peer_rank) const {
  const Peer& peer = peers_[std::size_t(peer_rank)];
  if (peer.in_payload || peer.header_got > 0) return true;
  for (const ChannelLink& link : peer.channels)
    if (!link.waiting_sends.empty() || !link.unacked.empty() || !link.posted.empty()) return true;
  return false;
}

bool RankEngine::all_done() const {
  for (const Program& program : programs_)
    if (!program.ended || program.has_next || program.unfinished > 0) return false;
  return true;
}

void RankEngine::drain_ready() {
  // Bounded: every pass issues at least one step or empties the queue, and steps are finite.
  while (!ready_.empty()) {
    const std::uint32_t id = ready_.front();
    ready_.pop_front();
    programs_[id].queued = false;
    advance(id);
  }
}

void RankEngine::advance(std::uint32_t id) {
  Program& program = programs_[id];
  for (;;) {
    if (!program.has_next) {
      if (program.ended) return;
      try {
        if (!program.stream.next(program.next)) {
          program.ended = true;
          return;
        }
      } catch (const std::exception& error) {
        fail("ch " + std::to_string(program.channel) +
             ": the schedule's generator failed: " + error.what());
      }
      program.has_next = true;
      const coll::detail::StepPlace place{rank_, program.channel,
                                          std::uint32_t(program.steps.size())};
      const coll::detail::RankBuffers sizes{buffers_.data[0].size(), buffers_.data[1].size(),
                                            buffers_.data[2].size()};
      const std::string problem =
          coll::detail::step_problem(program.next, place, schedule_.ranks(), sizes, call_.dtype);
      if (!problem.empty())
        fail(coll::detail::to_string(place) + " (" + coll::detail::describe(program.next) +
             "): " + problem);
    }
    for (std::size_t d = 0; d < program.next.dep_count; ++d)
      if (!program.done[program.next.deps[d]]) return; // queued again when the dep completes
    if (program.next.has_wait() && !wait_done(program.next)) return; // likewise
    program.has_next = false;
    const auto index = std::uint32_t(program.steps.size());
    program.steps.push_back(program.next);
    program.done.push_back(0);
    program.start_ns.push_back(now_ns());
    program.end_ns.push_back(0);
    ++program.unfinished;
    start(id, index);
  }
}

void RankEngine::start(std::uint32_t id, std::uint32_t index) {
  const Ref ref{id, index};
  if (options_.fault.kind != HostFault::Kind::none && options_.fault.rank == rank_ &&
      options_.fault.step == steps_started_)
    inject_fault(ref);
  ++steps_started_;
  const coll::Step& step = programs_[id].steps[index];
  if (step.kind == coll::StepKind::compute) {
    const auto duration = std::chrono::nanoseconds(std::llround(step.param / 1000));
    computing_.push_back({Clock::now() + duration, ref});
    return;
  }
  if (step.is_local()) {
    try {
      run_local_step(step, call_.reduction, call_.dtype, buffers_.bytes(step.src),
                     buffers_.bytes(step.aux), buffers_.bytes(step.dst));
    } catch (const std::runtime_error& error) {
      fail(where(ref) + ": " + error.what());
    }
    return complete(ref);
  }
  Peer& peer = peers_[std::size_t(step.peer)];
  if (peer.eof)
    fail(where(ref) + ": rank " + std::to_string(step.peer) +
         " closed its connection before this step (that rank died or stopped)");
  ChannelLink& link = peer.channels[step.channel];
  if (step.is_send()) {
    link.waiting_sends.push_back(ref);
    pump_sends(step.peer, step.channel);
  } else {
    link.posted.push_back(ref);
    enqueue(step.peer, kClearToSend, step.channel, link.cts_out++, nullptr, 0);
  }
}

void RankEngine::inject_fault(const Ref& at) {
  if (options_.fault.kind == HostFault::Kind::crash) {
    if (options_.in_process) ::_exit(99); // as abrupt as a real crash: no report, no flush
    drop_connections();
    throw InjectedCrash{};
  }
  // Stall: stay connected but move nothing, until the coordinator stops us (bounded anyway).
  const auto until = Clock::now() + 4 * options_.timeout;
  while (Clock::now() < until && !(options_.abort && options_.abort->load()))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  fail(where(at) + ": stalled by fault injection");
}

bool RankEngine::wait_done(const coll::Step& step) const {
  if (step.wait_channel >= programs_.size())
    fail("a step waits for channel " + std::to_string(step.wait_channel) +
         " but the schedule has " + std::to_string(programs_.size()) + " channels");
  const Program& other = programs_[step.wait_channel];
  return step.wait_step < other.done.size() && other.done[step.wait_step];
}

Clock::time_point RankEngine::finish_computes() {
  const auto now = Clock::now();
  auto next = Clock::time_point::max();
  // Complete in order of end time (ties by start), so that timelines stay ordered.
  std::sort(computing_.begin(), computing_.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::size_t done = 0;
  while (done < computing_.size() && computing_[done].first <= now)
    complete(computing_[done++].second);
  computing_.erase(computing_.begin(), computing_.begin() + std::ptrdiff_t(done));
  if (!computing_.empty()) next = computing_.front().first;
  return next;
}

void RankEngine::complete(Ref ref) {
  Program& program = programs_[ref.program];
  program.done[ref.index] = 1;
  program.end_ns[ref.index] = now_ns();
  --program.unfinished;
  ++steps_completed_;
  const auto enqueue = [this](std::uint32_t id) {
    if (programs_[id].queued) return;
    programs_[id].queued = true;
    ready_.push_back(id);
  };
  enqueue(ref.program);
  // Programs of this rank whose next step waits for this channel may go on now.
  for (std::uint32_t other = 0; other < programs_.size(); ++other) {
    const Program& waiter = programs_[other];
    if (waiter.has_next && waiter.next.has_wait() &&
        waiter.next.wait_channel == std::uint32_t(program.channel))
      enqueue(other);
  }
}

void RankEngine::pump_sends(int peer_rank, int channel) {
  ChannelLink& link = peers_[std::size_t(peer_rank)].channels[std::size_t(channel)];
  while (link.credits > 0 && !link.waiting_sends.empty()) {
    const Ref ref = link.waiting_sends.front();
    link.waiting_sends.pop_front();
    --link.credits;
    const coll::Step& step = programs_[ref.program].steps[ref.index];
    enqueue(peer_rank, kData, channel, link.data_out++, buffers_.bytes(step.src).data(),
            step.bytes);
    bytes_sent_ += step.bytes;
    link.unacked.push_back(ref);
  }
}

void RankEngine::enqueue(int peer_rank, std::uint8_t type, int channel, std::uint32_t seq,
                         const std::byte* payload, std::uint64_t bytes) {
  OutItem item;
  item.header.type = type;
  item.header.channel = std::uint16_t(channel);
  item.header.seq = seq;
  item.header.bytes = bytes;
  item.payload = payload;
  peers_[std::size_t(peer_rank)].out.push_back(item);
}

bool RankEngine::pump_io(int wait_ms) {
  std::vector<pollfd>& fds = poll_fds_;
  std::vector<int>& owners = poll_owners_;
  fds.clear();
  owners.clear();
  bool progress = false;
  // Write first without waiting: most sockets have room.
  for (std::size_t p = 0; p < peers_.size(); ++p)
    if (peers_[p].fd >= 0 && !peers_[p].out.empty()) progress |= write_peer(int(p));
  // Sleep only on the sockets whose next message unblocks a step: a wake-up costs a wait in the
  // run queue, which on a loaded machine is most of a step's time (the rest are read in passing).
  update_wake_bytes();
  const std::vector<std::uint64_t>& wake = wake_;
  for (std::size_t p = 0; p < peers_.size(); ++p) {
    if (peers_[p].fd < 0) continue;
    short events = peers_[p].eof || wake[p] == 0 ? 0 : POLLIN;
    if (events && wake[p] != peers_[p].low_water) {
      const int bytes = int(wake[p]);
      if (::setsockopt(peers_[p].fd, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof bytes) == 0)
        peers_[p].low_water = wake[p];
    }
    if (!peers_[p].out.empty()) events |= POLLOUT;
    if (events == 0) continue;
    fds.push_back({peers_[p].fd, events, 0});
    owners.push_back(int(p));
  }
  if (fds.empty()) return progress;
  int n = ::poll(fds.data(), fds.size(), 0);
  if (n == 0 && !progress && wait_ms > 0) {
    const auto spin_until = Clock::now() + options_.spin;
    while (n == 0 && Clock::now() < spin_until) n = ::poll(fds.data(), fds.size(), 0);
    if (n == 0) n = ::poll(fds.data(), fds.size(), wait_ms);
  }
  if (n < 0) {
    if (errno == EINTR) return progress;
    fail(std::string("poll: ") + std::strerror(errno));
  }
  for (std::size_t i = 0; i < fds.size(); ++i) {
    if (fds[i].revents & (POLLIN | POLLERR | POLLHUP)) progress |= read_peer(owners[i]);
    if (fds[i].revents & POLLOUT) progress |= write_peer(owners[i]);
  }
  // Awake anyway: take what the other sockets hold (acknowledgements, clears to send).
  for (std::size_t p = 0; p < peers_.size(); ++p)
    if (peers_[p].fd >= 0 && !peers_[p].eof && wake[p] == 0) progress |= read_peer(int(p));
  return progress;
}

void RankEngine::update_wake_bytes() {
  std::vector<std::uint64_t>& wake = wake_;
  wake.assign(peers_.size(), 0);
  bool any = false;
  // Whether a step waits (rule 1 or a dependency) for this send's completion.
  const auto blocks = [this](const Ref& ref) {
    for (const Program& waiter : programs_) {
      if (!waiter.has_next) continue;
      const coll::Step& next = waiter.next;
      if (&waiter == &programs_[ref.program])
        for (std::size_t d = 0; d < next.dep_count; ++d)
          if (next.deps[d] == ref.index) return true;
      if (next.has_wait() && next.wait_channel == std::uint32_t(programs_[ref.program].channel) &&
          next.wait_step == ref.index)
        return true;
    }
    return false;
  };
  for (std::size_t p = 0; p < peers_.size(); ++p) {
    const Peer& peer = peers_[p];
    bool control = false; // a CTS or ACK from this peer would unblock a step
    bool data = peer.header_got > 0;
    for (const ChannelLink& link : peer.channels) {
      control = control || !link.waiting_sends.empty() ||
                std::any_of(link.unacked.begin(), link.unacked.end(), blocks);
      data = data || !link.posted.empty();
    }
    if (control || (data && !peer.in_payload)) {
      wake[p] = 1;
    } else if (peer.in_payload) {
      // Only the rest of this payload matters: sleep until all of it is in (the kernel still
      // wakes us early when its receive buffer fills).
      wake[p] = std::min<std::uint64_t>(peer.header.bytes - peer.payload_got, kMaxWakeBytes);
    }
    any = any || wake[p] > 0;
  }
  // Nothing blocks on a particular peer (the last acknowledgements, between iterations): all are.
  if (!any) std::fill(wake.begin(), wake.end(), 1);
}

bool RankEngine::write_peer(int peer_rank) {
  Peer& peer = peers_[std::size_t(peer_rank)];
  bool progress = false;
  for (int round = 0; round < kWritesPerWakeup && !peer.out.empty(); ++round) {
    iovec iov[kIovecs];
    int count = 0;
    for (auto it = peer.out.begin(); it != peer.out.end() && count + 2 <= kIovecs; ++it) {
      const std::uint64_t payload = it->header.type == kData ? it->header.bytes : 0;
      if (it->sent < sizeof(Header)) {
        iov[count++] = {reinterpret_cast<char*>(&it->header) + it->sent, sizeof(Header) - it->sent};
        if (payload > 0) iov[count++] = {const_cast<std::byte*>(it->payload), payload};
      } else {
        const std::uint64_t done = it->sent - sizeof(Header);
        iov[count++] = {const_cast<std::byte*>(it->payload) + done, payload - done};
      }
    }
    msghdr message{};
    message.msg_iov = iov;
    message.msg_iovlen = std::size_t(count);
    const ssize_t n = ::sendmsg(peer.fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
      fail("sending to rank " + std::to_string(peer_rank) + " failed (" + std::strerror(errno) +
           ", rank " + std::to_string(peer_rank) + " died or closed): " + stuck());
    }
    progress = n > 0;
    auto written = std::uint64_t(n);
    while (written > 0) {
      OutItem& item = peer.out.front();
      const std::uint64_t total =
          sizeof(Header) + (item.header.type == kData ? item.header.bytes : 0);
      const std::uint64_t take = std::min(written, total - item.sent);
      item.sent += take;
      written -= take;
      if (item.sent == total) peer.out.pop_front();
    }
  }
  return progress;
}

bool RankEngine::read_peer(int peer_rank) {
  Peer& peer = peers_[std::size_t(peer_rank)];
  bool progress = false;
  for (int round = 0; round < kReadsPerWakeup && peer.fd >= 0 && !peer.eof; ++round) {
    const std::uint64_t remaining = peer.in_payload ? peer.header.bytes - peer.payload_got : 0;
    ssize_t n;
    if (remaining >= kDirectReadBytes) {
      const std::span<std::byte> room = payload_room(peer);
      n = ::recv(peer.fd, room.data(), room.size(), MSG_DONTWAIT);
      if (n > 0) {
        peer.payload_got += std::uint64_t(n);
        on_payload_progress(peer_rank);
        progress = true;
        continue;
      }
    } else {
      n = ::recv(peer.fd, inbox_.data(), inbox_.size(), MSG_DONTWAIT);
      if (n > 0) {
        consume(peer_rank, inbox_.data(), std::size_t(n));
        progress = true;
        continue;
      }
    }
    if (n == 0) {
      // A peer that finished all its steps closes its end: harmless unless we still need it.
      peer.eof = true;
      if (needs(peer_rank))
        fail("the connection to rank " + std::to_string(peer_rank) +
             " closed (that rank died or stopped): " + stuck());
      break;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
    fail("receiving from rank " + std::to_string(peer_rank) + " failed (" + std::strerror(errno) +
         ", that rank died or closed): " + stuck());
  }
  return progress;
}

void RankEngine::consume(int peer_rank, const std::byte* data, std::size_t size) {
  Peer& peer = peers_[std::size_t(peer_rank)];
  while (size > 0) {
    if (peer.in_payload) {
      const std::span<std::byte> room = payload_room(peer);
      const std::uint64_t take = std::min<std::uint64_t>(size, room.size());
      std::memcpy(room.data(), data, take);
      peer.payload_got += take;
      data += take;
      size -= take;
      on_payload_progress(peer_rank);
      continue;
    }
    const std::size_t take = std::min(size, sizeof(Header) - peer.header_got);
    std::memcpy(peer.header_bytes.data() + peer.header_got, data, take);
    peer.header_got += take;
    data += take;
    size -= take;
    if (peer.header_got == sizeof(Header)) {
      peer.header_got = 0;
      std::memcpy(&peer.header, peer.header_bytes.data(), sizeof(Header));
      on_header(peer_rank);
    }
  }
}

void RankEngine::on_header(int peer_rank) {
  Peer& peer = peers_[std::size_t(peer_rank)];
  const Header& h = peer.header;
  const std::string from = "rank " + std::to_string(peer_rank);
  if (h.channel >= channels_ || h.type < kData || h.type > kAck)
    fail(from + " sent a malformed message (type " + std::to_string(h.type) + ", channel " +
         std::to_string(h.channel) + ")");
  ChannelLink& link = peer.channels[h.channel];
  const auto expect_seq = [&](std::uint32_t& counter) {
    if (h.seq != counter)
      fail(from + " sent " + kind_name(h.type) + " #" + std::to_string(h.seq) + " on ch " +
           std::to_string(h.channel) + ", expected #" + std::to_string(counter));
    ++counter;
  };
  if (h.type == kClearToSend) {
    expect_seq(link.cts_in);
    ++link.credits;
    return pump_sends(peer_rank, h.channel);
  }
  if (h.type == kAck) {
    expect_seq(link.ack_in);
    if (link.unacked.empty()) fail(from + " acknowledged a send this rank never made");
    const Ref ref = link.unacked.front();
    link.unacked.pop_front();
    return complete(ref);
  }
  expect_seq(link.data_in);
  if (link.posted.empty())
    fail(from + " sent data on ch " + std::to_string(h.channel) +
         " before this rank cleared it to send");
  const Ref ref = link.posted.front();
  const coll::Step& step = programs_[ref.program].steps[ref.index];
  if (step.bytes != h.bytes)
    fail(where(ref) + ": " + from + " sent " + std::to_string(h.bytes) + " B, the step expects " +
         std::to_string(step.bytes) + " B");
  peer.in_payload = true;
  peer.payload_got = 0;
  peer.reduced = 0;
  peer.windowed = false;
  if (step.kind == coll::StepKind::recv) {
    peer.payload = buffers_.bytes(step.dst).data();
  } else {
    peer.windowed = call_.reduction != coll::Reduction::adasum; // adasum needs all of it
    const std::uint64_t staging =
        peer.windowed ? std::min(step.bytes, kReduceWindowBytes) : step.bytes;
    if (peer.staging.size() < staging) peer.staging.resize(staging);
    peer.payload = peer.staging.data();
  }
  on_payload_progress(peer_rank);
}

std::span<std::byte> RankEngine::payload_room(Peer& peer) {
  const std::uint64_t remaining = peer.header.bytes - peer.payload_got;
  if (!peer.windowed) return {peer.payload + peer.payload_got, remaining};
  const std::uint64_t held = peer.payload_got - peer.reduced;
  return {peer.payload + held, std::min(remaining, std::uint64_t(peer.staging.size()) - held)};
}

void RankEngine::on_payload_progress(int peer_rank) {
  Peer& peer = peers_[std::size_t(peer_rank)];
  const Ref ref = peer.channels[peer.header.channel].posted.front();
  const coll::Step& step = programs_[ref.program].steps[ref.index];
  if (step.kind == coll::StepKind::recv_reduce && call_.reduction != coll::Reduction::adasum) {
    // Reduce what has arrived, whole elements at a time, while it is still in cache.
    const std::uint64_t e = coll::element_size(call_.dtype);
    // The window holds payload bytes [reduced, payload_got) from its start.
    const std::uint64_t upto = peer.payload_got / e * e;
    if (upto > peer.reduced) {
      const std::uint64_t from = peer.reduced, count = upto - from;
      combine(call_.reduction, call_.dtype, buffers_.bytes(step.src).subspan(from, count),
              std::span<const std::byte>(peer.staging).first(count),
              buffers_.bytes(step.dst).subspan(from, count));
      // A partial element waits at the window's start for the rest of its bytes.
      std::memmove(peer.staging.data(), peer.staging.data() + count, peer.payload_got - upto);
      peer.reduced = upto;
    }
  }
  if (peer.payload_got == peer.header.bytes) finish_receive(peer_rank);
}

void RankEngine::finish_receive(int peer_rank) {
  Peer& peer = peers_[std::size_t(peer_rank)];
  ChannelLink& link = peer.channels[peer.header.channel];
  const Ref ref = link.posted.front();
  const coll::Step& step = programs_[ref.program].steps[ref.index];
  if (step.kind == coll::StepKind::recv_reduce && call_.reduction == coll::Reduction::adasum)
    combine(call_.reduction, call_.dtype, buffers_.bytes(step.src), peer.staging,
            buffers_.bytes(step.dst));
  peer.in_payload = false;
  link.posted.pop_front();
  enqueue(peer_rank, kAck, peer.header.channel, link.ack_out++, nullptr, 0);
  complete(ref);
}

void RankEngine::finish() {
  // Everything peers still need from us is queued: flush it, then half-close and read to the end
  // of every stream, so that no connection is torn down while a peer still reads from it.
  auto last_progress = Clock::now();
  for (;;) {
    bool pending = false;
    for (std::size_t p = 0; p < peers_.size(); ++p) {
      Peer& peer = peers_[p];
      if (peer.fd < 0) continue;
      if (!peer.out.empty()) {
        if (write_peer(int(p))) last_progress = Clock::now();
      }
      if (!peer.out.empty()) {
        pending = true;
        continue;
      }
      if (!peer.half_closed) {
        ::shutdown(peer.fd, SHUT_WR);
        peer.half_closed = true;
      }
      char sink[256];
      const ssize_t n = ::recv(peer.fd, sink, sizeof sink, MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        ::close(peer.fd);
        peer.fd = -1;
        last_progress = Clock::now();
        continue;
      }
      pending = true;
    }
    if (!pending) return;
    if (Clock::now() - last_progress > options_.timeout)
      fail("closing the connections: a peer did not close its end within " +
           std::to_string(options_.timeout.count()) + " ms");
    std::vector<pollfd> fds;
    for (const Peer& peer : peers_)
      if (peer.fd >= 0) fds.push_back({peer.fd, short(peer.out.empty() ? POLLIN : POLLOUT), 0});
    ::poll(fds.data(), fds.size(), 100);
  }
}

std::string RankEngine::where(const Ref& ref) const {
  const Program& program = programs_[ref.program];
  return coll::detail::to_string(coll::detail::StepPlace{rank_, program.channel, ref.index}) +
         " (" + coll::detail::describe(program.steps[ref.index]) + ")";
}

std::string RankEngine::stuck() const {
  std::vector<std::string> lines;
  for (std::size_t p = 0; p < peers_.size(); ++p) {
    const Peer& peer = peers_[p];
    for (std::size_t c = 0; c < peer.channels.size(); ++c) {
      const ChannelLink& link = peer.channels[c];
      for (const Ref& ref : link.waiting_sends)
        lines.push_back(where(ref) + " waits for rank " + std::to_string(p) +
                        " to post the receive");
      for (const Ref& ref : link.unacked)
        lines.push_back(where(ref) + " waits for rank " + std::to_string(p) +
                        " to acknowledge its bytes");
      for (const Ref& ref : link.posted) {
        const bool arriving =
            peer.in_payload && peer.header.channel == c && &ref == &link.posted.front();
        lines.push_back(where(ref) + " waits for bytes from rank " + std::to_string(p) +
                        (arriving ? " (" + std::to_string(peer.payload_got) + " of " +
                                        std::to_string(peer.header.bytes) + " B arrived)"
                                  : " (none arrived)"));
      }
    }
  }
  for (const Program& program : programs_)
    if (program.has_next) {
      std::string deps;
      for (std::size_t d = 0; d < program.next.dep_count; ++d)
        if (!program.done[program.next.deps[d]])
          deps += (deps.empty() ? "steps " : ",") + std::to_string(program.next.deps[d]);
      if (program.next.has_wait() && !wait_done(program.next))
        deps += std::string(deps.empty() ? "" : " and ") + "channel " +
                std::to_string(program.next.wait_channel) + " step " +
                std::to_string(program.next.wait_step);
      lines.push_back(coll::detail::to_string(coll::detail::StepPlace{
                          rank_, program.channel, std::uint32_t(program.steps.size())}) +
                      " (" + coll::detail::describe(program.next) + ") waits for " + deps);
    }
  if (lines.empty()) return "rank " + std::to_string(rank_) + " has no step in flight";
  std::string text;
  const std::size_t shown = std::min<std::size_t>(lines.size(), 4);
  for (std::size_t i = 0; i < shown; ++i) text += (i ? "; " : "") + lines[i];
  if (lines.size() > shown) text += "; and " + std::to_string(lines.size() - shown) + " more";
  return text;
}

void RankEngine::fail(const std::string& what) const {
  throw RankFailure("rank " + std::to_string(rank_) + ": " + what);
}

} // namespace ddlsim::real::host
