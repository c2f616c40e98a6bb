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
// Programs. NCCL runs NVLS-Tree in four warp groups per channel, each with its own connections
// of NCCL_STEPS = 8 slots (src/device/all_reduce.h: scatter, gather, reduce, bcast; the root has
// no bcast group, its reduce group sends down). Across nodes every NCCL channel c here runs four
// programs per rank, program channel 4c + lane (channels(call) = 4·params.channels), linked by
// cross-program waits (rule 1 of step.hpp) only where data passes from one to the other:
//  - scatter (lane 0): the switch reduces of every shard of chunk j (switch_reduce; NCCL's
//    scatter through nvls->up and the reduce warps' load from nvls->down, treeDown[0]), at most
//    kSwitchInFlight chunks of a shard in the switch at a time; the own shard's reduce of chunk
//    j also waits until the up lane has passed chunk j - 8 on (its slot is free again).
//  - up (lane 1, the reduce warps): receives the partial sums of the child nodes' owners
//    (treeDown[1..2]) into scratch slots, posted 7 chunks ahead of their use, adds them to the
//    own shard once the switch has reduced it, and sends the sum to the parent's owner (treeUp);
//    at the root the sum (avg: scaled by 1/p) is the final shard.
//  - down (lane 2, the bcast warps): receives the final shard from the parent into a scratch
//    slot, posted 7 chunks ahead, and sends it to the children; the root sends its final shards
//    once the up lane has them.
//  - gather (lane 3): every member posts its part of each shard's multicast (switch_multicast;
//    the bcast warps' multimem store and the gather warps' copy) 7 chunks ahead, the owner its own
//    once the final shard is there (the down lane's receive; at the root the up lane's sum).
// So the upward stream of chunk j + k never waits behind the broadcast of chunk j, nor the
// reverse; one in-order program per rank and channel that interleaved them held each behind the
// other. L = 1 has no switch: lane 0 copies each chunk to the output, and lane 3 copies a
// non-root's final chunk from its slot to the output. N = 1 is a one-node NVLS program per
// channel.
//
// Cost. A chunk climbs ⌈lg N⌉ tree levels and comes back: 2·⌈lg N⌉ inter-node hops, the count
// NCCL's tuner charges (src/graph/tuning.cc: intraLat + 2·log2i(nNodes)·interLat for
// NVLS_TREE), against 2(N-1) for a ring across the owners. Bytes per shard of m bytes: a leaf
// owner sends m up and receives m; an inner owner receives 2m from its children, sends m up,
// receives m and sends 2m down. Over both trees (C even) each NIC carries about 2m each way per
// pair of channels; with n bytes, switch rate B_i (NVLink at nvlsEfficiency), NIC rate B_o,
// pipelined over K chunks, the switch and the network overlapping:
//   T ≈ max((n + n/L)/B_i, 2(n/L)/B_o) + (2⌈lg N⌉ + ⌈K/8⌉ - 1)·α_inter + the first and last
// chunks' turn on the other resource  (N > 2; for N = 2 (n/L)/B_o, the one exchange each way
// NCCL's tuner doubles NVLS-Tree's inter-node rate for): up to 8 chunks cross a hop at once
// (the slots of its connection), so the first hop passes K chunks in ⌈K/8⌉ hop latencies and the
// last of them then takes the rest of the round trip.
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
  return links;
}

// Chunks a connection has in flight: NCCL_STEPS, the slots of one connection
// (src/include/device.h, NCCL 2.30.7). A lane posts the receive of chunk j + kSlots - 1 before
// it uses chunk j (a software pipeline), so that up to NCCL_STEPS chunks cross each hop at once
// and their hop latencies overlap, and a chunk enters the switch only once the chunk kSlots
// before it has left the up lane (its slot is free again).
constexpr int kSlots = 8;

// The programs of one rank and NCCL channel, as NCCL's warp groups (src/device/all_reduce.h,
// RunWorkColl<..., NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE>): program channel kLanes·c + lane.
enum Lane : int {
  kScatter = 0, // the switch reduces of every shard ("scatter" and the reduce warps' nvls->down)
  kUp = 1,      // the owner's shard: the child nodes' sums added, sent to the parent ("reduce")
  kDown = 2,    // the final shard: from the parent, to the children ("bcast"; the root's sends)
  kGather = 3,  // the switch multicasts of every shard ("bcast"'s multimem stores and "gather")
  kLanes = 4
};

