#include "executor.hpp"

#include "codecs.hpp"
#include "dtype.hpp"

#include <algorithm>
#include <cstring>

namespace ddlsim::coll::detail {

namespace {

bool overlap(const BufferRange& a, const BufferRange& b) {
  return a.buffer == b.buffer && a.offset < b.end() && b.offset < a.end();
}

// out = a (op) b element-wise; out may be a. Sum and avg add (avg scales in a later step);
// adasum combines the two vectors over this range, with 0-norm guards.
void combine(Reduction reduction, DataType type, std::span<const std::byte> a,
             std::span<const std::byte> b, std::span<std::byte> out) {
  const std::size_t e = element_size(type), n = out.size() / e;
  if (reduction != Reduction::adasum) {
    for (std::size_t i = 0; i < n; ++i)
      store(type, &out[i * e], load(type, &a[i * e]) + load(type, &b[i * e]));
    return;
  }
  double dot = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = load(type, &a[i * e]), y = load(type, &b[i * e]);
    dot += x * y;
    aa += x * x;
    bb += y * y;
  }
  const double ca = aa > 0 ? 1 - dot / (2 * aa) : 1, cb = bb > 0 ? 1 - dot / (2 * bb) : 1;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = load(type, &a[i * e]), y = load(type, &b[i * e]);
    store(type, &out[i * e], static_cast<float>(ca * x + cb * y));
  }
}

} // namespace

Executor::Executor(const Schedule& schedule)
    : call_(schedule.call()), ranks_(schedule.ranks()), channels_(schedule.channels()) {
  sizes_.resize(std::size_t(ranks_));
  buffers_.resize(std::size_t(ranks_));
  in_flight_.resize(std::size_t(ranks_));
  for (int r = 0; r < ranks_; ++r) {
    auto& size = sizes_[std::size_t(r)];
    size = {schedule.buffer_bytes(r, Buffer::input), schedule.buffer_bytes(r, Buffer::output),
            schedule.buffer_bytes(r, Buffer::scratch)};
    for (Buffer b : {Buffer::input, Buffer::output, Buffer::scratch})
      buffers_[std::size_t(r)][std::size_t(b)].resize(size.size(b));
  }
  programs_.resize(std::size_t(ranks_) * std::size_t(channels_));
  for (int r = 0; r < ranks_; ++r)
    for (int c = 0; c < channels_; ++c) {
      Program& program = programs_[std::size_t(r * channels_ + c)];
      program.rank = r;
      program.channel = c;
      program.stream = schedule.program(r, c);
    }
}

void Executor::set_input(int rank, const std::vector<double>& values) {
  auto& input = buffers_[std::size_t(rank)][std::size_t(Buffer::input)];
  const std::size_t e = element_size(call_.dtype);
  for (std::size_t i = 0; i < values.size() && (i + 1) * e <= input.size(); ++i)
    store(call_.dtype, &input[i * e], static_cast<float>(values[i]));
}

std::vector<double> Executor::output(int rank) const {
  const auto& out = buffers_[std::size_t(rank)][std::size_t(Buffer::output)];
  const std::size_t e = element_size(call_.dtype);
  std::vector<double> values(out.size() / e);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = load(call_.dtype, &out[i * e]);
  return values;
}

void Executor::run() {
  for (std::uint32_t id = 0; id < programs_.size(); ++id) {
    programs_[id].queued = true;
    ready_.push_back(id);
  }
  while (!ready_.empty()) {
    const std::uint32_t id = ready_.front();
    ready_.pop_front();
    advance(id);
  }
  for (const Program& program : programs_)
    if (program.has_next || !program.ended || program.unfinished > 0) report_deadlock();
}

void Executor::advance(std::uint32_t id) {
  Program& program = programs_[id];
  program.queued = false;
  for (;;) {
    const auto index = static_cast<std::uint32_t>(program.done.size());
    if (!program.has_next) {
      if (program.ended) return;
      if (!program.stream.next(program.next)) {
        program.ended = true;
        return;
      }
      program.has_next = true;
      const StepPlace place{program.rank, program.channel, index};
      if (auto problem = step_problem(program.next, place, ranks_,
                                      sizes_[std::size_t(program.rank)], call_.dtype);
          !problem.empty())
        throw ExecutionError(where(id, index, program.next) + ": " + problem, false);
    }
    for (std::size_t d = 0; d < program.next.dep_count; ++d)
      if (!program.done[program.next.deps[d]]) return; // re-queued when that step completes
    if (program.next.has_wait() && !wait_done(program.rank, program.next)) return;
    program.has_next = false;
    program.done.push_back(0);
    ++program.unfinished;
    ++steps_;
    start({id, index, program.next});
  }
}

