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
#include "registry.hpp"
#include "tree.hpp"

#include <algorithm>

namespace ddlsim::coll::gen {

namespace {

// This rank's neighbours in one tree: the chain inside its node (local L-1 -> ... -> 0) and, at
// the head (local 0), the heads of its parent and child nodes in tree `tree`.
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
  links.lag = tree_height(N, 0) + tree_depth(N, v) - tree_height(N, v) + 2 * local;
  return links;
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
    for (int tree : {0, 1}) most = std::max(most, tree_links(call, rank, tree).children());
    return std::uint64_t(std::max(0, most - 1)) * call.bytes;
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    // Program channel 2k+t: tree t on half t of slice k.
    const Shape s = shape_of(call, rank, channel);
    const ElementRange half =
        sub(sub(s.all(), std::uint64_t(call.params.channels), std::uint64_t(channel / 2)), 2,
            std::uint64_t(channel % 2));
    return pipelined_tree(s, half, tree_links(call, rank, channel % 2));
  }
};

} // namespace

const Algorithm& all_reduce_double_binary_tree() {
  static const DoubleBinaryTree algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
