#include "executor.hpp"

#include "dtype.hpp"
#include "element_kernels.hpp"

#include <algorithm>
#include <cstring>

namespace ddlsim::coll::detail {

namespace {

bool overlap(const BufferRange& a, const BufferRange& b) {
  return a.buffer == b.buffer && a.offset < b.end() && b.offset < a.end();
}

} // namespace

Executor::Executor(const Schedule& schedule)
    : call_(schedule.call()), ranks_(schedule.ranks()), channels_(schedule.channels()),
      runner_(*this, schedule, 0, schedule.ranks()), messages_(ranks_, channels_) {
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
  runner_.restart();
  runner_.drain();
  if (!runner_.finished() || !messages_.empty() || !groups_.empty()) report_deadlock();
}

void Executor::reject_step(const std::string& message) const {
  throw ExecutionError(message, false);
}

void Executor::start_step(StepRef ref, const Step& step) {
  const Started s{ref.program, ref.index, step};
  const int rank = rank_of(s.program);
  if (step.is_local()) {
    execute_local(s);
    complete(s.program, s.index);
    return;
  }
  auto& accesses = in_flight_[std::size_t(rank)];
  if (step.is_switch()) {
    // Checked when the group runs: until then the switch may read src and write dst any time.
    if (step.src.bytes > 0) accesses.push_back({step.src, false, s.program, s.index, step});
    if (step.dst.bytes > 0) accesses.push_back({step.dst, true, s.program, s.index, step});
    std::string problem;
    const auto instance = groups_.post(rank, step, s, problem);
    if (!problem.empty()) fail(s, problem);
    if (instance) run_switch(*instance);
    return;
  }
  if (step.is_send()) {
    check_access(s, step.src, false); // a posted receive of this rank may write these bytes
    accesses.push_back({step.src, false, s.program, s.index, step});
    if (const auto receive = messages_.match_send(rank, step.peer, step.channel, s))
      transfer(s, *receive);
  } else {
    // Not checked here: the bytes arrive later, and transfer() checks them then.
    accesses.push_back({step.dst, true, s.program, s.index, step});
    if (step.kind == StepKind::recv_reduce)
      accesses.push_back({step.src, false, s.program, s.index, step});
    if (const auto send = messages_.match_receive(step.peer, rank, step.channel, s))
      transfer(*send, s);
  }
}

void Executor::transfer(const Started& send, const Started& receive) {
  const int from = rank_of(send.program), to = rank_of(receive.program);
  if (send.step.bytes != receive.step.bytes)
    fail(send, "sends " + std::to_string(send.step.bytes) + " B but its matching receive, " +
                   where(receive.program, receive.index, receive.step) + ", expects " +
                   std::to_string(receive.step.bytes) + " B");
  forget_accesses(to, receive.program, receive.index);
  check_access(receive, receive.step.dst, true);
  if (receive.step.kind == StepKind::recv_reduce) check_access(receive, receive.step.src, false);
  const std::span<std::byte> incoming = bytes(from, send.step.src);
  const std::span<std::byte> dst = bytes(to, receive.step.dst);
  if (receive.step.kind == StepKind::recv) {
    // An empty step's spans may hold null pointers: memcpy(null, null, 0) is undefined (UBSan).
    if (!dst.empty()) std::memcpy(dst.data(), incoming.data(), dst.size());
  } else
    combine(call_.reduction, call_.dtype, bytes(to, receive.step.src), incoming, dst);
  forget_accesses(from, send.program, send.index);
  bytes_sent_ += send.step.bytes;
  complete(send.program, send.index);
  complete(receive.program, receive.index);
}

void Executor::run_switch(const SwitchGroups<Started>::Instance& instance) {
  for (const auto& member : instance.members) {
    const Started& s = member.posted;
    forget_accesses(member.rank, s.program, s.index);
    check_access(s, s.step.src, false);
    check_access(s, s.step.dst, true);
  }
  const Started* owner = nullptr;
  for (const auto& member : instance.members)
    if (member.rank == instance.owner) owner = &member.posted;
  if (instance.kind == StepKind::switch_reduce) {
    // The switch adds the members' data in rank order (its own order is unspecified; sum and
    // avg agree up to rounding, which the reference check tolerates).
    if (call_.reduction == Reduction::adasum)
      fail(*owner, "a switch reduces by sum only; adasum cannot run in the switch");
    std::vector<std::byte> acc(instance.bytes);
    bool first = true;
    for (const auto& member : instance.members) {
      const std::span<std::byte> src = bytes(member.rank, member.posted.step.src);
      if (first)
        std::memcpy(acc.data(), src.data(), acc.size());
      else
        combine(call_.reduction, call_.dtype, acc, src, acc);
      first = false;
    }
    const std::span<std::byte> dst = bytes(instance.owner, owner->step.dst);
    std::memcpy(dst.data(), acc.data(), dst.size());
    bytes_sent_ += instance.bytes * instance.members.size();
  } else {
    const std::span<std::byte> src = bytes(instance.owner, owner->step.src);
    const std::vector<std::byte> data(src.begin(), src.end());
    for (const auto& member : instance.members) {
      const std::span<std::byte> dst = bytes(member.rank, member.posted.step.dst);
      if (!dst.empty()) std::memcpy(dst.data(), data.data(), dst.size());
    }
    bytes_sent_ += instance.bytes;
  }
  for (const auto& member : instance.members) complete(member.posted.program, member.posted.index);
}

void Executor::execute_local(const Started& s) {
  const int rank = rank_of(s.program);
  const Step& step = s.step;
  check_access(s, step.src, false);
  if (step.codec == Codec::chunk_select) check_access(s, step.aux, false);
  check_access(s, step.dst, true);
  const std::span<std::byte> src = bytes(rank, step.src), dst = bytes(rank, step.dst);
  try {
    run_local_step(step, call_.reduction, call_.dtype, src, bytes(rank, step.aux), dst);
  } catch (const std::runtime_error& error) {
    fail(s, error.what());
  }
}

void Executor::complete(std::uint32_t id, std::uint32_t index) {
  runner_.complete({id, index});
}

void Executor::check_access(const Started& s, const BufferRange& range, bool write) const {
  if (range.bytes == 0) return;
  for (const Access& other : in_flight_[std::size_t(rank_of(s.program))]) {
    if (!(write || other.write) || !overlap(range, other.range)) continue;
    if (other.program == s.program && other.index == s.index) continue;

    fail(s, std::string(write ? "writes " : "reads ") + to_string(range) + " while " +
                where(other.program, other.index, other.step) + " may still " +
                (other.write ? "write " : "read ") + to_string(other.range) +
                " (a missing dependency: a real executor may move those bytes at any moment "
                "until that step completes)" +
                (runner_.program(other.program).channel != runner_.program(s.program).channel
                     ? "; the two are on different "
                       "channels"
                     : ""));
  }
}

void Executor::forget_accesses(int rank, std::uint32_t id, std::uint32_t index) {
  auto& accesses = in_flight_[std::size_t(rank)];
  std::erase_if(accesses, [&](const Access& a) { return a.program == id && a.index == index; });
}

std::string Executor::where(std::uint32_t id, std::uint32_t index, const Step& step) const {
  return step_place(runner_.program(id).rank, runner_.program(id).channel, index, step);
}

void Executor::fail(const Started& s, const std::string& what) const {
  throw ExecutionError(where(s.program, s.index, s.step) + ": " + what, false);
}

void Executor::report_deadlock() const {
  std::vector<std::pair<std::pair<std::uint32_t, std::uint32_t>, std::string>> stuck;
  std::size_t programs = 0;
  for (std::uint32_t id = 0; id < runner_.program_count(); ++id) {
    const ProgramCursor& cursor = runner_.program(id).cursor;
    if (cursor.finished()) continue;
    ++programs;
    if (cursor.has_next()) stuck.push_back({{id, cursor.started()}, runner_.describe_pending(id)});
  }
  groups_.for_each_open([&](const auto& instance, const std::string& what) {
    const Started& s = instance.members.front().posted;
    stuck.push_back({{s.program, s.index}, what});
  });
  messages_.for_each_unmatched([&](const Started& s, bool is_send) {
    stuck.push_back({{s.program, s.index},
                     where(s.program, s.index, s.step) +
                         (is_send ? " has no matching receive" : " waits for its matching send")});
  });
  std::sort(stuck.begin(), stuck.end());
  std::string message = "deadlock: " + std::to_string(programs) + " of " +
                        std::to_string(runner_.program_count()) + " programs cannot finish";
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

} // namespace ddlsim::coll::detail
