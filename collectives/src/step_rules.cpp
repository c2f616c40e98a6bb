#include "step_rules.hpp"

#include "codecs.hpp"

#include "ddlsim/collectives/step_runner.hpp"

#include <sstream>
#include <tuple>

namespace ddlsim::coll::detail {

std::string to_string(const StepPlace& place) {
  return "rank " + std::to_string(place.rank) + " ch " + std::to_string(place.channel) + " step " +
         std::to_string(place.index);
}

std::string to_string(const BufferRange& range) {
  return std::string(coll::to_string(range.buffer)) + "[" + std::to_string(range.offset) + "," +
         std::to_string(range.end()) + ")";
}

namespace {

bool uses_src(StepKind kind) {
  return kind != StepKind::recv && kind != StepKind::compute;
}
bool uses_dst(StepKind kind) {
  return kind != StepKind::send && kind != StepKind::compute;
}
// Kinds that combine values element by element need element-aligned ranges.
bool combines_elements(const Step& step) {
  return step.kind == StepKind::recv_reduce || step.kind == StepKind::reduce ||
         step.kind == StepKind::scale;
}

std::string range_problem(const char* role, const BufferRange& range, const RankBuffers& buffers,
                          std::size_t element_bytes, bool aligned) {
  if (static_cast<unsigned>(range.buffer) > static_cast<unsigned>(Buffer::scratch))
    return std::string(role) + " names an unknown buffer";
  const std::uint64_t size = buffers.size(range.buffer);
  if (range.bytes > size || range.offset > size - range.bytes)
    return std::string(role) + " " + to_string(range) + " is outside the " +
           std::string(coll::to_string(range.buffer)) + " buffer of " + std::to_string(size) + " B";
  if (aligned && (range.offset % element_bytes != 0 || range.bytes % element_bytes != 0))
    return std::string(role) + " " + to_string(range) + " is not aligned to the " +
           std::to_string(element_bytes) + "-byte element";
  return {};
}

bool overlap(const BufferRange& a, const BufferRange& b) {
  return a.buffer == b.buffer && a.offset < b.end() && b.offset < a.end();
}

// Rule 4: the owner of a switch_reduce has a dst, the others none; the owner of a
// switch_multicast has a src (and may have a dst), the others only a dst.
std::string switch_problem(const Step& step, const StepPlace& place, int ranks,
                           const RankBuffers& buffers, std::size_t element_bytes) {
  if (!(step.param >= 2 && step.param <= ranks) ||
      step.param != static_cast<double>(static_cast<int>(step.param)))
    return "group size (param) " + std::to_string(step.param) + " must be an integer in 2.." +
           std::to_string(ranks);
  if (step.aux != BufferRange{}) return "a switch step has no aux range";
  const bool owner = step.peer == place.rank;
  const bool reduce = step.kind == StepKind::switch_reduce;
  const bool has_src = reduce || owner;
  const bool has_dst = reduce ? owner : (!owner || step.dst != BufferRange{});
  const std::string bytes = std::to_string(step.bytes) + " B";
  for (const auto& [role, range, used] :
       {std::tuple{"src", step.src, has_src}, std::tuple{"dst", step.dst, has_dst}}) {
    if (!used) {
      if (range != BufferRange{})
        return std::string(role) + " must be unset: " +
               (reduce ? "only the owner of a switch_reduce receives"
                       : "only the owner of a switch_multicast sends");
      continue;
    }
    if (auto p = range_problem(role, range, buffers, element_bytes, reduce); !p.empty()) return p;
    if (range.bytes != step.bytes)
      return "moves " + bytes + " but " + role + " " + to_string(range) + " has " +
             std::to_string(range.bytes) + " B";
  }
  if (has_dst && step.dst.buffer == Buffer::input && step.dst.bytes > 0)
    return "writes " + to_string(step.dst) + ", but the input buffer is read-only";
  if (has_src && has_dst && overlap(step.src, step.dst) && !(reduce && step.src == step.dst))
    return "src " + to_string(step.src) + " and dst " + to_string(step.dst) + " overlap";
  return {};
}

} // namespace

std::string step_problem(const Step& step, const StepPlace& place, int ranks,
                         const RankBuffers& buffers, DataType dtype) {
  if (static_cast<unsigned>(step.kind) > static_cast<unsigned>(StepKind::switch_multicast))
    return "unknown step kind " + std::to_string(static_cast<unsigned>(step.kind));
  if (step.channel != place.channel)
    return "says channel " + std::to_string(step.channel) + " but is in the program of channel " +
           std::to_string(place.channel);
  if (step.dep_count > kMaxStepDeps)
    return std::to_string(step.dep_count) + " deps, more than " + std::to_string(kMaxStepDeps);
  for (std::size_t i = 0; i < step.dep_count; ++i)
    if (step.deps[i] >= place.index)
      return "dep " + std::to_string(step.deps[i]) +
             " does not point to an earlier step of the same program";
  if (step.is_switch() && (step.peer < 0 || step.peer >= ranks))
    return "owner " + std::to_string(step.peer) + " is not a rank of 0.." +
           std::to_string(ranks - 1);
  if ((step.is_send() || step.is_receive()) &&
      (step.peer < 0 || step.peer >= ranks || step.peer == place.rank))
    return "peer " + std::to_string(step.peer) + " is not another rank of 0.." +
           std::to_string(ranks - 1);
  if (step.has_wait() && step.wait_channel == place.channel)
    return "waits for step " + std::to_string(step.wait_step) +
           " of its own channel; use deps within a program";
  const bool coded = step.kind == StepKind::compress || step.kind == StepKind::decompress;
  if (coded != (step.codec != Codec::none))
    return coded ? "needs a codec" : "has a codec but only compress/decompress use one";
  if (step.kind == StepKind::compute) {
    if (step.bytes != 0 || step.peer != -1 || step.src != BufferRange{} ||
        step.dst != BufferRange{} || step.aux != BufferRange{})
      return "compute touches no buffer and no peer: bytes must be 0 and peer, src, dst, aux "
             "unset";
    // Picoseconds are integers; 2^53 ps (about 2.5 hours) keeps the double exact.
    if (!(step.param >= 0 && step.param <= 9007199254740992.0) ||
        step.param != static_cast<double>(static_cast<std::int64_t>(step.param)))
      return "compute duration " + std::to_string(step.param) +
             " ps must be a whole number of picoseconds in [0, 2^53]";
    if (!(step.memory_bound_share >= 0 && step.memory_bound_share <= 1))
      return "compute memory_bound_share " + std::to_string(step.memory_bound_share) +
             " must be a share in [0, 1]";
    return {};
  }
  if (step.memory_bound_share != 0) return "memory_bound_share is for compute steps only";

  const std::size_t element_bytes = element_size(dtype);
  if (step.is_switch()) return switch_problem(step, place, ranks, buffers, element_bytes);
  const bool aligned = combines_elements(step);
  if (uses_src(step.kind))
    if (auto p = range_problem("src", step.src, buffers, element_bytes, aligned); !p.empty())
      return p;
  if (uses_dst(step.kind)) {
    if (auto p = range_problem("dst", step.dst, buffers, element_bytes, aligned); !p.empty())
      return p;
    if (step.dst.buffer == Buffer::input && step.dst.bytes > 0)
      return "writes " + to_string(step.dst) + ", but the input buffer is read-only";
  }
  if (step.codec == Codec::chunk_select)
    if (auto p = range_problem("aux", step.aux, buffers, element_bytes, false); !p.empty())
      return p;

  // Byte counts: what is on the wire or processed equals the ranges that hold it.
  const std::string bytes = std::to_string(step.bytes) + " B";
  if (uses_src(step.kind) && !coded && step.src.bytes != step.bytes)
    return "moves " + bytes + " but src " + to_string(step.src) + " has " +
           std::to_string(step.src.bytes) + " B";
  if (uses_dst(step.kind) && !coded && step.dst.bytes != step.bytes)
    return "moves " + bytes + " but dst " + to_string(step.dst) + " has " +
           std::to_string(step.dst.bytes) + " B";
  // In place (src == dst) is fine for element-wise steps; any other overlap has no defined order.
  if (uses_src(step.kind) && uses_dst(step.kind) && overlap(step.src, step.dst) &&
      (coded || !(step.src == step.dst)))
    return "src " + to_string(step.src) + " and dst " + to_string(step.dst) + " overlap";
  if (coded) return codec_problem(step, dtype);
  return {};
}

std::string describe(const Step& step) {
  std::ostringstream out;
  out << coll::to_string(step.kind);
  if (step.is_send()) out << " to " << step.peer;
  if (step.is_receive()) out << " from " << step.peer;
  if (step.is_switch())
    out << " owner " << step.peer << " group " << static_cast<std::int64_t>(step.param);
  if (step.codec != Codec::none) out << ' ' << coll::to_string(step.codec);
  if (step.kind == StepKind::scale) out << " x" << step.param;
  if (step.kind == StepKind::compute) out << ' ' << static_cast<std::int64_t>(step.param) << " ps";
  if (step.codec == Codec::chunk_norms || step.codec == Codec::chunk_select)
    out << " chunk " << step.param << " B";
  out << ' ';
  if (uses_src(step.kind) && !(step.is_switch() && step.src == BufferRange{}))
    out << ' ' << to_string(step.src);
  if (uses_dst(step.kind) && !(step.is_switch() && step.dst == BufferRange{}))
    out << " -> " << to_string(step.dst);
  if (step.codec == Codec::chunk_select) out << " aux " << to_string(step.aux);
  out << "  " << step.bytes << " B";
  if (step.dep_count > 0) {
    out << "  deps ";
    for (std::size_t i = 0; i < step.dep_count; ++i) out << (i ? "," : "") << step.deps[i];
  }
  if (step.has_wait()) out << "  wait ch " << step.wait_channel << " #" << step.wait_step;
  if (step.protocol != 0) out << "  protocol " << static_cast<unsigned>(step.protocol);
  return out.str();
}

} // namespace ddlsim::coll::detail

