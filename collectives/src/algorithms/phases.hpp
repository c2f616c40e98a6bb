// Building blocks of the composed all-reduce generators (hierarchical, BlueConnect, 2D torus, the
// sparse ones): ring reduce-scatter and all-gather phases over an arbitrary ring of ranks, the
// node layout of a call (node_of_rank), step builders for zeroing and codecs, and the checks of
// the parameters each generator does or does not use.
//
// A phase is a nested StepStream that numbers its steps with the caller's Program, so that the
// caller re-yields them unchanged and its deps stay valid:
//
//   std::uint32_t done = kNoStep;
//   for (StepStream phase = ring_reduce_scatter(prog, ring, range, in, out, ready, done);
//        phase.next(step);)
//     co_yield step;
//   // `done` now names the phase's last step
//
// Every program keeps O(1) (or O(levels)) state: node boundaries are found by binary search in
// call.node_of_rank when the program is created, never by tables per rank.
#pragma once

#include "common.hpp"

#include <cstdint>
#include <string>

namespace ddlsim::coll::gen {

// Where a run of equal-sized units (elements, or top-k pairs) lives: unit u is the bytes
// [offset + u·unit, offset + (u+1)·unit) of `buffer`.
struct Place {
  Buffer buffer = Buffer::output;
  std::uint64_t offset = 0;
  std::uint64_t unit = 4;
  BufferRange at(ElementRange range) const {
    return {buffer, offset + range.begin * unit, range.size() * unit};
  }
};

// A ring of `size` members in which this rank is member `pos`; it sends to `right` and receives
// from `left`.
struct Ring {
  int pos = 0;
  int size = 1;
  int left = -1;
  int right = -1;
  int mod(long long i) const { return floor_mod(i, size); }
};
// Ranks base + i·stride for i in 0..size-1, this rank being member pos.
Ring strided_ring(int rank, int pos, int size, int stride);

// Ring reduce-scatter of `range` (units) among the ring, cut into ring.size parts by sub(): at
// step t member pos sends part pos-t-1 (from `own` at t = 0, later from `acc`) and
// receive-reduces part pos-t-2 (own contribution from `own`) into `acc`, so it ends with part
// pos fully reduced in `acc`. `own` and `acc` may be the same place (in-place stages). Every step
// waits for `ready` (the step after which `range` may be read and written). On return `done` is
// the last receive-reduce (or `ready` for a ring of one). (p-1)α + m(p-1)/p·(β + γ) for m bytes.
StepStream ring_reduce_scatter(Program& prog, Ring ring, ElementRange range, Place own, Place acc,
                               std::uint32_t ready, std::uint32_t& done);
// Ring all-gather of `range` in `buf`: member pos owns part pos; at step t it sends part pos-t
// and receives part pos-t-1. Each receive is issued after a send that waits for the previous
// receive, so `done` (the last receive) completing means every part has arrived.
// (p-1)α + m(p-1)/p·β.
StepStream ring_all_gather(Program& prog, Ring ring, ElementRange range, Place buf,
                           std::uint32_t ready, std::uint32_t& done);

// The nodes of a call: node_of_rank must list each node's ranks consecutively and number the
// nodes in rank order (labels rise by 0 or 1 from one rank to the next, as a topology's
// node-major GPU order gives); empty means one rank per node.
struct NodeOf {
  int node = 0;  // index of this rank's node, 0..nodes-1
  int nodes = 1; // number of nodes
  int first = 0; // first rank of the node
  int size = 1;  // ranks in the node
};
NodeOf node_of(const CollectiveCall& call, int rank); // O(log p)
int node_count(const CollectiveCall& call);
int node_first_rank(const CollectiveCall& call, int node); // O(log p); node_count -> ranks
// Empty when node_of_rank has the layout above, else what is wrong and how to fix it.
std::string node_layout_problem(const CollectiveCall& call);
// Ranks per node when every node has the same number, else 0 (assumes a valid layout).
int uniform_node_size(const CollectiveCall& call);

// dst = src·0: zeroes an output range from finite input values (scale step; src may be another
// buffer). Decompress steps add into their destination, which must start at zero.
Step zero_step(BufferRange src, BufferRange dst);
// dst = dst (op) src, local.
Step reduce_step(BufferRange src, BufferRange dst);
// A compress or decompress step of `codec` (param: chunk bytes for the chunk codecs).
Step codec_step(StepKind kind, Codec codec, BufferRange src, BufferRange dst, double param = 0,
                BufferRange aux = {});
// Pairs top-k keeps of n elements: ceil(density·n) (guarded against 10.000000000000002 -> 11),
// at least 1 and at most n; 0 for n = 0.
std::uint64_t topk_count(double density, std::uint64_t n);

class PhasedGenerator : public Generator {
public:
  using Generator::Generator;

protected:
  // Rejects a node_of_rank that does not have the layout of NodeOf.
  void check_node_layout(const CollectiveCall& call) const;
  // The default {ranks per node, nodes} of the staged algorithms, or a rejection naming `what`
  // to set when nodes differ in size.
  std::vector<int> default_groups(const CollectiveCall& call, const std::string& what) const;
  // params.group_sizes, or the default for a call that passed check() (O(log p): the size of
  // the first node).
  static std::vector<int> checked_groups(const CollectiveCall& call);
  // Rejects group sizes that are not positive or do not multiply to the rank count.
  void check_groups(const CollectiveCall& call, const std::vector<int>& groups) const;
};

// The staged ring all-reduce of BlueConnect and the 2D torus: reduce-scatter rings over groups[0]
// (ranks r with the same r / groups[0], innermost), then over groups[1] on the part each rank
// holds, and so on; avg scales the last part; then all-gather rings back out in reverse order.
// Ranks are numbered in mixed radix: rank = c0 + g0·(c1 + g1·(c2 + ...)). Runs on the channel's
// slice of the buffer.
StepStream staged_ring_all_reduce(Shape s, std::vector<int> groups);

} // namespace ddlsim::coll::gen
