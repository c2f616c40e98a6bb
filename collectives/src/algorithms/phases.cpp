#include "phases.hpp"

#include <algorithm>
#include <cmath>

namespace ddlsim::coll::gen {

Ring strided_ring(int rank, int pos, int size, int stride) {
  Ring ring{pos, size, rank, rank};
  ring.left = rank + (ring.mod(pos - 1) - pos) * stride;
  ring.right = rank + (ring.mod(pos + 1) - pos) * stride;
  return ring;
}

StepStream ring_reduce_scatter(Program& prog, Ring ring, ElementRange range, Place own, Place acc,
                               std::uint32_t ready, std::uint32_t& done) {
  done = ready;
  if (ring.size <= 1) co_return;
  const auto parts = std::uint64_t(ring.size);
  std::uint32_t last = ready;
  for (int t = 0; t < ring.size - 1; ++t) {
    const Place from = t == 0 ? own : acc;
    const ElementRange out = sub(range, parts, std::uint64_t(ring.mod(ring.pos - t - 1)));
    co_yield prog.emit(send_step(ring.right, from.at(out)), last);
    const ElementRange in = sub(range, parts, std::uint64_t(ring.mod(ring.pos - t - 2)));
    co_yield prog.emit(recv_reduce_step(ring.left, own.at(in), acc.at(in)), ready);
    last = prog.last();
  }
  done = last;
}

StepStream ring_all_gather(Program& prog, Ring ring, ElementRange range, Place buf,
                           std::uint32_t ready, std::uint32_t& done) {
  done = ready;
  if (ring.size <= 1) co_return;
  const auto parts = std::uint64_t(ring.size);
  std::uint32_t last = ready;
  for (int t = 0; t < ring.size - 1; ++t) {
    const ElementRange out = sub(range, parts, std::uint64_t(ring.mod(ring.pos - t)));
    co_yield prog.emit(send_step(ring.right, buf.at(out)), last);
    const ElementRange in = sub(range, parts, std::uint64_t(ring.mod(ring.pos - t - 1)));
    co_yield prog.emit(recv_step(ring.left, buf.at(in)), ready);
    last = prog.last();
  }
  done = last;
}

int node_count(const CollectiveCall& call) {
  if (call.node_of_rank.empty()) return call.ranks;
  return call.node_of_rank.back() - call.node_of_rank.front() + 1;
}

int node_first_rank(const CollectiveCall& call, int node) {
  if (call.node_of_rank.empty()) return node;
  const auto& labels = call.node_of_rank;
  return static_cast<int>(std::lower_bound(labels.begin(), labels.end(), labels.front() + node) -
                          labels.begin());
}

NodeOf node_of(const CollectiveCall& call, int rank) {
  NodeOf out;
  out.nodes = node_count(call);
  out.node = call.node_of_rank.empty()
                 ? rank
                 : call.node_of_rank[std::size_t(rank)] - call.node_of_rank.front();
  out.first = node_first_rank(call, out.node);
  out.size = node_first_rank(call, out.node + 1) - out.first;
  return out;
}

std::string node_layout_problem(const CollectiveCall& call) {
  const auto& labels = call.node_of_rank;
  for (std::size_t r = 1; r < labels.size(); ++r) {
    const int step = labels[r] - labels[r - 1];
    if (step != 0 && step != 1)
      return "node_of_rank must list each node's ranks consecutively and number the nodes in "
             "rank order (0, 0, 1, 1, ...), as a topology's node-major GPU order does; rank " +
             std::to_string(r) + " is on node " + std::to_string(labels[r]) + " after rank " +
             std::to_string(r - 1) + " on node " + std::to_string(labels[r - 1]) +
             "; renumber the ranks node by node";
  }
  return {};
}

int uniform_node_size(const CollectiveCall& call) {
  const int nodes = node_count(call);
  if (call.ranks % nodes != 0) return 0;
  const int size = call.ranks / nodes;
  for (int m = 0; m <= nodes; ++m)
    if (node_first_rank(call, m) != m * size) return 0;
  return size;
}

Step zero_step(BufferRange src, BufferRange dst) {
  Step step;
  step.kind = StepKind::scale;
  step.src = src;
  step.dst = dst;
  step.bytes = dst.bytes;
  step.param = 0;
  return step;
}

Step reduce_step(BufferRange src, BufferRange dst) {
  Step step;
  step.kind = StepKind::reduce;
  step.src = src;
  step.dst = dst;
  step.bytes = dst.bytes;
  return step;
}

Step codec_step(StepKind kind, Codec codec, BufferRange src, BufferRange dst, double param,
                BufferRange aux) {
  Step step;
  step.kind = kind;
  step.codec = codec;
  step.src = src;
  step.dst = dst;
  step.aux = aux;
  step.bytes = src.bytes;
  step.param = param;
  return step;
}

std::uint64_t topk_count(double density, std::uint64_t n) {
  if (n == 0) return 0;
  const double wanted = std::ceil(density * double(n) * (1 - 1e-12));
  return std::clamp<std::uint64_t>(static_cast<std::uint64_t>(wanted), 1, n);
}

void PhasedGenerator::check_node_layout(const CollectiveCall& call) const {
  if (auto problem = node_layout_problem(call); !problem.empty()) reject(problem);
}

std::vector<int> PhasedGenerator::default_groups(const CollectiveCall& call,
                                                 const std::string& what) const {
  check_node_layout(call);
  const int size = uniform_node_size(call);
  if (size == 0)
    reject("the nodes of node_of_rank differ in size, so there is no default " + what +
           "; give params.group_sizes whose product is " + std::to_string(call.ranks));
  return {size, call.ranks / size};
}

std::vector<int> PhasedGenerator::checked_groups(const CollectiveCall& call) {
  if (!call.params.group_sizes.empty()) return call.params.group_sizes;
  const int size = node_of(call, 0).size;
  return {size, call.ranks / size};
}

void PhasedGenerator::check_groups(const CollectiveCall& call,
                                   const std::vector<int>& groups) const {
  long long product = 1;
  std::string list;
  for (int g : groups) {
    list += (list.empty() ? "" : ", ") + std::to_string(g);
    if (g < 1) reject("group size " + std::to_string(g) + " in {" + list + "...} is not positive");
    product *= g;
    if (product > call.ranks) break;
  }
  if (product != call.ranks) {
    list.clear();
    for (int g : groups) list += (list.empty() ? "" : ", ") + std::to_string(g);
    reject("group_sizes {" + list + "} multiply to " + std::to_string(product) + ", not the " +
           std::to_string(call.ranks) +
           " ranks; give a factorisation of the rank count, "
           "innermost group first");
  }
}

StepStream staged_ring_all_reduce(Shape s, std::vector<int> groups) {
  Program prog(s.channel);
  Step step;
  const ElementRange slice = s.channel_share(s.all());
  const Place in{Buffer::input, 0, s.e}, out{Buffer::output, 0, s.e};
  if (s.p == 1) {
    co_yield prog.emit(copy_step(in.at(slice), out.at(slice)));
    co_return;
  }
  // The ring and the range of every stage (O(levels) state).
  std::vector<Ring> rings;
  std::vector<ElementRange> ranges;
  ElementRange range = slice;
  int stride = 1;
  for (int g : groups) {
    const int pos = (s.rank / stride) % g;
    rings.push_back(strided_ring(s.rank, pos, g, stride));
    ranges.push_back(range);
    range = sub(range, std::uint64_t(g), std::uint64_t(pos));
    stride *= g;
  }
  Place own = in; // the data stays in the input until the first real stage
  std::uint32_t ready = kNoStep;
  for (std::size_t i = 0; i < rings.size(); ++i) {
    if (rings[i].size == 1) continue;
    for (StepStream phase = ring_reduce_scatter(prog, rings[i], ranges[i], own, out, ready, ready);
         phase.next(step);)
      co_yield step;
    own = out;
  }
  if (s.avg()) {
    co_yield prog.emit(scale_step(out.at(range), 1.0 / s.p), ready);
    ready = prog.last();
  }
  for (std::size_t i = rings.size(); i-- > 0;)
    for (StepStream phase = ring_all_gather(prog, rings[i], ranges[i], out, ready, ready);
         phase.next(step);)
      co_yield step;
}

} // namespace ddlsim::coll::gen