// What every lane of one rank and channel knows.
struct NvlsTreeRank {
  Shape s; // s.channel: the NCCL channel (which slice)
  int L = 1;
  TreeLinks links;
  int first_channel = 0; // program channel of lane 0
};

// Per chunk, the steps other lanes wait for (cross-program waits, rule 1 of step.hpp); kNoStep
// where a lane has none.
struct LaneMarks {
  // kScatter: the switch reduce (L = 1: the copy) of the own shard.
  std::vector<std::uint32_t> own_reduced;
  // kUp: the last step before the own shard holds the sum below it (the root: the final shard).
  std::vector<std::uint32_t> summed;
  // kUp: the sum sent to the parent.
  std::vector<std::uint32_t> sent_up;
  // kDown: the final shard received from the parent.
  std::vector<std::uint32_t> got_final;
  explicit LaneMarks(int chunks)
      : own_reduced(std::size_t(chunks), kNoStep), summed(std::size_t(chunks), kNoStep),
        sent_up(std::size_t(chunks), kNoStep), got_final(std::size_t(chunks), kNoStep) {}
};

// `step` also waits for step `index` of lane `lane` (none when index is kNoStep).
Step&& waiting(Step&& step, const NvlsTreeRank& r, int lane, std::uint32_t index) {
  if (index != kNoStep) {
    step.wait_channel = static_cast<std::uint16_t>(r.first_channel + lane);
    step.wait_step = index;
  }
  return std::move(step);
}

