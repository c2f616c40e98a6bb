// NVLS building blocks shared by the nvls generators: the switch steps (rule 4 of step.hpp) and
// the one-node all-reduce program of nvls (nvls_tree runs its own tree across nodes).
//
// NVLS (NVLink SHARP, NVSwitch generation 3 and later: H100, H200, B200) lets a GPU ask the
// switch for the sum of one address range over every GPU of a multicast group
// (multimem.ld_reduce) and write one range to all of them at once (multimem.st): PTX ISA,
// "multimem" instructions; NVIDIA Hopper architecture whitepaper, "NVLink SHARP". NCCL runs
// them in src/device/all_reduce.h (RunWorkColl<..., NCCL_ALGO_NVLS / NCCL_ALGO_NVLS_TREE>,
// NCCL 2.30.7): every GPU owns one shard of each chunk, reduces it through the switch, and
// multicasts the result.
#pragma once

#include "common.hpp"
#include "phases.hpp"

#include <string>

namespace ddlsim::coll::gen {

// Chunks of one shard in the switch at a time. Two: enough that a chunk's round trip to the
// switch (the latency of its group) overlaps the transfer of the chunk before. NCCL keeps up to
// NCCL_STEPS = 8 slots per connection (src/include/device.h, 2.30.7), but they drain in order;
// eight fair-shared flows would instead finish together, delaying the first multicast by eight
// chunks.
inline constexpr int kSwitchInFlight = 2;

// The switch reduces `src` of every member of a group of `group` ranks; the owner gets the sum
// in `dst` (non-owners pass an empty dst).
inline Step switch_reduce_step(int owner, BufferRange src, BufferRange dst, int group) {
  Step step;
  step.kind = StepKind::switch_reduce;
  step.peer = owner;
  step.src = src;
  step.dst = dst;
  step.bytes = src.bytes;
  step.param = group;
  return step;
}

// The owner's `src` goes to the switch once and lands in `dst` of every member of the group
// (the owner passes src, and may pass an empty dst; the others pass only dst).
inline Step switch_multicast_step(int owner, BufferRange src, BufferRange dst, std::uint64_t bytes,
                                  int group) {
  Step step;
  step.kind = StepKind::switch_multicast;
  step.peer = owner;
  step.src = src;
  step.dst = dst;
  step.bytes = bytes;
  step.param = group;
  return step;
}

// All-reduce on N nodes of L consecutive ranks each (rank = node·L + local): per chunk, the
// switch of each node reduces shard `local` of the chunk to that rank; the ranks with the same
// local index in every node ring-all-reduce their shard over their own NICs; each owner then
// multicasts its shard in its node. The in-node reduce runs one chunk ahead of the rest. L = 1
// has no switch steps (the shard is the chunk), N = 1 no ring. The generators call it with
// N = 1 (nvls; nvls_tree on one node): across nodes NCCL runs NVLS-Tree's shard trees
// (all_reduce_nvls_tree.cpp), not this ring.
StepStream nvls_all_reduce(Shape s, int L, int N);

// The check every one-node NVLS generator (reduce_scatter, all_gather) shares: the common
// parameter rules, and ranks inside one NVSwitch domain (node_of_rank, when given, names one
// node), since the switch's multicast groups do not reach past it.
class OneDomainNvlsGenerator : public PhasedGenerator {
public:
  using PhasedGenerator::PhasedGenerator;
  void check(const CollectiveCall& call) const override {
    check_common(call, true, true);
    check_params(call, kUsesNone);
    check_node_layout(call);
    if (!call.node_of_rank.empty() && node_count(call) > 1)
      reject("nvls works inside one NVSwitch domain, but node_of_rank spreads the ranks over " +
             std::to_string(node_count(call)) + " nodes; use a ring across nodes");
  }
};

} // namespace ddlsim::coll::gen
