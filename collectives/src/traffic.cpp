#include "ddlsim/collectives/traffic.hpp"

#include "ddlsim/core/input_error.hpp"

#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string_view>

namespace ddlsim::coll {
namespace {

// Uniform in [0, bound) from raw 64-bit draws: draws at or above the largest multiple of `bound`
// are rejected, so every value is equally likely (no modulo bias), and the result depends only on
// mt19937_64's output sequence, which the standard fixes.
std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t bound) {
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  const std::uint64_t limit = max - (max % bound + 1) % bound; // draws <= limit are kept
  std::uint64_t draw = rng();
  while (draw > limit) draw = rng();
  return draw % bound;
}

class TrafficSource final : public ProgramSource {
public:
  TrafficSource(std::vector<Flow> flows, int ranks)
      : flows_(std::move(flows)), ranks_(ranks), in_(static_cast<std::size_t>(ranks), 0),
        out_(static_cast<std::size_t>(ranks), 0), touching_(static_cast<std::size_t>(ranks)) {
    for (std::size_t i = 0; i < flows_.size(); ++i) {
      const Flow& f = flows_[i];
      in_[static_cast<std::size_t>(f.src)] += f.bytes;
      out_[static_cast<std::size_t>(f.dst)] += f.bytes;
      touching_[static_cast<std::size_t>(f.src)].push_back(static_cast<std::uint32_t>(i));
      touching_[static_cast<std::size_t>(f.dst)].push_back(static_cast<std::uint32_t>(i));
    }
  }
  std::string_view name() const override { return "send_recv traffic"; }
  int ranks() const override { return ranks_; }
  int channels() const override { return 1; }
  std::uint64_t buffer_bytes(int rank, Buffer buffer) const override {
    if (buffer == Buffer::input) return in_[static_cast<std::size_t>(rank)];
    if (buffer == Buffer::output) return out_[static_cast<std::size_t>(rank)];
    return 0;
  }
  StepStream program(int rank, int channel) const override {
    return rank_program(flows_, touching_[static_cast<std::size_t>(rank)], rank,
                        static_cast<std::uint16_t>(channel));
  }

private:
  // Held by reference: the source outlives its streams (the Schedule shares it).
  static StepStream rank_program(const std::vector<Flow>& flows,
                                 const std::vector<std::uint32_t>& touching, int rank,
                                 std::uint16_t channel) {
    std::uint64_t in = 0, out = 0;
    for (const std::uint32_t index : touching) {
      const Flow& f = flows[index];
      if (f.src == rank) {
        Step step;
        step.kind = StepKind::send;
        step.channel = channel;
        step.peer = f.dst;
        step.src = {Buffer::input, in, f.bytes};
        step.bytes = f.bytes;
        in += f.bytes;
        co_yield step;
      }
      if (f.dst == rank) {
        Step step;
        step.kind = StepKind::recv;
        step.channel = channel;
        step.peer = f.src;
        step.dst = {Buffer::output, out, f.bytes};
        step.bytes = f.bytes;
        out += f.bytes;
        co_yield step;
      }
    }
  }

  std::vector<Flow> flows_;
  int ranks_;
  std::vector<std::uint64_t> in_, out_;
  std::vector<std::vector<std::uint32_t>> touching_; // per rank: the flows it sends or receives
};

} // namespace

std::vector<int> permutation_targets(int ranks, std::uint64_t seed) {
  if (ranks < 2)
    throw InputError("/workload/traffic",
                     "a permutation needs at least 2 ranks (found " + std::to_string(ranks) + ")");
  std::mt19937_64 rng(seed);
  std::vector<int> target(static_cast<std::size_t>(ranks));
  for (;;) {
    for (int i = 0; i < ranks; ++i) target[static_cast<std::size_t>(i)] = i;
    for (std::size_t i = target.size() - 1; i > 0; --i)
      std::swap(target[i], target[uniform_below(rng, i + 1)]);
    bool fixed_point = false;
    for (int i = 0; i < ranks && !fixed_point; ++i)
      fixed_point = target[static_cast<std::size_t>(i)] == i;
    if (!fixed_point) return target;
  }
}

std::vector<Flow> permutation_flows(int ranks, std::uint64_t bytes, std::uint64_t seed) {
  const std::vector<int> target = permutation_targets(ranks, seed);
  std::vector<Flow> flows;
  flows.reserve(target.size());
  for (int i = 0; i < ranks; ++i) flows.push_back({i, target[static_cast<std::size_t>(i)], bytes});
  return flows;
}

std::vector<Flow> incast_flows(int ranks, int senders, int receiver, std::uint64_t bytes) {
  if (receiver < 0 || receiver >= ranks)
    throw InputError("/workload/traffic/receiver",
                     "rank " + std::to_string(receiver) + " is out of range; the workload has " +
                         std::to_string(ranks) + " ranks (0.." + std::to_string(ranks - 1) + ")");
  if (senders < 1 || senders > ranks - 1)
    throw InputError("/workload/traffic/senders",
                     std::to_string(senders) + " senders do not fit: with " +
                         std::to_string(ranks) + " ranks, give 1.." + std::to_string(ranks - 1));
  std::vector<Flow> flows;
  for (int r = 0; r < ranks && static_cast<int>(flows.size()) < senders; ++r)
    if (r != receiver) flows.push_back({r, receiver, bytes});
  return flows;
}

