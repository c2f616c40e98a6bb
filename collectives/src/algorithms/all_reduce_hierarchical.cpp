// all_reduce "hierarchical": the three-phase all-reduce of Jia et al. 2018 ("Highly scalable
// deep learning training system with mixed-precision: training ImageNet in four minutes",
// arXiv:1807.11205): reduce inside each node to its leader (its first rank), ring all-reduce
// across the N node leaders, broadcast inside each node.
//
// Nodes come from call.node_of_rank (each node's ranks consecutive; empty = one rank per node)
// and may differ in size. Inside a node of L ranks both intra-node phases are pipelined chains,
// chosen over a tree because a chain moves every byte over each intra-node hop once per
// direction, which is what large gradients need: the reduce runs local L-1 -> ... -> 1 -> 0,
// each rank adding its input, and the broadcast runs 0 -> 1 -> ... -> L-1 on the opposite
// direction of the same links. The three phases overlap. params.chunks = C cuts the channel's
// slice into C chunks; the leader ring cuts each chunk into N blocks and moves all C chunks at
// each step (C transfers in flight, as the chunked ring). The chains move the blocks in
// K = min(N, 16) groups per chunk, in the order the leader's ring consumes them (blocks pos-1,
// pos-2, ..., pos for the leader of node pos; a group that wraps past block 0 is split in two),
// so that each ring step waits only for the group it reads; the broadcast chain takes each
// group as soon as the ring has finished it (blocks pos, pos-1, ..., pos+1). A chain thus has
// O(C·K) steps however many nodes there are; the leaders' ring has 4(N-1)·C.
//
// Cost with intra-node α_i, β_i and inter-node α_o, β_o, m = n/(C·K) bytes per chain piece:
//   reduce chain    (L-1 + C·K-1)(α_i + m·β_i + m·γ)       streaming into
//   leader ring     2(N-1)α_o + 2n(N-1)/N·β_o + n(N-1)/N·γ streaming into
//   broadcast chain (L-1 + C·K-1)(α_i + m·β_i);
// once pipelined, about the slowest of the three plus the fill of the others. Only 2n(N-1)/N
// bytes leave a node (one ring hop per node per step, on the leader's link), and the latency
// term is 2(N-1) inter-node steps instead of the flat ring's 2(p-1). params.channels runs
// independent copies on slices of the buffer. avg: each leader scales its finished block.
#include "phases.hpp"
#include "registry.hpp"

#include <algorithm>
#include <utility>
#include <vector>

namespace ddlsim::coll::gen {

namespace {

// Groups of ring blocks moved by the intra-node chains, at most this many per chunk: enough to
// overlap the chains with the ring, few enough that a chain has O(chunks) steps however many
// nodes there are.
constexpr int kChainGroups = 16;

// An order of the N ring blocks: index i names block (origin - i) mod N. The indices are cut
// into K groups (partition()), and a group that straddles `wrap` (the first index whose block
// wrapped past 0) is split there, so that each unit is a contiguous run of blocks.
struct BlockOrder {
  int N = 1, K = 1, origin = 0, wrap = 1;
  // The split of N indices into K groups (N / K and N % K) and the one group that straddles the
  // wrap (K if none), worked out once: the leaders' ring asks ordinal() at every step.
  int base = 1, extra = 0, split = 1;