void Executor::start(const Started& s) {
  const int rank = programs_[s.program].rank;
  const Step& step = s.step;
  if (step.is_local()) {
    execute_local(s);
    complete(s.program, s.index);
    return;
  }
  Queue& queue = queues_[step.is_send() ? queue_key(rank, step.peer, step.channel)
                                        : queue_key(step.peer, rank, step.channel)];
  auto& accesses = in_flight_[std::size_t(rank)];
  if (step.is_send()) {
    check_access(s, step.src, false); // a posted receive of this rank may write these bytes
    accesses.push_back({step.src, false, s.program, s.index, step});
    if (queue.receives.empty()) return queue.sends.push_back(s);
    const Started receive = queue.receives.front();
    queue.receives.pop_front();
    transfer(s, receive);
  } else {
    // Not checked here: the bytes arrive later, and transfer() checks them then.
    accesses.push_back({step.dst, true, s.program, s.index, step});
    if (step.kind == StepKind::recv_reduce)
      accesses.push_back({step.src, false, s.program, s.index, step});
    if (queue.sends.empty()) return queue.receives.push_back(s);
    const Started send = queue.sends.front();
    queue.sends.pop_front();
    transfer(send, s);
  }
}

void Executor::transfer(const Started& send, const Started& receive) {
  const int from = programs_[send.program].rank, to = programs_[receive.program].rank;
  if (send.step.bytes != receive.step.bytes)
    fail(send, "sends " + std::to_string(send.step.bytes) + " B but its matching receive, " +
                   where(receive.program, receive.index, receive.step) + ", expects " +
                   std::to_string(receive.step.bytes) + " B");
  forget_accesses(to, receive.program, receive.index);
  check_access(receive, receive.step.dst, true);
  if (receive.step.kind == StepKind::recv_reduce) check_access(receive, receive.step.src, false);
  const std::span<std::byte> incoming = bytes(from, send.step.src);
  const std::span<std::byte> dst = bytes(to, receive.step.dst);
  if (receive.step.kind == StepKind::recv)
    std::memcpy(dst.data(), incoming.data(), dst.size());
  else
    combine(call_.reduction, call_.dtype, bytes(to, receive.step.src), incoming, dst);
  forget_accesses(from, send.program, send.index);
  bytes_sent_ += send.step.bytes;
  complete(send.program, send.index);
  complete(receive.program, receive.index);
}

void Executor::execute_local(const Started& s) {
  const int rank = programs_[s.program].rank;
  const Step& step = s.step;
  check_access(s, step.src, false);
  if (step.codec == Codec::chunk_select) check_access(s, step.aux, false);
  check_access(s, step.dst, true);
  const std::span<std::byte> src = bytes(rank, step.src), dst = bytes(rank, step.dst);
  const std::size_t e = element_size(call_.dtype);
  try {
    switch (step.kind) {
    case StepKind::copy:
      std::memmove(dst.data(), src.data(), dst.size());
      break;
    case StepKind::reduce:
      combine(call_.reduction, call_.dtype, dst, src, dst);
      break;
    case StepKind::scale:
      for (std::size_t i = 0; i < dst.size() / e; ++i)
        store(call_.dtype, &dst[i * e],
              static_cast<float>(double(load(call_.dtype, &src[i * e])) * step.param));
      break;
    case StepKind::compress:
      compress(step, call_.dtype, src, bytes(rank, step.aux), dst);
      break;
    case StepKind::decompress:
      decompress(step, call_.dtype, src, bytes(rank, step.aux), dst);
      break;
    default:
      break;
    }
  } catch (const std::runtime_error& error) {
    fail(s, error.what());
  }
}

bool Executor::wait_done(int rank, const Step& step) const {
  if (step.wait_channel >= channels_)
    throw ExecutionError("rank " + std::to_string(rank) + " (" + describe(step) +
                             "): waits for channel " + std::to_string(step.wait_channel) +
                             " but the schedule has " + std::to_string(channels_) + " channels",
                         false);
  const Program& other = programs_[std::size_t(rank * channels_ + step.wait_channel)];
  return step.wait_step < other.done.size() && other.done[step.wait_step];
}

