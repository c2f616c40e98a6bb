// The channel layout of NCCL's multi-channel rings across nodes, shared by the nccl_ring
// generators of all_reduce, all_gather and reduce_scatter (NCCL runs all three on the same
// rings: src/graph/connect.cc builds one ring per channel, src/device/all_gather.h,
// reduce_scatter.h and all_reduce.h walk it).
//
// Ring of channel c (K = params.channels): node by node in node order (nodes from
// call.node_of_rank, each node's ranks consecutive; empty = one rank per node), and inside a node
// of L ranks the local ranks off, off+1, ..., off-1 (mod L) with off = floor(c·L/K) mod L. The
// channel enters the node on local rank off and leaves it on local rank off-1, so with K = L
// channels every GPU of a node is the exit of one channel and the entry of the next, and the
// channels' inter-node hops leave from every GPU (and through each GPU's NICs: Node::gpu_nics)
// instead of all from one. Nodes may differ in size (each uses its own L); one rank per node
// gives the plain ring r -> r+1. Positions on the ring follow the nodes in rank order: the
// members of node m hold positions first(m) .. first(m) + L - 1.
//
// call.node_rings, when given for nodes of L ranks, replaces "the local ranks in order" by the
// order of ring c mod R: NCCL builds its rings only over direct links (search.cc), so on a
// hybrid cube-mesh (DGX-1) the rings follow its NVLinks instead of crossing PCIe between GPUs 3
// and 4; the offsets above are then positions in that order.
#pragma once

#include "phases.hpp"

#include <vector>

namespace ddlsim::coll::gen {

// Position of `rank` on channel `channel`'s ring, and its neighbours there. O(log p).
Ring nccl_channel_ring(const CollectiveCall& call, int rank, int channel);
// The rank at position `pos` (taken mod the ring size) of channel `channel`'s ring. O(log p).
int nccl_ring_member(const CollectiveCall& call, int channel, long long pos);

// nccl_ring_member without the call, for a program's coroutine frame (which must not keep a
// reference to the call): the node boundaries copied once, O(nodes) memory, O(log nodes) a look-up.
class NcclRingMembers {
public:
  NcclRingMembers(const CollectiveCall& call, int channel);
  int operator()(long long pos) const;

private:
  int ranks_ = 1, channel_ = 0, channels_ = 1;
  std::vector<int> firsts_; // first rank of every node, then the rank count
  std::vector<int> order_;  // this channel's node ring (call.node_rings), empty: local order
};

} // namespace ddlsim::coll::gen