  BlockOrder(int n, int k, int origin_block, int first_wrapped)
      : N(n), K(k), origin(origin_block), wrap(first_wrapped), base(n / k), extra(n % k) {
    // Only the group holding index `wrap` can straddle it, and does unless `wrap` is its first.
    split = K;
    if (wrap < N && begin(group_of(wrap)) < wrap) split = group_of(wrap);
  }
  int begin(int h) const { return h * base + std::min(h, extra); } // partition(N, K, h).begin
  bool straddles(int h) const { return h == split; }
  int group_of(int i) const {
    return i < extra * (base + 1) ? i / (base + 1) : extra + (i - extra * (base + 1)) / base;
  }
  // Unit s (0 or 1) of group h as indices [first, second); empty if the group is not split.
  std::pair<int, int> unit(int h, int s) const {
    if (!straddles(h)) return s == 0 ? std::pair{begin(h), begin(h + 1)} : std::pair{0, 0};
    return s == 0 ? std::pair{begin(h), wrap} : std::pair{wrap, begin(h + 1)};
  }
  // Units before the one holding index i (per chunk): one per earlier group, plus the second
  // unit of an earlier split group, plus one if i is in the second unit of its own.
  int ordinal(int i) const {
    const int h = group_of(i);
    return h + (split < h ? 1 : 0) + (split == h && i >= wrap ? 1 : 0);
  }
  int units() const { return ordinal(N - 1) + 1; }
  // The blocks [lo, hi) of indices [a, b), which do not straddle the wrap.
  std::pair<int, int> blocks(int a, int b) const {
    const int shift = a >= wrap ? N : 0;
    return {origin - b + 1 + shift, origin - a + 1 + shift};
  }
};

StepStream hierarchical(Shape s, NodeOf node, int left_leader, int right_leader) {
  Program prog(s.channel);
  const ElementRange slice = s.channel_share(s.all());
  const int C = s.chunks, L = node.size, N = node.nodes, pos = node.node;
  const int local = s.rank - node.first;
  const Ring ring{pos, N, left_leader, right_leader};
  const int K = std::min(N, kChainGroups);
  // The chain reduce delivers blocks in the order the leader's ring consumes them (pos-1,
  // pos-2, ..., pos); the broadcast moves them in the order the ring finishes them (pos, pos-1,
  // ..., pos+1).
  const BlockOrder reduce_order(N, K, pos - 1, pos), finish_order(N, K, pos, pos + 1);
  // Chunk j of the slice.
  auto chunk = [slice, C](int j) { return sub(slice, std::uint64_t(C), std::uint64_t(j)); };
  // Chunk j of the blocks of indices [a, b) of an order.
  auto run = [&chunk, N](const BlockOrder& order, std::pair<int, int> indices, int j) {
    const auto [lo, hi] = order.blocks(indices.first, indices.second);
    const ElementRange c = chunk(j);
    const ElementRange span =
        parts_span(c.size(), std::uint64_t(N), std::uint64_t(lo), std::uint64_t(hi));
    return ElementRange{c.begin + span.begin, c.begin + span.end};
  };
  const Place in{Buffer::input, 0, s.e}, out{Buffer::output, 0, s.e};
  // Every step is built in this one object and yielded from it: g++ 12 gives the temporary of
  // each `co_yield prog.emit(send_step(...))` its own 120-byte frame slot, and at 16k ranks the
  // frame lines a resume touches are cache misses. Built here, the builders' temporaries do
  // not outlive their statement and stay off the frame.
  Step step;

  if (local > 0) { // a chain member: reduce toward the leader, then pass the broadcast on
    const bool tail = local == L - 1;
    const int up = s.rank - 1, down = s.rank + 1;
    for (int h = 0; h < K; ++h)
      for (int part = 0; part < 2; ++part) {
        const auto indices = reduce_order.unit(h, part);
        if (indices.first == indices.second) continue;
        for (int j = 0; j < C; ++j) {
          const ElementRange r = run(reduce_order, indices, j);
          if (tail) {
            step = send_step(up, in.at(r));
            co_yield prog.emit(std::move(step));
          } else {
            step = recv_reduce_step(down, in.at(r), out.at(r));
            co_yield prog.emit(std::move(step));
            step = send_step(up, out.at(r));
            co_yield prog.emit(std::move(step), prog.last());
          }
        }
      }
    // The broadcast overwrites what the reduce sent from the output: wait for the last send
    // (the sends complete in order, and the ring needs all of them before anything comes back).
    const std::uint32_t sent = tail ? kNoStep : prog.last();
    for (int h = 0; h < K; ++h)
      for (int part = 0; part < 2; ++part) {
        const auto indices = finish_order.unit(h, part);
        if (indices.first == indices.second) continue;
        for (int j = 0; j < C; ++j) {
          const ElementRange r = run(finish_order, indices, j);
          step = recv_step(up, out.at(r));
          co_yield prog.emit(std::move(step), sent);
          if (!tail) {
            step = send_step(down, out.at(r));
            co_yield prog.emit(std::move(step), prog.last());
          }
        }
      }
    co_return;
  }

  if (L == 1 && N == 1) { // one rank
    step = copy_step(in.at(slice), out.at(slice));
    co_yield prog.emit(std::move(step));
    if (s.avg()) {
      step = scale_step(out.at(slice), 1.0 / s.p);
      co_yield prog.emit(std::move(step), prog.last());
    }
    co_return;
  }
  // The leader. First the chain's receives (steps 0.., in reduce order), all posted at once.
  if (L > 1)
    for (int h = 0; h < K; ++h)
      for (int part = 0; part < 2; ++part) {
        const auto indices = reduce_order.unit(h, part);
        if (indices.first == indices.second) continue;
        for (int j = 0; j < C; ++j) {
          const ElementRange r = run(reduce_order, indices, j);
          step = recv_reduce_step(s.rank + 1, in.at(r), out.at(r));
          co_yield prog.emit(std::move(step));
        }
      }
  // The leaders' ring runs at every one of its 4(N-1)·C steps, so it computes ring blocks,
  // chain ordinals and broadcast unit ends incrementally, without the divisions of sub(),
  // ring.mod() and BlockOrder::group_of(); each gives exactly what those would.
  // Per chunk j: where it starts, how sub(chunk(j), N, b) cuts it, and the step that last
  // wrote the block of chunk j this leader handles next.
  struct ChunkState {
    std::uint64_t begin, base, extra;
    std::uint32_t last;
  };
  std::vector<ChunkState> chunks(static_cast<std::size_t>(C));
  for (int j = 0; j < C; ++j) {
    const ElementRange c = chunk(j);
    chunks[std::size_t(j)] = {c.begin, c.size() / std::uint64_t(N), c.size() % std::uint64_t(N), 0};
  }
  // piece(b, j): ring block b (any integer, taken mod N) of chunk j.
  auto block = [&chunks, N](long long b, int j) {
    while (b < 0) b += N;
    while (b >= N) b -= N;
    const ChunkState& c = chunks[std::size_t(j)];
    const auto m = static_cast<std::uint64_t>(b);
    const std::uint64_t begin = c.begin + m * c.base + (m < c.extra ? m : c.extra);
    return ElementRange{begin, begin + c.base + (m < c.extra ? 1 : 0)};
  };
  // Groups of an order walked by index 0, 1, 2, ...: the group of index i, kept up to date.
  struct GroupWalk {
    const BlockOrder& order;
    int group = 0, end = order.begin(1);
    int at(int i) {
      while (i >= end) end = order.begin(++group + 1);
      return group;
    }
  };
  // The chain receive holding ring block pos-1-i of chunk j: ordinal(i) * C + j.
  const int split = reduce_order.split;
  auto ordinal = [&reduce_order, split](int i, int h) {
    return h + (split < h ? 1 : 0) + (split == h && i >= reduce_order.wrap ? 1 : 0);
  };
  const Place own = L > 1 ? out : in;
  for (int j = 0; j < C; ++j)
    chunks[std::size_t(j)].last = L > 1 ? std::uint32_t(ordinal(0, 0) * C + j) : kNoStep;
  GroupWalk reduce_groups{reduce_order};
  for (int t = 0; t < N - 1; ++t) { // ring reduce-scatter among the leaders: ends with block pos
    const int chain_unit = ordinal(t + 1, reduce_groups.at(t + 1));
    for (int j = 0; j < C; ++j) {
      ChunkState& c = chunks[std::size_t(j)];
      step = send_step(ring.right, (t == 0 ? own : out).at(block(pos - t - 1, j)));
      co_yield prog.emit(std::move(step), c.last);
      const ElementRange into = block(pos - t - 2, j);
      step = recv_reduce_step(ring.left, own.at(into), out.at(into));
      co_yield prog.emit(std::move(step), L > 1 ? std::uint32_t(chain_unit * C + j) : kNoStep);
      c.last = prog.last();
    }
  }
  if (s.avg())
    for (int j = 0; j < C; ++j) {
      step = scale_step(out.at(block(pos, j)), 1.0 / s.p);
      co_yield prog.emit(std::move(step), chunks[std::size_t(j)].last);
      chunks[std::size_t(j)].last = prog.last();
    }
  // Ring all-gather. Before its step t the blocks of finish indices 0..t are done; a broadcast
  // unit ending at index t goes down the chain then, with the same wait as the ring send.
  auto unit_start = [&finish_order](int i, int h) {
    return finish_order.straddles(h) && i >= finish_order.wrap ? finish_order.wrap
                                                               : finish_order.begin(h);
  };
  GroupWalk finish_groups{finish_order};
  for (int t = 0; t < N; ++t) {
    const int h = finish_groups.at(t);
    const bool ends_unit = t + 1 == finish_groups.end || t + 1 == finish_order.wrap;
    for (int j = 0; j < C; ++j) {
      ChunkState& c = chunks[std::size_t(j)];
      const std::uint32_t have = c.last;
      if (L > 1 && ends_unit) {
        step = send_step(s.rank + 1, out.at(run(finish_order, {unit_start(t, h), t + 1}, j)));
        co_yield prog.emit(std::move(step), have);
      }
      if (t == N - 1) continue;
      step = send_step(ring.right, out.at(block(pos - t, j)));
      co_yield prog.emit(std::move(step), have);
      step = recv_step(ring.left, out.at(block(pos - t - 1, j)));
      co_yield prog.emit(std::move(step));
      c.last = prog.last();
    }
  }
}

class Hierarchical final : public PhasedGenerator {
public:
  Hierarchical()
      : PhasedGenerator("hierarchical", Op::all_reduce,
                        "pipelined chain reduce to each node's leader, ring all-reduce across "
                        "leaders, chain broadcast in the node (nodes from node_of_rank); "
                        "2n(N-1)/N·β_inter + 2(L-1+C)(α + n/C·β)_intra; uses chunks, channels "
                        "(Jia et al. 2018)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, true, true);
    check_params(call, kUsesNone);
    check_node_layout(call);
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    const NodeOf node = node_of(call, rank);
    const int left = node_first_rank(call, (node.node + node.nodes - 1) % node.nodes);
    const int right = node_first_rank(call, (node.node + 1) % node.nodes);
    return hierarchical(shape_of(call, rank, channel), node, left, right);
  }
};

} // namespace

const Algorithm& all_reduce_hierarchical() {
  static const Hierarchical algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