void Executor::complete(std::uint32_t id, std::uint32_t index) {
  Program& program = programs_[id];
  program.done[index] = 1;
  --program.unfinished;
  auto enqueue = [this](std::uint32_t p) {
    if (programs_[p].queued) return;
    programs_[p].queued = true;
    ready_.push_back(p);
  };
  enqueue(id);
  // Programs of the same rank blocked on a wait for this channel may now go on.
  const std::uint32_t first = std::uint32_t(program.rank * channels_);
  for (std::uint32_t other = first; other < first + std::uint32_t(channels_); ++other) {
    const Program& waiter = programs_[other];
    if (waiter.has_next && waiter.next.has_wait() && waiter.next.wait_channel == program.channel)
      enqueue(other);
  }
}

void Executor::check_access(const Started& s, const BufferRange& range, bool write) const {
  if (range.bytes == 0) return;
  for (const Access& other : in_flight_[std::size_t(programs_[s.program].rank)]) {
    if (!(write || other.write) || !overlap(range, other.range)) continue;
    if (other.program == s.program && other.index == s.index) continue;
    const Program& owner = programs_[other.program];
    fail(s, std::string(write ? "writes " : "reads ") + to_string(range) + " while " +
                where(other.program, other.index, other.step) + " may still " +
                (other.write ? "write " : "read ") + to_string(other.range) +
                " (a missing dependency: a real executor may move those bytes at any moment "
                "until that step completes)" +
                (owner.channel != programs_[s.program].channel ? "; the two are on different "
                                                                 "channels"
                                                               : ""));
  }
}

void Executor::forget_accesses(int rank, std::uint32_t id, std::uint32_t index) {
  auto& accesses = in_flight_[std::size_t(rank)];
  std::erase_if(accesses, [&](const Access& a) { return a.program == id && a.index == index; });
}

std::string Executor::where(std::uint32_t id, std::uint32_t index, const Step& step) const {
  const Program& program = programs_[id];
  return to_string(StepPlace{program.rank, program.channel, index}) + " (" + describe(step) + ")";
}

void Executor::fail(const Started& s, const std::string& what) const {
  throw ExecutionError(where(s.program, s.index, s.step) + ": " + what, false);
}

void Executor::report_deadlock() const {
  std::vector<std::pair<std::pair<std::uint32_t, std::uint32_t>, std::string>> stuck;
  std::size_t programs = 0;
  for (std::uint32_t id = 0; id < programs_.size(); ++id) {
    const Program& program = programs_[id];
    if (!program.has_next && program.ended && program.unfinished == 0) continue;
    ++programs;
    if (!program.has_next) continue;
    std::string deps;
    for (std::size_t d = 0; d < program.next.dep_count; ++d)
      if (!program.done[program.next.deps[d]])
        deps += (deps.empty() ? "" : ",") + std::to_string(program.next.deps[d]);
    const auto index = static_cast<std::uint32_t>(program.done.size());
    std::string wait;
    if (program.next.has_wait() && !wait_done(program.rank, program.next))
      wait = std::string(deps.empty() ? "" : " and") + " channel " +
             std::to_string(program.next.wait_channel) + " step " +
             std::to_string(program.next.wait_step);
    stuck.push_back({{id, index},
                     where(id, index, program.next) + " waits for" +
                         (deps.empty() ? "" : " steps " + deps) + wait});
  }
  for (const auto& [key, queue] : queues_) {
    for (const Started& s : queue.sends)
      stuck.push_back(
          {{s.program, s.index}, where(s.program, s.index, s.step) + " has no matching receive"});
    for (const Started& s : queue.receives)
      stuck.push_back({{s.program, s.index},
                       where(s.program, s.index, s.step) + " waits for its matching send"});
  }
  std::sort(stuck.begin(), stuck.end());
  std::string message = "deadlock: " + std::to_string(programs) + " of " +
                        std::to_string(programs_.size()) + " programs cannot finish";
  const std::size_t shown = std::min<std::size_t>(stuck.size(), 8);
  for (std::size_t i = 0; i < shown; ++i) message += (i ? "; " : ": ") + stuck[i].second;
  if (stuck.size() > shown) message += "; and " + std::to_string(stuck.size() - shown) + " more";
  throw ExecutionError(message, true);
}

std::span<std::byte> Executor::bytes(int rank, const BufferRange& range) {
  auto& buffer = buffers_[std::size_t(rank)][std::size_t(range.buffer)];
  if (range.bytes == 0) return {};
  return {buffer.data() + range.offset, range.bytes};
}

std::uint64_t Executor::queue_key(int from, int to, int channel) const {
  return (std::uint64_t(from) * std::uint64_t(ranks_) + std::uint64_t(to)) *
             std::uint64_t(channels_) +
         std::uint64_t(channel);
}

} // namespace ddlsim::coll::detail
