// all_reduce "nvls_tree": NCCL's NVLS-Tree across nodes (NCCL 2.30.7 src/device/all_reduce.h,
// RunWorkColl<ncclFuncAllReduce, ..., NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE>; trees from
// src/graph/connect.cc, connectNvls, and src/graph/trees.cc, ncclGetDtree): NVLS inside each
// node, a binary tree across nodes per shard, each shard's tree run by the GPUs that own it over
// their own NICs.
//
// Nodes come from node_of_rank (N nodes of L consecutive ranks, all the same size; empty = one
// rank per node). Every chunk of the channel's slice is cut into L shards; local rank l owns
// shard l in every node (NCCL's NVLS head l: nvls.headRank), so the N owners of shard l form the
// tree of that shard. Channel c runs tree c mod 2 of NCCL's double binary tree over the nodes
// (connect.cc: "channel->nvls.treeUp = treeUp[c % 2]"): tree 0 is ncclGetBtree, tree 1 its mirror
// v -> N-1-v (even N) or its shift v -> v+1 (odd N), so a node inner in one tree is a leaf in the
// other and both trees together load every NIC alike.
//
// Per chunk j, as NCCL's warp groups do (scatter/reduce/bcast/gather, handing chunks on through
// NCCL_STEPS slots): the node's switch reduces shard l to its owner (switch_reduce; NCCL's
// "scatter" through nvls->up and its reduce warps' receive from nvls->down, treeDown[0]); the owner
// receive-reduces the partial sums of its child nodes' owners (treeDown[1..2]; the first into the
// output as it arrives, the second into a scratch slot, added locally) and sends the sum to its
// parent's owner (treeUp), or at the root has the final shard; the owner then receives the final
// shard from its parent, sends it to its children and multicasts it in its node
// (switch_multicast; NCCL's bcast warps and "gather"). The up and down streams run at once, in
// blocks of up to NCCL_STEPS = 8 chunks (a connection's slots); the broadcast of block b is
// issued `lag` blocks after its reduce (tree.hpp's lag: the levels to the root and back), so
// in-order issue does not hold the upward stream behind a broadcast. Per block a rank posts
// all its receives (from the child nodes for block b, from the parent for block b - lag) before
// any step that waits for data, so every receive is posted before its data can arrive and a
// block costs one hop latency per level, not one per chunk or two per block. The switch reduces
// of block b + 1 follow those receives, once block b's are done: the switch works on one block
// while the network carries the one before, as NCCL's scatter and reduce warps feed the switch up
// to NCCL_STEPS chunks ahead of the network (src/device/prims_simple.h, waitPeer) without waiting
// for the tree's broadcast. L = 1 has no switch steps (the shard is the chunk, copied to the
// output); N = 1 is a one-node NVLS program.
//
// Cost. A chunk climbs ⌈lg N⌉ tree levels and comes back: 2·⌈lg N⌉ inter-node hops, the count
// NCCL's tuner charges (src/graph/tuning.cc: intraLat + 2·log2i(nNodes)·interLat for
// NVLS_TREE), against 2(N-1) for a ring across the owners. Bytes per shard of m bytes: a leaf
// owner sends m up and receives m; an inner owner receives 2m from its children, sends m up,
// receives m and sends 2m down. Over both trees (C even) each NIC carries about 2m each way per
// pair of channels; with n bytes, intra rate B_i, NIC rate B_o, pipelined over K chunks, the
// switch and the network overlapping (one block apart):
//   T ≈ max((n + n/L)/B_i, 2(n/L)/B_o) + (2⌈lg N⌉ + B - 1)·α_inter + the first and last blocks'
// turn on the other resource  (N > 2; for N = 2 (n/L)/B_o, the one exchange each way NCCL's
// tuner doubles NVLS-Tree's inter-node rate for), B the blocks of slot_blocks (13 for K = 64:
// the first block's round trip, then one hop per block).
// avg: the root owner scales its shard by 1/p before sending it down.
#include "nvls.hpp"
#include "phases.hpp"
#include "registry.hpp"
#include "tree.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace ddlsim::coll::gen {
namespace {

// The links of `rank` in the tree of its shard on `channel` (nodes of L ranks, N nodes).
TreeLinks nvls_tree_links(int rank, int channel, int L, int N) {
  const int node = rank / L, local = rank % L;
  const int tree = channel % 2;
  const bool mirror = N % 2 == 0;
  const int v = tree == 0 ? node : mirror ? N - 1 - node : (node + N - 1) % N;
  auto owner_of = [&](int u) { // the owner of this shard in the node at tree vertex u, or -1
    if (u < 0) return -1;
    const int m = tree == 0 ? u : mirror ? N - 1 - u : (u + 1) % N;
    return m * L + local;
  };
  const Btree t = btree(N, v);
  TreeLinks links;
  links.up = owner_of(t.parent);
  links.down[0] = owner_of(t.child0);
  links.down[1] = owner_of(t.child1);
  links.lag = tree_height(N, 0) + tree_depth(N, v) - tree_height(N, v);
  return links;
}

// Chunks a connection has in flight: NCCL_STEPS, the slots of one connection
// (src/include/device.h, NCCL 2.30.7). NCCL's NVLS-Tree runs its reduce-and-send-up and
// receive-and-broadcast parts in separate warp groups (src/device/all_reduce.h), each handing
// chunks on through such slots, so the upward stream never waits for the downward one and up to
// NCCL_STEPS chunks cross each hop at once. A program issues in order, so the chunks go in
// blocks of up to this many: a block's chunks cross a hop together and the tree's lag counts
// blocks, so a hop's latency is paid once per block, not once per chunk.
constexpr int kSlots = 8;

// The first chunk of each block, then the chunk count. Blocks grow 1, 2, 4, ... up to kSlots from
// the front and shrink likewise towards the back, so that the pipeline fills and drains chunk
// by chunk while the full blocks in the middle keep kSlots chunks in flight.
std::vector<int> slot_blocks(int chunks) {
  std::vector<int> front, back;
  int left = chunks;
  for (int size = 1; left > 0; size = std::min(2 * size, kSlots)) {
    front.push_back(std::min(size, left));
    left -= front.back();
    if (left == 0) break;
    back.push_back(std::min(size, left));
    left -= back.back();
  }
  std::vector<int> starts{0};
  for (int size : front) starts.push_back(starts.back() + size);
  for (auto it = back.rbegin(); it != back.rend(); ++it) starts.push_back(starts.back() + *it);
  return starts;
}

// The program of one rank: the shard tree of `links` over the node's switch (see the top), the
// chunks in slot_blocks; links.lag counts blocks.
StepStream nvls_tree_program(Shape s, int L, TreeLinks links) {
  Program prog(s.channel);
  const int local = s.rank % L, first = s.rank - local;
  const ElementRange slice = s.channel_share(s.all());
  const auto chunks = std::uint64_t(s.chunks), shards = std::uint64_t(L);
  const Place in{Buffer::input, 0, s.e}, out{Buffer::output, 0, s.e};
  auto shard = [&](int j, int i) {
    return sub(sub(slice, chunks, std::uint64_t(j)), shards, std::uint64_t(i));
  };
  auto slot = [&s](int k, ElementRange range) {
    return Place{Buffer::scratch, std::uint64_t(k) * s.n * s.e, s.e}.at(range);
  };
  const int parent = links.up, lag = links.lag;
  const std::array<int, 3> kids = links.down;
  const bool root = parent < 0;
  // Where the final shard is (received from the parent, or at the root the reduced shard).
  auto down = [&](ElementRange range) { return root || L == 1 ? out.at(range) : slot(1, range); };
  const std::vector<int> starts = slot_blocks(s.chunks);
  const int blocks = int(starts.size()) - 1;
  // Per chunk: the switch reduce of this rank's shard, and the step after which the shard holds
  // the sum below it (its send up, or at the root the finished shard); then its receive from
  // the parent.
  std::vector<std::uint32_t> own(std::size_t(s.chunks), kNoStep),
      reduced(std::size_t(s.chunks), kNoStep);
  // Per chunk of the block being reduced: its receives from the child nodes.
  std::vector<std::array<std::uint32_t, 3>> got;
  // The switch reduce of shard k of chunk j (L = 1: the chunk copied to the output).
  auto switch_reduce = [&](int j, int k) {
    const ElementRange r = shard(j, k);
    if (L == 1) return copy_step(in.at(r), out.at(r));
    return switch_reduce_step(first + k, in.at(r), k == local ? out.at(r) : BufferRange{}, L);
  };
  // The last switch reduce emitted: the next block's wait for the switch.
  std::uint32_t switched = kNoStep;
  Step step;
  for (int j = 0; j < starts[1]; ++j) // block 0's switch reduces open the program
    for (int k = 0; k < L; ++k) {
      if (shard(j, k).size() == 0) continue; // every rank skips it alike
      co_yield prog.emit(switch_reduce(j, k));
      if (k == local) own[std::size_t(j)] = prog.last();
      switched = prog.last();
    }
  for (int i = 0; i < blocks + lag; ++i) {
    if (i < blocks) { // reduce block i toward the root
      const int begin = starts[std::size_t(i)], end = starts[std::size_t(i) + 1];
      got.assign(std::size_t(end - begin), {kNoStep, kNoStep, kNoStep});
      // The receives of the whole block from the child nodes first, so that the block's
      // chunks cross the hop together (their latencies overlap in the connection's slots); a
      // receive posted only after the previous chunk's send up started would wait for that
      // chunk's arrival, one hop latency per chunk.
      for (int j = begin; j < end; ++j) {
        const ElementRange r = shard(j, local);
        if (r.size() == 0) continue;
        const BufferRange acc = out.at(r);
        int received = 0;
        for (int child : kids) {
          if (child < 0) continue;
          if (received == 0)
            co_yield prog.emit(recv_reduce_step(child, acc, acc), own[std::size_t(j)]);
          else
            co_yield prog.emit(recv_step(child, slot(received - 1, r)));
          got[std::size_t(j - begin)][std::size_t(received++)] = prog.last();
        }
      }
    }
    // Then the receives of block i - lag from the parent, before this block's reduces and sends
    // up wait for the children: a receive posted only after those would add a hop latency per
    // block. With L > 1 they land in a scratch slot (NCCL receives into its connection buffer)
    // and wait for nothing; with L = 1 in the output, after the send up that read it.
    if (i >= lag && !root)
      for (int j = starts[std::size_t(i - lag)]; j < starts[std::size_t(i - lag) + 1]; ++j) {
        const ElementRange r = shard(j, local);
        if (r.size() == 0) continue;
        co_yield prog.emit(recv_step(parent, down(r)), L > 1 ? kNoStep : reduced[std::size_t(j)]);
        reduced[std::size_t(j)] = prog.last();
      }
    // Block i + 1's switch reduces, once the last of block i's is done (they share the NVLinks
    // and end together; the switch works on one block while the network carries the one before)
    // and before any step of block i that waits for the network: NCCL's scatter and reduce warps
    // feed the switch apart from the warps that wait for the tree (src/device/all_reduce.h), so the
    // switch never idles behind a network transfer. Issued after those steps, as block i's first
    // step, each block's switch reduces would start only when the network delivered block i - 1
    // (the root's broadcast, a leaf's multicast wait for it), and the switch and the network would
    // take turns.
    if (i + 1 < blocks) {
      const std::uint32_t after = switched;
      for (int j = starts[std::size_t(i) + 1]; j < starts[std::size_t(i) + 2]; ++j)
        for (int k = 0; k < L; ++k) {
          if (shard(j, k).size() == 0) continue;
          co_yield prog.emit(switch_reduce(j, k), after);
          if (k == local) own[std::size_t(j)] = prog.last();
          switched = prog.last();
        }
    }
    if (i < blocks) { // block i: add the children's sums, send up
      const int begin = starts[std::size_t(i)], end = starts[std::size_t(i) + 1];
      for (int j = begin; j < end; ++j) {
        const ElementRange r = shard(j, local);
        if (r.size() == 0) continue;
        const BufferRange acc = out.at(r);
        const auto& mine = got[std::size_t(j - begin)];
        const int received = int(
            std::count_if(mine.begin(), mine.end(), [](std::uint32_t k) { return k != kNoStep; }));
        std::uint32_t last = received > 0 ? mine[0] : own[std::size_t(j)];
        for (int k = 1; k < received; ++k) {
          co_yield prog.emit(reduce_step(slot(k - 1, r), acc), last, mine[std::size_t(k)]);
          last = prog.last();
        }
        if (root && s.avg()) {
          co_yield prog.emit(scale_step(acc, 1.0 / s.p), last);
          last = prog.last();
        }
        if (!root) {
          co_yield prog.emit(send_step(parent, acc), last);
          last = prog.last();
        }
        reduced[std::size_t(j)] = last;
      }
    }
    if (i < lag) continue;
    // Broadcast block i - lag down and multicast it in the node, per chunk.
    const int begin = starts[std::size_t(i - lag)], end = starts[std::size_t(i - lag) + 1];
    for (int j = begin; j < end; ++j) {
      const std::uint32_t ready = reduced[std::size_t(j)];
      const ElementRange r = shard(j, local);
      if (r.size() != 0)
        for (int child : kids)
          if (child >= 0) co_yield prog.emit(send_step(child, down(r)), ready);
      for (int k = 0; k < L && L > 1; ++k) {
        const ElementRange q = shard(j, k);
        if (q.size() == 0) continue;
        if (k != local)
          step = switch_multicast_step(first + k, {}, out.at(q), q.size() * s.e, L);
        else
          step = switch_multicast_step(s.rank, down(q), root ? BufferRange{} : out.at(q),
                                       q.size() * s.e, L);
        co_yield prog.emit(std::move(step), k == local ? ready : kNoStep);
      }
    }
  }
}

class NvlsTree final : public PhasedGenerator {
public:
  NvlsTree()
      : PhasedGenerator(
            "nvls_tree", Op::all_reduce,
            "NVLS in each node (switch reduce-scatter to per-GPU shards), a binary tree per "
            "shard across nodes over each GPU's NIC (both trees of NCCL's double binary tree, "
            "alternating by channel), NVLS multicast back; ≈ (2⌈lg N⌉ + B - 1)·α_inter (B "
            "blocks of up to 8 chunks) + max((n + n/L)·β_intra, 2(n/L)·β_inter) per GPU (the "
            "switch one block ahead of the network); uses chunks, channels (NCCL "
            "src/device/all_reduce.h NVLS_TREE, src/graph/connect.cc)") {}

