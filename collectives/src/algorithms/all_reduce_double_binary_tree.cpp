// all_reduce "double_binary_tree": NCCL's double binary tree (Sanders, Speck & Träff 2009,
// "Two-tree algorithms for full bandwidth broadcast, reduction and scan"; NCCL 2.4). Two binary
// trees over the nodes, each carrying half of the data: tree 0 is NCCL's in-order tree (node
// v's parent and children found from its lowest set bit, root 0 with a single child); tree 1 is
// its mirror v -> N-1-v for an even node count N, or its shift v -> v+1 for odd N, so that
// (almost) every node is a leaf in one tree and an inner vertex in the other, and both trees
// together load every node's links evenly. As in NCCL, the ranks of a node (call.node_of_rank,
// each node's ranks consecutive; empty = one rank per node, i.e. trees over the ranks) form a
// chain local L-1 -> ... -> 0 whose head (local 0) is the node's vertex in the trees. Each tree
// reduces its half up (chain into the head, child heads into the head, head to parent head) and
// broadcasts it back down the same way.
//
// params.chunks = C pipelines each half in C chunks: a rank receives chunk j from all the ranks
// below it at once (the first is receive-reduced into the output, the others land in scratch
// slots and are added locally, as NCCL receives into per-peer buffers), sends the sum up, and
// later receives the final chunk j and sends it down. Scratch: one buffer-sized slot per child
// beyond the first (0 to 2 slots). A rank's program interleaves the reduce of chunk
// i with the broadcast of chunk i - D, D = H + depth - height (+2 per chain hop below the
// head; H = ⌈lg N⌉ the tree's height): how many chunks later the broadcast of a chunk comes
// back, so that in-order issue never holds the upward stream behind a broadcast. The two trees
// are separate channels: channels(call) = 2·params.channels (program channel 2k+t is tree t on
// slice k of the buffer).
//
// Cost: the latency of a tree, 2⌈lg N⌉ inter-node hops (+2(L-1) chain hops), with full
// bandwidth once pipelined. Per tree and chunk an inner vertex receives 2 chunks and sends 1 up,
// then receives 1 and sends 2 down; with both trees every node moves about 2n bytes each way,
// as a ring does. For large C, with one rank per node:
//   ≈ 2(⌈lg p⌉ + C)α + 2n·β + n·γ,
// and unpipelined (C = 1) about 2⌈lg p⌉(α + n/2·β) + ⌈lg p⌉·n·γ (each hop moves a half, and
// an inner vertex's two children share its link). avg: each root scales its chunks.
#include "phases.hpp"
#include "registry.hpp"

#include <algorithm>
#include <array>
#include <bit>