std::vector<Flow> matrix_flows(std::istream& csv, int ranks, const std::string& where) {
  std::vector<Flow> flows;
  int row = 0, line_number = 0;
  for (std::string line; std::getline(csv, line);) {
    ++line_number;
    const std::string at = where + ":" + std::to_string(line_number);
    if (line.find_first_not_of(" \t\r") == std::string::npos || line[0] == '#') continue;
    if (row >= ranks)
      throw InputError(at, "the matrix has more than " + std::to_string(ranks) +
                               " rows; it needs one row per rank (" + std::to_string(ranks) +
                               " x " + std::to_string(ranks) + ")");
    std::istringstream cells(line);
    int column = 0;
    for (std::string cell; std::getline(cells, cell, ',');) {
      const auto first = cell.find_first_not_of(" \t\r"), last = cell.find_last_not_of(" \t\r");
      const std::string text =
          first == std::string::npos ? std::string() : cell.substr(first, last - first + 1);
      std::uint64_t bytes = 0;
      std::size_t used = 0;
      bool ok = !text.empty() && text[0] != '-' && text[0] != '+';
      if (ok) {
        try {
          bytes = std::stoull(text, &used);
        } catch (const std::exception&) {
          ok = false;
        }
      }
      if (!ok || used != text.size())
        throw InputError(at, "column " + std::to_string(column + 1) + ": expected a byte count " +
                                 "(a non-negative integer), found \"" + text + "\"");
      if (column >= ranks)
        throw InputError(at, "row " + std::to_string(row + 1) + " has more than " +
                                 std::to_string(ranks) + " columns; it needs one per rank");
      if (column == row && bytes != 0)
        throw InputError(at, "entry [" + std::to_string(row) + "][" + std::to_string(column) +
                                 "] is " + std::to_string(bytes) +
                                 ": a rank does not send to itself; make the diagonal 0");
      if (bytes > 0) flows.push_back({row, column, bytes});
      ++column;
    }
    if (column != ranks)
      throw InputError(at, "row " + std::to_string(row + 1) + " has " + std::to_string(column) +
                               " columns; it needs one per rank (" + std::to_string(ranks) + ")");
    ++row;
  }
  if (row != ranks)
    throw InputError(where, "the matrix has " + std::to_string(row) + " rows; it needs one per " +
                                "rank (" + std::to_string(ranks) + " x " + std::to_string(ranks) +
                                ")");
  return flows;
}

void check_flows(const std::vector<Flow>& flows, int ranks, DataType dtype,
                 const std::string& where) {
  if (flows.empty()) throw InputError(where, "no flow: give at least one (src, dst, bytes)");
  const std::uint64_t element = element_size(dtype);
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const Flow& f = flows[i];
    const std::string at = where + "/" + std::to_string(i);
    for (const auto& [key, rank] : {std::pair{"src", f.src}, std::pair{"dst", f.dst}})
      if (rank < 0 || rank >= ranks)
        throw InputError(at + "/" + key, "rank " + std::to_string(rank) +
                                             " is out of range; the workload has " +
                                             std::to_string(ranks) + " ranks (0.." +
                                             std::to_string(ranks - 1) + ")");
    if (f.src == f.dst)
      throw InputError(at, "src and dst are both rank " + std::to_string(f.src) +
                               ": a flow goes between two different ranks");
    if (f.bytes == 0 || f.bytes % element != 0)
      throw InputError(at + "/bytes", "found " + std::to_string(f.bytes) +
                                          " bytes; give a positive multiple of " +
                                          std::to_string(element) + " (the " +
                                          std::string(to_string(dtype)) + " element size)");
  }
}

Schedule traffic_schedule(const std::vector<Flow>& flows, int ranks, DataType dtype) {
  CollectiveCall call;
  call.op = Op::send_recv;
  call.ranks = ranks;
  call.dtype = dtype;
  call.algorithm = "traffic";
  for (const Flow& f : flows) call.bytes += f.bytes;
  return Schedule::composite(std::move(call), std::make_shared<const TrafficSource>(flows, ranks));
}

std::vector<FlowRanges> flow_ranges(const std::vector<Flow>& flows, int ranks) {
  std::vector<std::uint64_t> in(static_cast<std::size_t>(ranks), 0),
      out(static_cast<std::size_t>(ranks), 0);
  std::vector<FlowRanges> ranges;
  ranges.reserve(flows.size());
  for (const Flow& f : flows) {
    std::uint64_t& i = in[static_cast<std::size_t>(f.src)];
    std::uint64_t& o = out[static_cast<std::size_t>(f.dst)];
    ranges.push_back({{Buffer::input, i, f.bytes}, {Buffer::output, o, f.bytes}});
    i += f.bytes;
    o += f.bytes;
  }
  return ranges;
}

} // namespace ddlsim::coll