// The steps of one lane. `waits` holds the other lanes' marks (nullptr: emit no waits, to count
// steps); `marks`, when given, records this lane's.
StepStream lane_steps(NvlsTreeRank r, int lane, const LaneMarks* waits, LaneMarks* marks) {
  const Shape& s = r.s;
  const int L = r.L, local = s.rank % L, first = s.rank - local;
  Program prog(r.first_channel + lane);
  const ElementRange slice = s.channel_share(s.all());
  const auto chunks = std::uint64_t(s.chunks), shards = std::uint64_t(L);
  const Place in{Buffer::input, 0, s.e}, out{Buffer::output, 0, s.e};
  auto shard = [&](int j, int k) {
    return sub(sub(slice, chunks, std::uint64_t(j)), shards, std::uint64_t(k));
  };
  // Scratch slots, indexed like the buffer: 0 and 1 the child nodes' sums, 2 the final shard
  // from the parent (NCCL receives into its connections' buffers).
  auto slot = [&s](int k, ElementRange range) {
    return Place{Buffer::scratch, std::uint64_t(k) * s.n * s.e, s.e}.at(range);
  };
  const int parent = r.links.up;
  const std::array<int, 3> kids = r.links.down;
  const bool root = parent < 0;
  auto mark = [&](std::vector<std::uint32_t> LaneMarks::*which, int j) {
    if (marks) (marks->*which)[std::size_t(j)] = prog.last();
  };
  auto wait_of = [&](std::vector<std::uint32_t> LaneMarks::*which, int j) {
    return waits && j >= 0 ? (waits->*which)[std::size_t(j)] : kNoStep;
  };
  // The step of kUp after which chunk j's slot at the switch is free: its send up, or at the root
  // its final sum.
  auto consumed = [&](int j) {
    return wait_of(root ? &LaneMarks::summed : &LaneMarks::sent_up, j);
  };
  // Where the final shard is: at the root the reduced shard, elsewhere the slot it arrives in.
  auto final_at = [&](ElementRange range) { return root ? out.at(range) : slot(2, range); };
  Step step;
  switch (lane) {
  case kScatter: {
    // Every shard of chunk j through the switch, kSwitchInFlight chunks per shard at a time; the
    // own shard also once the reduce lane has freed the slot of chunk j - kSlots.
    std::vector<std::uint32_t> in_switch(std::size_t(L) * kSwitchInFlight, kNoStep);
    for (int j = 0; j < s.chunks; ++j)
      for (int k = 0; k < L; ++k) {
        const ElementRange q = shard(j, k);
        if (q.size() == 0) continue; // every rank skips it alike
        std::uint32_t& before =
            in_switch[std::size_t(j % kSwitchInFlight) * std::size_t(L) + std::size_t(k)];
        if (L == 1)
          step = copy_step(in.at(q), out.at(q));
        else
          step = switch_reduce_step(first + k, in.at(q), k == local ? out.at(q) : BufferRange{}, L);
        co_yield waiting(prog.emit(std::move(step), before), r, kUp,
                         k == local ? consumed(j - kSlots) : kNoStep);
        before = prog.last();
        if (k == local) mark(&LaneMarks::own_reduced, j);
      }
    break;
  }
  case kUp: {
    // Per chunk the receives from the child nodes kSlots - 1 chunks ahead of the sums, so that
    // they are posted before their data can arrive; the sums wait for the own shard's switch
    // reduce, and a leaf sends its reduced shard straight up.
    std::vector<std::array<std::uint32_t, 2>> got(std::size_t(kSlots), {kNoStep, kNoStep});
    for (int i = 0; i < s.chunks + kSlots - 1; ++i) {
      if (i < s.chunks && shard(i, local).size() != 0) {
        auto& mine = got[std::size_t(i % kSlots)];
        int q = 0;
        for (int child : kids) {
          if (child < 0) continue;
          co_yield prog.emit(recv_step(child, slot(q, shard(i, local))));
          mine[std::size_t(q++)] = prog.last();
        }
      }
      const int j = i - (kSlots - 1);
      if (j < 0 || shard(j, local).size() == 0) continue;
      const ElementRange own = shard(j, local);
      const BufferRange acc = out.at(own);
      const auto& mine = got[std::size_t(j % kSlots)];
      const std::uint32_t reduced = wait_of(&LaneMarks::own_reduced, j);
      std::uint32_t last = kNoStep;
      for (int q = 0; q < r.links.children(); ++q) {
        co_yield waiting(prog.emit(reduce_step(slot(q, own), acc), last, mine[std::size_t(q)]), r,
                         kScatter, q == 0 ? reduced : kNoStep);
        last = prog.last();
      }
      if (root && s.avg()) {
        co_yield prog.emit(scale_step(acc, 1.0 / s.p), last);
        last = prog.last();
      }
      if (last != kNoStep) mark(&LaneMarks::summed, j);
      if (!root) {
        co_yield waiting(prog.emit(send_step(parent, acc), last), r, kScatter,
                         last == kNoStep ? reduced : kNoStep);
        mark(&LaneMarks::sent_up, j);
      }
    }
    break;
  }
  case kDown: {
    // The root sends each final shard to its children once the reduce lane has it; elsewhere the
    // final shard comes from the parent, received kSlots - 1 chunks ahead of its sends down.
    std::vector<std::uint32_t> received(std::size_t(kSlots), kNoStep);
    const int ahead = root ? 0 : kSlots - 1;
    for (int i = 0; i < s.chunks + ahead; ++i) {
      if (!root && i < s.chunks && shard(i, local).size() != 0) {
        co_yield prog.emit(recv_step(parent, final_at(shard(i, local))));
        received[std::size_t(i % kSlots)] = prog.last();
        mark(&LaneMarks::got_final, i);
      }
      const int j = i - ahead;
      if (j < 0 || shard(j, local).size() == 0) continue;
      const BufferRange shard_final = final_at(shard(j, local));
      for (int child : kids) {
        if (child < 0) continue;
        if (root)
          co_yield waiting(prog.emit(send_step(child, shard_final)), r, kUp,
                           wait_of(&LaneMarks::summed, j));
        else
          co_yield prog.emit(send_step(child, shard_final), received[std::size_t(j % kSlots)]);
      }
    }
    break;
  }
  case kGather: {
    // Every member posts its part of each shard's multicast kSlots - 1 chunks ahead (NCCL's
    // gather warps wait on the slots), and the owner its own once it has the final shard. L = 1
    // has no switch: a non-root copies the final shard from its slot to the output.
    for (int i = 0; i < s.chunks + kSlots - 1; ++i) {
      if (i < s.chunks && L > 1)
        for (int k = 0; k < L; ++k) {
          const ElementRange q = shard(i, k);
          if (k == local || q.size() == 0) continue;
          co_yield prog.emit(switch_multicast_step(first + k, {}, out.at(q), q.size() * s.e, L));
        }
      const int j = i - (kSlots - 1);
      if (j < 0 || shard(j, local).size() == 0) continue;
      const ElementRange own = shard(j, local);
      const std::uint32_t ready =
          root ? wait_of(&LaneMarks::summed, j) : wait_of(&LaneMarks::got_final, j);
      if (L > 1)
        step = switch_multicast_step(s.rank, final_at(own), root ? BufferRange{} : out.at(own),
                                     own.size() * s.e, L);
      else if (!root)
        step = copy_step(final_at(own), out.at(own));
      else
        continue; // one rank per node: the root's sum is already in its output
      co_yield waiting(prog.emit(std::move(step)), r, root ? kUp : kDown, ready);
    }
    break;
  }
  default:
    break;
  }
}

