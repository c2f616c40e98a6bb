// reduce_scatter "nccl_ring": the ring reduce-scatter run over K channels on NCCL's
// multi-channel rings (nccl_rings.hpp), so that the channels cross between nodes on different
// GPUs and NICs as in NCCL (src/graph/connect.cc, src/device/reduce_scatter.h). `ring` in rank
// order crosses from node m to node m+1 on one GPU pair in every channel.
//
// Cost per channel, on its slice of every block (Thakur, Rabenseifner & Gropp 2005, sec. 4.3):
// (p-1)α + (n/K)(p-1)/p·(β + γ); all channels at once. The member at ring position q sends, at
// step t, the partial sum of the block of the rank at position q - t - 1 (its own input at
// t = 0) and receive-reduces that of position q - t - 2, so the chain of a block ends at its
// owner. Partial sums live in scratch (n bytes, indexed like the input); the last step reduces
// into the output. Receives are posted ahead (see all_reduce nccl_ring): each writes a block
// nothing else writes before a later send reads it. params.chunks pipelines every block.
#include "nccl_rings.hpp"
#include "registry.hpp"

#include <vector>

namespace ddlsim::coll::gen {

namespace {

StepStream nccl_ring_reduce_scatter(Shape s, Ring ring, NcclRingMembers member) {
  Program prog(s.channel);
  const int p = s.p, C = s.chunks, q = ring.pos;
  auto piece = [&](long long pos, int j) { return s.ring_piece(member(pos), j); };
  const std::uint64_t origin = s.block(s.rank).begin; // output holds this rank's block only
  if (p == 1) {
    co_yield prog.emit(own_share_copy(s));
    co_return;
  }
  for (int step = 0; step < p - 1; ++step)
    for (int j = 0; j < C; ++j) {
      const ElementRange into = piece(q - step - 2, j);
      const BufferRange dst =
          step == p - 2 ? s.at(Buffer::output, shift(into, origin)) : s.at(Buffer::scratch, into);
      co_yield prog.emit(recv_reduce_step(ring.left, s.at(Buffer::input, into), dst));
    }
  auto reduced = [C](int step, int j) { return std::uint32_t(step * C + j); };
  for (int step = 0; step < p - 1; ++step)
    for (int j = 0; j < C; ++j) {
      const Buffer from = step == 0 ? Buffer::input : Buffer::scratch;
      co_yield prog.emit(send_step(ring.right, s.at(from, piece(q - step - 1, j))),
                         step == 0 ? kNoStep : reduced(step - 1, j));
    }
  if (s.avg())
    for (int j = 0; j < C; ++j)
      co_yield prog.emit(
          scale_step(s.at(Buffer::output, shift(s.ring_piece(s.rank, j), origin)), 1.0 / p),
          reduced(p - 2, j));
}

class NcclRingReduceScatter final : public PhasedGenerator {
public:
  NcclRingReduceScatter()
      : PhasedGenerator("nccl_ring", Op::reduce_scatter,
                        "ring reduce-scatter on K channels, each on NCCL's ring of its channel "
                        "(entering each node on local rank c·L/K, so channels cross nodes on "
                        "different GPUs and NICs); (p-1)α + n(p-1)/p·(β + γ) spread over the "
                        "channels; uses chunks, channels (NCCL src/graph/connect.cc)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, true, true);
    check_params(call, kUsesNone);
    check_node_layout(call);
  }
  std::uint64_t scratch_bytes(const CollectiveCall& call, int /*rank*/) const override {
    return call.ranks > 2 ? call.bytes : 0;
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return nccl_ring_reduce_scatter(shape_of(call, rank, channel),
                                    nccl_channel_ring(call, rank, channel),
                                    NcclRingMembers(call, channel));
  }
};

} // namespace

const Algorithm& reduce_scatter_nccl_ring() {
  static const NcclRingReduceScatter algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
