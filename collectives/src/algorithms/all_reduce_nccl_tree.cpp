// all_reduce "nccl_tree": NCCL's Tree all-reduce as NCCL runs it (NCCL 2.4 and later; checked
// against NCCL 2.30.7): a double binary tree across the nodes and a chain through the GPUs of
// each node, on C channels that each carry 1/C of the buffer, every channel pipelined in chunks
// through the whole tree, reducing up and broadcasting down at once.
//
// Trees. Across the N nodes (call.node_of_rank, each node's ranks consecutive; empty = one rank
// per node), tree 0 is NCCL's binary tree (src/graph/trees.cc, ncclGetBtree: node v's parent
// and children from its lowest set bit, root 0 with a single child) and tree 1 its mirror
// v -> N-1-v for even N, or its shift v -> v+1 for odd N (ncclGetDtree), so that almost every
// node is a leaf in one tree and an inner vertex in the other (Sanders, Speck & Träff 2009).
//
// Channels (src/graph/connect.cc). NCCL's topology search finds S channels, each a chain through
// a node's GPUs that starts at the GPU next to one NIC (src/graph/search.cc: "NET n -> GPU a ->
// GPU b -> .. -> GPU x"); ncclTopoPreset duplicates them so that channels 0..S-1 run tree 0 and
// channels S..2S-1 run tree 1 on the same chains, and further channels repeat these
// (ncclTopoPostset, copyChannels; NCCL_MAX_NCHANNELS keeps the first ones). Here, with
// C = params.channels and L the smallest node's GPU count, S = min(C, L) (a rail-aligned node has
// one NIC per GPU and the search one chain per NIC); channel c runs tree (c / S) mod 2 on chain
// k = c mod S, whose head (the node's vertex in the inter-node tree) is local rank
// floor(k·L_node / S), followed by the node's other GPUs in order (head, head+1, ..., head-1
// mod L_node). So with C >= L every GPU heads a channel and every NIC carries tree traffic, and
// C = 2L runs both trees on every NIC, as NCCL does on a DGX (S = 8 search channels, 16 or 32
// channels). With C <= L only tree 0 runs, as in NCCL when the tuner uses fewer channels than
// the search found. One rank per node: S = 1, channel c runs tree c mod 2 (C = 2 is
// double_binary_tree with one channel, step for step). The chain's head carries all of the
// node's inter-node traffic: NCCL's TREE pattern (graph.h), which NCCL's search tries on sm90 and
// later when BALANCED_TREE (parent and one child on the chain's first GPU, the other child on its
// second) does not reach full bandwidth; the balanced split over two GPUs is not modelled.
//
// Pipelining (src/device/all_reduce.h, runTreeSplit): each channel runs the reduce up and the
// broadcast down at once, chunk by chunk; params.chunks = K chunks per channel (NCCL's Tree
// chunk is a 512 KiB step of its 4 MiB Simple buffer, src/enqueue.cc). A rank receives chunk j
// from all the ranks below it at once (its chain successor, and at a head the heads of its child
// nodes), sends the sum up, and later receives the final chunk j and sends it down; the root
// sends it straight down (avg: scaled by 1/p). The program is tree.hpp's pipelined_tree, shared
// with double_binary_tree; its lag is the hops a chunk takes from a rank to the root and back:
// H + depth - height at a head and H + depth + 2k at chain position k > 0 (H = ⌈lg N⌉).
//
// Cost. A chunk's longest path climbs L-1 chain hops in a leaf node and ⌈lg N⌉ tree hops to the
// root, and comes back the same way: 2(⌈lg N⌉ + L - 1) hops, the count NCCL's tuner charges a
// tree (src/graph/tuning.cc: 2·((nRanks/nNodes - 1)·intra + log2(nNodes)·inter) latency). A hop
// of a chunk of m = n/(C·K) bytes takes α + m·β (+ m·γ going up), so with K chunks
//   T ≈ (2D + K - 1)·(α + m·β') = (2D + K - 1)α + (n/C)·β'·(1 + (2D - 1)/K),  D = ⌈lg N⌉ + L - 1,
// where β' is the slowest hop's time per byte with the channels that share its link. Bytes: per
// channel an inner head sends n/C up and n/C to each of its two child nodes and receives the
// same; a leaf head moves n/C each way; every chain GPU moves n/C each way to its neighbours.
// With both trees in equal measure (C a multiple of 2S) each node is inner in one and a leaf in the
// other, so a node's NICs carry about 2n bytes each way, spread over its min(C, L) head GPUs' NICs,
// and each GPU sends about 2n over the node's fabric, as a ring does:
//   T ≈ 2(⌈lg N⌉ + L - 1 + K)α + 2n·max(β_nic / min(C, L), β_intra) + (n/(CK))·γ
// (the reduction of a chunk overlaps the transfer of the next, so γ costs one chunk's worth).
// Unpipelined (K = 1) every hop moves the whole n/C: ≈ 2(⌈lg N⌉ + L - 1)(α + (n/C)·β') + (⌈lg N⌉
// + L - 1)(n/C)·γ; on one node with C = 1 it is exactly 2(p-1)(α + nβ) + (p-1)nγ (the chain).
// With tree 0 only (C <= L) an inner head moves 3n/C each way, a leaf n/C: unbalanced for N > 2.
#include "registry.hpp"
#include "tree.hpp"