namespace ddlsim::coll::gen {

namespace {

// NCCL's binary tree on virtual ranks 0..p-1 (ncclGetBtree): -1 where there is none.
struct Btree {
  int parent = -1, child0 = -1, child1 = -1;
};
Btree btree(int p, int v) {
  Btree t;
  if (v == 0) {
    if (p > 1) t.child1 = int(std::bit_ceil(unsigned(p)) >> 1);
    return t;
  }
  const int bit = v & -v;
  t.parent = (v ^ bit) | (bit << 1);
  if (t.parent >= p) t.parent = v ^ bit;
  int low = bit >> 1;
  if (low == 0) return t;
  t.child0 = v - low;
  while (low > 0 && v + low >= p) low >>= 1;
  if (low > 0) t.child1 = v + low;
  return t;
}
int depth(int p, int v) {
  int d = 0;
  for (; v != 0; ++d) v = btree(p, v).parent;
  return d;
}
// Height of v's subtree: its left subtree is always complete, so log2 of v's lowest set bit.
int height(int p, int v) {
  return v == 0 ? std::bit_width(std::bit_ceil(unsigned(p))) - 1 : std::countr_zero(unsigned(v));
}

// This rank's neighbours in one tree: where its partial sums go (-1 at the root) and the ranks
// it reduces from and broadcasts to (its chain successor, then its child nodes' heads).
struct TreeLinks {
  int up = -1;
  std::array<int, 3> down{-1, -1, -1}; // an array: an initializer_list cannot cross co_yield
  int lag = 0;
};

TreeLinks tree_links(const CollectiveCall& call, int rank, int tree) {
  const NodeOf node = node_of(call, rank);
  const int local = rank - node.first, N = node.nodes;
  const bool mirror = N % 2 == 0;
  const int v = tree == 0 ? node.node : mirror ? N - 1 - node.node : (node.node + N - 1) % N;
  auto head = [&](int u) {
    return u < 0 ? -1 : node_first_rank(call, tree == 0 ? u : mirror ? N - 1 - u : (u + 1) % N);
  };
  TreeLinks links;
  if (local + 1 < node.size) links.down[0] = rank + 1;
  if (local > 0) {
    links.up = rank - 1;
  } else {
    const Btree t = btree(N, v);
    links.up = head(t.parent);
    links.down[1] = head(t.child0);
    links.down[2] = head(t.child1);
  }
  links.lag = height(N, 0) + depth(N, v) - height(N, v) + 2 * local;
  return links;
}

StepStream double_binary_tree(Shape s, int channels, TreeLinks links) {
  Program prog(s.channel);
  const int tree = s.channel % 2, C = s.chunks;
  const ElementRange half = sub(sub(s.all(), std::uint64_t(channels), std::uint64_t(s.channel / 2)),
                                2, std::uint64_t(tree));
  const Place in{Buffer::input, 0, s.e}, out{Buffer::output, 0, s.e};
  auto slot = [&s](int k, ElementRange range) {
    return Place{Buffer::scratch, std::uint64_t(k) * s.n * s.e, s.e}.at(range);
  };
  const int parent = links.up, lag = links.lag;
  const std::array<int, 3> kids = links.down;
  const int children = int(std::count_if(kids.begin(), kids.end(), [](int k) { return k >= 0; }));
  const bool root = parent < 0;
  if (root && children == 0) { // one rank
    co_yield prog.emit(copy_step(in.at(half), out.at(half)));
    co_return;
  }
  // Steps per chunk of each phase, so that step indices of earlier chunks are arithmetic.
  const int extra = std::max(0, children - 1); // children received into scratch
  const int up_steps = children + extra + (root ? (s.avg() ? 1 : 0) : 1);
  const int down_steps = (root ? 0 : 1) + children;
  // The last step of chunk j's reduce: its send up, or at the root the finished chunk.
  auto reduce_end = [=](int j) {
    return std::uint32_t(j * up_steps + std::max(0, j - lag) * down_steps + up_steps - 1);
  };
  auto piece = [half, C](int j) { return sub(half, std::uint64_t(C), std::uint64_t(j)); };

  for (int i = 0; i < C + lag; ++i) {
    if (i < C) { // reduce chunk i toward the root
      const BufferRange mine = in.at(piece(i)), acc = out.at(piece(i));
      // The first child is added as it arrives; the others land in scratch slots (indexed like
      // the buffer, one per extra child) at the same time and are added locally.
      std::uint32_t last = kNoStep;
      std::array<std::uint32_t, 3> got{kNoStep, kNoStep, kNoStep};
      int received = 0;
      for (int child : kids) {
        if (child < 0) continue;
        if (received == 0)
          co_yield prog.emit(recv_reduce_step(child, mine, acc));
        else
          co_yield prog.emit(recv_step(child, slot(received - 1, piece(i))));
        got[std::size_t(received++)] = prog.last();
      }
      last = got[0];
      for (int k = 1; k < received; ++k) {
        co_yield prog.emit(reduce_step(slot(k - 1, piece(i)), acc), last, got[std::size_t(k)]);
        last = prog.last();
      }
      const bool have = received > 0;
      if (root && s.avg()) co_yield prog.emit(scale_step(acc, 1.0 / s.p), last);
      if (!root) co_yield prog.emit(send_step(parent, have ? acc : mine), last);
    }
    if (i >= lag) { // broadcast chunk j down
      const int j = i - lag;
      const BufferRange acc = out.at(piece(j));
      std::uint32_t ready = reduce_end(j);
      if (!root) {
        // Overwrites the output the send up read (a leaf sent its input: no wait).
        co_yield prog.emit(recv_step(parent, acc), children > 0 ? ready : kNoStep);
        ready = prog.last();
      }
      for (int child : kids)
        if (child >= 0) co_yield prog.emit(send_step(child, acc), ready);
    }
  }
}

class DoubleBinaryTree final : public PhasedGenerator {
public:
  DoubleBinaryTree()
      : PhasedGenerator("double_binary_tree", Op::all_reduce,
                        "two complementary binary trees over the nodes (a chain inside each "
                        "node), each reducing and broadcasting half the data, pipelined in "
                        "chunks; ≈ 2(⌈lg p⌉ + C)α + 2nβ + nγ; uses chunks, channels (2 per "
                        "channel) (Sanders et al. 2009; NCCL)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, true, true);
    check_params(call, kUsesNone);
    check_node_layout(call);
    if (call.params.channels > 128)
      reject("double_binary_tree runs two trees per channel; use at most 128 channels, not " +
             std::to_string(call.params.channels));
  }
  int channels(const CollectiveCall& call) const override { return 2 * call.params.channels; }
  // One buffer-sized slot per child beyond the first, in the tree where the rank has most.
  std::uint64_t scratch_bytes(const CollectiveCall& call, int rank) const override {
    int most = 0;
    for (int tree : {0, 1}) {
      const TreeLinks links = tree_links(call, rank, tree);
      most = std::max(most, int(std::count_if(links.down.begin(), links.down.end(),
                                              [](int k) { return k >= 0; })));
    }
    return std::uint64_t(std::max(0, most - 1)) * call.bytes;
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return double_binary_tree(shape_of(call, rank, channel), call.params.channels,
                              tree_links(call, rank, channel % 2));
  }
};

} // namespace

const Algorithm& all_reduce_double_binary_tree() {
  static const DoubleBinaryTree algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
