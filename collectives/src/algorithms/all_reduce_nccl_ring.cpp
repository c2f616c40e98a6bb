// all_reduce "nccl_ring": the ring all-reduce of `ring` run over K channels whose rings cross
// between nodes on different GPUs, as NCCL's multi-channel rings do.
//
// NCCL searches one ring per channel through each node's GPUs (src/graph/search.cc,
// ncclTopoCompute; rings.cc connects them node after node) and, on a node with several NICs,
// makes the channels enter and leave the node on different GPUs, each near its own NIC, so that
// the channels together use all of the node's NICs (S. Jeaugey, "NCCL 2.0", GTC 2017, and
// "Massively scale your deep learning training with NCCL 2.4", NVIDIA blog 2019: rings per
// channel, one NIC each). `ring` in rank order instead crosses from node m to node m+1 on the
// same GPU pair in every channel, so all inter-node traffic goes through one NIC per node.
//
// Ring of channel c: nccl_rings.hpp (enters each node on local rank floor(c·L/K) mod L, leaves
// it on the rank before; on nodes with call.node_rings, in the order of NCCL's rings over
// direct links, e.g. a DGX-1's hybrid cube-mesh).
//
// Cost per channel, on its slice of n/K bytes (the ring's, Thakur, Rabenseifner & Gropp 2005,
// sec. 4.4): 2(p-1)α + 2(n/K)(p-1)/p·β + (n/K)(p-1)/p·γ. All channels run at once; across nodes
// channel c's hops leave on the NIC of local rank off_c - 1, so a node's 2n(p-1)/p bytes sent
// out are spread over its GPUs, and over its NICs in proportion to the GPUs each NIC serves,
// instead of all on one. Inside a node each channel sends over L-1 NVLink/PCIe hops as `ring`.
// Receives are posted ahead (NCCL's receiver offers buffer slots before the data comes), so a
// send starts once its data is ready: the latency is the chain of 2(p-1) hops a block travels,
// of which only about 2N cross nodes, ≈ 2(p-N)α_intra + 2N·α_inter, which is also how NCCL's
// tuner counts a ring's latency (src/graph/tuning.cc: 2·nNodes inter-node steps). `ring` posts
// each receive after the previous one has completed, so there every step waits out the slowest
// (inter-node) hop: 2(p-1)α_inter. params.chunks = C pipelines each block in C chunks as `ring`
// does (γ hides behind β). avg: the owner of a finished block scales it by 1/p.
#include "nccl_rings.hpp"
#include "registry.hpp"

#include <vector>

namespace ddlsim::coll::gen {

namespace {

StepStream nccl_ring_all_reduce(Shape s, Ring ring) {
  Program prog(s.channel);
  const int p = s.p, r = ring.pos;
  // Elements of chunk j of this channel's slice of block b.
  auto piece = [&s](long long b, int j) { return s.ring_piece(b, j); };
  if (p == 1) {
    co_yield prog.emit(own_share_copy(s));
    co_return;
  }
  // Receives are posted ahead, as NCCL's receiver offers its buffer slots before the data
  // comes: a send then starts as soon as its data is ready, and the ring's latency is the chain
  // of hops a block travels (only ~2N of them between nodes), not one inter-node latency per
  // step as when each receive waits for the previous one. The reduce-scatter receives (steps
  // t·C + j) go first: each writes a block nothing reads before it. An all-gather receive
  // overwrites the block this rank's reduce-scatter sent at the same step, so it waits for that
  // send to complete; they are all posted before the all-gather sends.
  const int C = s.chunks;
  for (int step = 0; step < p - 1; ++step)
    for (int j = 0; j < C; ++j) {
      const ElementRange into = piece(r - step - 1, j);
      co_yield prog.emit(
          recv_reduce_step(ring.left, s.at(Buffer::input, into), s.at(Buffer::output, into)));
    }
  auto reduced = [C](int step, int j) { return std::uint32_t(step * C + j); };
  for (int step = 0; step < p - 1; ++step) // reduce-scatter: ends owning block r+1
    for (int j = 0; j < C; ++j) {
      const Buffer from = step == 0 ? Buffer::input : Buffer::output;
      co_yield prog.emit(send_step(ring.right, s.at(from, piece(r - step, j))),
                         step == 0 ? kNoStep : reduced(step - 1, j));
    }
  auto scattered = [C, p](int step, int j) { return std::uint32_t((p - 1 + step) * C + j); };
  for (int step = 0; step < p - 1; ++step)
    for (int j = 0; j < C; ++j)
      co_yield prog.emit(recv_step(ring.left, s.at(Buffer::output, piece(r - step, j))),
                         scattered(step, j));
  auto gathered = [C, p](int step, int j) { return std::uint32_t((2 * (p - 1) + step) * C + j); };
  // done[j]: the step after which this rank's finished chunk j of block r+1 may be sent.
  std::vector<std::uint32_t> done(static_cast<std::size_t>(C));
  for (int j = 0; j < C; ++j) done[std::size_t(j)] = reduced(p - 2, j);
  if (s.avg())
    for (int j = 0; j < C; ++j) {
      co_yield prog.emit(scale_step(s.at(Buffer::output, piece(r + 1, j)), 1.0 / p),
                         done[std::size_t(j)]);
      done[std::size_t(j)] = prog.last();
    }
  for (int step = 0; step < p - 1; ++step) // all-gather
    for (int j = 0; j < C; ++j)
      co_yield prog.emit(send_step(ring.right, s.at(Buffer::output, piece(r + 1 - step, j))),
                         step == 0 ? done[std::size_t(j)] : gathered(step - 1, j));
}

class NcclRingAllReduce final : public PhasedGenerator {
public:
  NcclRingAllReduce()
      : PhasedGenerator("nccl_ring", Op::all_reduce,
                        "ring all-reduce on K channels, channel c entering each node (from "
                        "node_of_rank) on local rank c·L/K so channels cross nodes on different "
                        "GPUs and NICs; 2(p-1)α + 2n(p-1)/p·β + n(p-1)/p·γ spread over the "
                        "channels; uses chunks, channels (NCCL rings, Jeaugey 2017)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, true, true);
    check_params(call, kUsesNone);
    check_node_layout(call);
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return nccl_ring_all_reduce(shape_of(call, rank, channel),
                                nccl_channel_ring(call, rank, channel));
  }
};

} // namespace

const Algorithm& all_reduce_nccl_ring() {
  static const NcclRingAllReduce algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