#include <algorithm>

namespace ddlsim::coll::gen {

namespace {

// GPUs in the smallest node: NCCL takes the fewest search channels any node found.
int smallest_node_size(const CollectiveCall& call) {
  const int nodes = node_count(call);
  int smallest = call.ranks;
  for (int m = 0, first = 0; m < nodes; ++m) {
    const int next = node_first_rank(call, m + 1);
    smallest = std::min(smallest, next - first);
    first = next;
  }
  return smallest;
}

// The local rank that heads chain k of `search` chains in a node of `size` GPUs.
int chain_head(int k, int search, int size) {
  return static_cast<int>(static_cast<long long>(k) * size / search);
}

TreeLinks nccl_tree_links(const CollectiveCall& call, int rank, int channel) {
  const int C = call.params.channels;
  const int search = std::min(C, smallest_node_size(call));
  const int k = channel % search, tree = (channel / search) % 2;
  const NodeOf node = node_of(call, rank);
  const int N = node.nodes, L = node.size, local = rank - node.first;
  const int head = chain_head(k, search, L);
  const int pos = (local - head + L) % L; // position in the chain, 0 at the head
  // Tree 1 is tree 0 on relabelled nodes: mirrored (even N) or shifted by one (odd N).
  const bool mirror = N % 2 == 0;
  const int v = tree == 0 ? node.node : mirror ? N - 1 - node.node : (node.node + N - 1) % N;
  auto head_of = [&](int u) { // the head rank of tree vertex u, or -1
    if (u < 0) return -1;
    const int m = tree == 0 ? u : mirror ? N - 1 - u : (u + 1) % N;
    const int first = node_first_rank(call, m);
    return first + chain_head(k, search, node_first_rank(call, m + 1) - first);
  };
  TreeLinks links;
  if (pos + 1 < L) links.down[0] = node.first + (local + 1) % L;
  const int H = tree_height(N, 0), depth = tree_depth(N, v);
  if (pos > 0) {
    links.up = node.first + (local - 1 + L) % L;
    links.lag = H + depth + 2 * pos;
  } else {
    const Btree t = btree(N, v);
    links.up = head_of(t.parent);
    links.down[1] = head_of(t.child0);
    links.down[2] = head_of(t.child1);
    links.lag = H + depth - tree_height(N, v);
  }
  return links;
}

class NcclTree final : public PhasedGenerator {
public:
  NcclTree()
      : PhasedGenerator("nccl_tree", Op::all_reduce,
                        "NCCL's Tree: double binary tree over the nodes, a chain inside each, on "
                        "C channels whose heads sit on different GPUs (NICs), each channel "
                        "pipelined in chunks up and down at once; ≈ 2(⌈lg N⌉ + L-1 + K)α + 2nβ "
                        "+ nγ; uses chunks, channels (NCCL trees.cc, connect.cc, all_reduce.h)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, true, true);
    check_params(call, kUsesNone);
    check_node_layout(call);
  }
  // One buffer-sized slot per child beyond the first, on the channel where the rank has most
  // (channels from 2·min(C, L) on repeat the first ones).
  std::uint64_t scratch_bytes(const CollectiveCall& call, int rank) const override {
    const int distinct = std::min(call.params.channels, 2 * smallest_node_size(call));
    int most = 0;
    for (int c = 0; c < distinct; ++c)
      most = std::max(most, nccl_tree_links(call, rank, c).children());
    return std::uint64_t(std::max(0, most - 1)) * call.bytes;
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    const Shape s = shape_of(call, rank, channel);
    return pipelined_tree(s, s.channel_share(s.all()), nccl_tree_links(call, rank, channel));
  }
};

} // namespace

const Algorithm& all_reduce_nccl_tree() {
  static const NcclTree algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