namespace ddlsim::coll {

std::string step_place(int rank, int channel, std::uint32_t index, const Step& step) {
  return detail::to_string(detail::StepPlace{rank, channel, index}) + " (" +
         detail::describe(step) + ")";
}

std::array<std::uint64_t, 3> rank_buffer_bytes(const Schedule& schedule, int rank) {
  return {schedule.buffer_bytes(rank, Buffer::input), schedule.buffer_bytes(rank, Buffer::output),
          schedule.buffer_bytes(rank, Buffer::scratch)};
}

std::string step_problem_at(const Schedule& schedule, const std::array<std::uint64_t, 3>& sizes,
                            int rank, int channel, std::uint32_t index, const Step& step) {
  const detail::RankBuffers buffers{sizes[0], sizes[1], sizes[2]};
  std::string problem = detail::step_problem(step, detail::StepPlace{rank, channel, index},
                                             schedule.ranks(), buffers, schedule.call().dtype);
  if (problem.empty() && step.has_wait() && step.wait_channel >= schedule.channels())
    problem = "waits for channel " + std::to_string(step.wait_channel) + " but the schedule has " +
              std::to_string(schedule.channels()) + " channels";
  if (problem.empty() && step.protocol >= schedule.protocols().size())
    problem = "names protocol " + std::to_string(step.protocol) + " but the schedule has " +
              std::to_string(schedule.protocols().size());
  return problem.empty() ? problem : step_place(rank, channel, index, step) + ": " + problem;
}

} // namespace ddlsim::coll