// The lanes whose marks `lane` waits for.
std::vector<int> awaited_lanes(int lane, bool root) {
  switch (lane) {
  case kScatter:
    return {kUp};
  case kUp:
    return {kScatter};
  case kDown:
    return root ? std::vector<int>{kUp} : std::vector<int>{};
  default:
    return root ? std::vector<int>{kUp} : std::vector<int>{kDown};
  }
}

// The program of one lane: the marks of the lanes it waits for, found by pulling their steps
// once (O(chunks) numbers, each lane's step count), then its own steps with their waits.
StepStream nvls_tree_lane(NvlsTreeRank r, int lane) {
  LaneMarks marks(r.s.chunks);
  Step step;
  for (int other : awaited_lanes(lane, r.links.up < 0))
    for (StepStream count = lane_steps(r, other, nullptr, &marks); count.next(step);) {}
  for (StepStream steps = lane_steps(r, lane, &marks, nullptr); steps.next(step);) co_yield step;
}

class NvlsTree final : public PhasedGenerator {
public:
  NvlsTree()
      : PhasedGenerator(
            "nvls_tree", Op::all_reduce,
            "NVLS in each node (switch reduce-scatter to per-GPU shards), a binary tree per "
            "shard across nodes over each GPU's NIC (both trees of NCCL's double binary tree, "
            "alternating by channel), NVLS multicast back, as four programs per channel (NCCL's "
            "scatter, reduce, bcast and gather warps); ≈ (2⌈lg N⌉ + ⌈K/8⌉ - 1)·α_inter + "
            "max((n + n/L)·β_switch, 2(n/L)·β_inter) per GPU; uses chunks, channels (NCCL "
            "src/device/all_reduce.h NVLS_TREE, src/graph/connect.cc)") {}

  void check(const CollectiveCall& call) const override {
    check_common(call, true, true);
    check_params(call, kUsesNone);
    check_node_layout(call);
    if (uniform_node_size(call) == 0)
      reject("the nodes of node_of_rank differ in size; NVLS-Tree pairs the shard owners of "
             "every node, so each node needs the same number of ranks");
  }
  // Across nodes every NCCL channel runs kLanes programs (its warp groups); one node, one.
  int channels(const CollectiveCall& call) const override {
    const bool one_node = call.ranks == uniform_node_size(call);
    return one_node ? call.params.channels : kLanes * call.params.channels;
  }
  // Across nodes three buffer-sized slots: the sums of two child nodes and the final shards
  // from the parent.
  std::uint64_t scratch_bytes(const CollectiveCall& call, int /*rank*/) const override {
    const int L = uniform_node_size(call), N = call.ranks / L;
    return N == 1 ? 0 : 3 * call.bytes;
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    const int L = uniform_node_size(call), N = call.ranks / L;
    if (N == 1) return nvls_all_reduce(shape_of(call, rank, channel), L, 1);
    const int nccl_channel = channel / kLanes;
    NvlsTreeRank r;
    r.s = shape_of(call, rank, nccl_channel);
    r.L = L;
    r.links = nvls_tree_links(rank, nccl_channel, L, N);
    r.first_channel = nccl_channel * kLanes;
    return nvls_tree_lane(r, channel % kLanes);
  }
};

} // namespace

const Algorithm& all_reduce_nvls_tree() {
  static const NvlsTree algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
