#include "nccl_rings.hpp"

#include <algorithm>

namespace ddlsim::coll::gen {
namespace {

// First local rank of channel `channel` of `channels` in a node of `size` ranks.
int entry_offset(int channel, int channels, int size) {
  return static_cast<int>((static_cast<long long>(channel) * size / channels) % size);
}

} // namespace

Ring nccl_channel_ring(const CollectiveCall& call, int rank, int channel) {
  const int channels = call.params.channels;
  const NodeOf node = node_of(call, rank);
  const int local = rank - node.first, L = node.size;
  const int off = entry_offset(channel, channels, L);
  const int in_node = ((local - off) % L + L) % L;
  Ring ring;
  ring.size = call.ranks;
  ring.pos = node.first + in_node; // nodes are consecutive in rank order
  if (in_node < L - 1) {
    ring.right = node.first + (local + 1) % L;
  } else { // leave the node: enter the next one on its entry rank
    const int next = (node.node + 1) % node.nodes;
    const int first = node_first_rank(call, next);
    const int size = node_first_rank(call, next + 1) - first;
    ring.right = first + entry_offset(channel, channels, size);
  }
  if (in_node > 0) {
    ring.left = node.first + (local - 1 + L) % L;
  } else { // entered from the previous node's exit rank
    const int prev = (node.node + node.nodes - 1) % node.nodes;
    const int first = node_first_rank(call, prev);
    const int size = node_first_rank(call, prev + 1) - first;
    ring.left = first + (entry_offset(channel, channels, size) + size - 1) % size;
  }
  return ring;
}

int nccl_ring_member(const CollectiveCall& call, int channel, long long pos) {
  const int at = static_cast<int>(floor_mod(pos, call.ranks));
  const NodeOf node = node_of(call, at); // positions of a node are its ranks' numbers
  const int off = entry_offset(channel, call.params.channels, node.size);
  return node.first + (at - node.first + off) % node.size;
}

NcclRingMembers::NcclRingMembers(const CollectiveCall& call, int channel)
    : ranks_(call.ranks), channel_(channel), channels_(call.params.channels) {
  const int nodes = node_count(call);
  firsts_.reserve(static_cast<std::size_t>(nodes) + 1);
  for (int m = 0; m <= nodes; ++m) firsts_.push_back(node_first_rank(call, m));
}

int NcclRingMembers::operator()(long long pos) const {
  const int at = floor_mod(pos, ranks_);
  const auto next = std::upper_bound(firsts_.begin(), firsts_.end(), at);
  const int first = *(next - 1), size = *next - first;
  return first + (at - first + entry_offset(channel_, channels_, size)) % size;
}

} // namespace ddlsim::coll::gen