  void check(const CollectiveCall& call) const override {
    check_common(call, true, true);
    check_params(call, kUsesNone);
    check_node_layout(call);
    if (uniform_node_size(call) == 0)
      reject("the nodes of node_of_rank differ in size; NVLS-Tree pairs the shard owners of "
             "every node, so each node needs the same number of ranks");
  }
  // Buffer-sized slots: 0 for a second child node (an inner vertex of a tree has two), 1 for
  // the final shards from the parent (L > 1).
  std::uint64_t scratch_bytes(const CollectiveCall& call, int rank) const override {
    const int L = uniform_node_size(call), N = call.ranks / L;
    if (N == 1) return 0;
    if (L > 1) return 2 * call.bytes;
    int most = 0;
    for (int c = 0; c < std::min(2, call.params.channels); ++c)
      most = std::max(most, nvls_tree_links(rank, c, L, N).children());
    return std::uint64_t(std::max(0, most - 1)) * call.bytes;
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    const int L = uniform_node_size(call), N = call.ranks / L;
    const Shape s = shape_of(call, rank, channel);
    if (N == 1) return nvls_all_reduce(s, L, 1);
    return nvls_tree_program(s, L, nvls_tree_links(rank, channel, L, N));
  }
};

} // namespace

const Algorithm& all_reduce_nvls_tree() {
  static const NvlsTree algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
