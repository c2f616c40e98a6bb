#include "nccl_rings.hpp"

#include <algorithm>

namespace ddlsim::coll::gen {
namespace {

// First local rank of channel `channel` of `channels` in a node of `size` ranks.
int entry_offset(int channel, int channels, int size) {
  return static_cast<int>((static_cast<long long>(channel) * size / channels) % size);
}

// The order in which channel `channel` visits the local ranks of a node of `size` ranks: the
// call's node_rings (NCCL's rings over direct links, ring channel mod count) when they are for
// nodes of this size, else the local ranks in order.
struct NodeOrder {
  const std::vector<int>* ring = nullptr; // null: identity
  int local_at(int position) const {
    return ring == nullptr ? position : (*ring)[static_cast<std::size_t>(position)];
  }
  int position_of(int local) const {
    if (ring == nullptr) return local;
    for (std::size_t i = 0; i < ring->size(); ++i)
      if ((*ring)[i] == local) return static_cast<int>(i);
    return local; // unreachable: check_call proved the ring a permutation
  }
};
NodeOrder node_order(const CollectiveCall& call, int channel, int size) {
  const auto& rings = call.node_rings;
  if (rings.empty() || static_cast<int>(rings.front().size()) != size) return {};
  return {&rings[static_cast<std::size_t>(channel) % rings.size()]};
}

} // namespace

Ring nccl_channel_ring(const CollectiveCall& call, int rank, int channel) {
  const int channels = call.params.channels;
  const NodeOf node = node_of(call, rank);
  const int L = node.size;
  const NodeOrder order = node_order(call, channel, L);
  const int local = order.position_of(rank - node.first); // position in the node's order
  const int off = entry_offset(channel, channels, L);
  const int in_node = ((local - off) % L + L) % L;
  Ring ring;
  ring.size = call.ranks;
  ring.pos = node.first + in_node; // nodes are consecutive in rank order
  if (in_node < L - 1) {
    ring.right = node.first + order.local_at((local + 1) % L);
  } else { // leave the node: enter the next one on its entry rank
    const int next = (node.node + 1) % node.nodes;
    const int first = node_first_rank(call, next);
    const int size = node_first_rank(call, next + 1) - first;
    ring.right =
        first + node_order(call, channel, size).local_at(entry_offset(channel, channels, size));
  }
  if (in_node > 0) {
    ring.left = node.first + order.local_at((local - 1 + L) % L);
  } else { // entered from the previous node's exit rank
    const int prev = (node.node + node.nodes - 1) % node.nodes;
    const int first = node_first_rank(call, prev);
    const int size = node_first_rank(call, prev + 1) - first;
    ring.left = first + node_order(call, channel, size)
                            .local_at((entry_offset(channel, channels, size) + size - 1) % size);
  }
  return ring;
}

int nccl_ring_member(const CollectiveCall& call, int channel, long long pos) {
  const int at = static_cast<int>(floor_mod(pos, call.ranks));
  const NodeOf node = node_of(call, at); // positions of a node are its ranks' numbers
  const int off = entry_offset(channel, call.params.channels, node.size);
  return node.first +
         node_order(call, channel, node.size).local_at((at - node.first + off) % node.size);
}

NcclRingMembers::NcclRingMembers(const CollectiveCall& call, int channel)
    : ranks_(call.ranks), channel_(channel), channels_(call.params.channels) {
  const int nodes = node_count(call);
  firsts_.reserve(static_cast<std::size_t>(nodes) + 1);
  for (int m = 0; m <= nodes; ++m) firsts_.push_back(node_first_rank(call, m));
  if (!call.node_rings.empty())
    order_ = call.node_rings[static_cast<std::size_t>(channel) % call.node_rings.size()];
}

int NcclRingMembers::operator()(long long pos) const {
  const int at = floor_mod(pos, ranks_);
  const auto next = std::upper_bound(firsts_.begin(), firsts_.end(), at);
  const int first = *(next - 1), size = *next - first;
  const int position = (at - first + entry_offset(channel_, channels_, size)) % size;
  const bool ordered = static_cast<int>(order_.size()) == size;
  return first + (ordered ? order_[static_cast<std::size_t>(position)] : position);
}

} // namespace ddlsim::coll::gen
