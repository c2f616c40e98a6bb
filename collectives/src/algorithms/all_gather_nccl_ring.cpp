// all_gather "nccl_ring": the ring all-gather run over K channels on NCCL's multi-channel rings
// (nccl_rings.hpp), so that the channels cross between nodes on different GPUs and NICs as in
// NCCL (src/graph/connect.cc, src/device/all_gather.h: every channel runs the ring all-gather
// on its slice of every block, around its own ring). `ring` in rank order crosses from node m
// to node m+1 on one GPU pair in every channel, so all inter-node traffic takes one NIC.
//
// Cost per channel, on its slice of every block (Thakur, Rabenseifner & Gropp 2005, sec. 4.1):
// (p-1)α + (n/K)(p-1)/p·β; all channels at once. The member at ring position q forwards, at
// step t, the block of the rank at position q - t (its own input at t = 0) and receives that of
// position q - t - 1, so after p-1 steps it holds every rank's block at the rank's place in the
// output. Receives are posted ahead, as NCCL's receiver offers its buffer slots before the data
// comes (see all_reduce nccl_ring): each writes a block nothing else writes. params.chunks
// pipelines every block in chunks.
#include "nccl_rings.hpp"
#include "registry.hpp"

#include <vector>

namespace ddlsim::coll::gen {

namespace {

StepStream nccl_ring_all_gather(Shape s, Ring ring, NcclRingMembers member) {
  Program prog(s.channel);
  const int C = s.chunks;
  // Chunk j of this channel's slice of the block of the rank at ring position q.
  auto piece = [&](long long q, int j) { return s.ring_piece(member(q), j); };
  const std::uint64_t origin = s.block(s.rank).begin; // input holds this rank's block only
  const ElementRange own = s.channel_share(s.block(s.rank));
  co_yield prog.emit(copy_step(s.at(Buffer::input, shift(own, origin)), s.at(Buffer::output, own)));
  if (s.p == 1) co_return;
  const int q = ring.pos;
  for (int step = 0; step < s.p - 1; ++step)
    for (int j = 0; j < C; ++j)
      co_yield prog.emit(recv_step(ring.left, s.at(Buffer::output, piece(q - step - 1, j))));
  auto received = [C](int step, int j) { return std::uint32_t(1 + step * C + j); };
  for (int step = 0; step < s.p - 1; ++step)
    for (int j = 0; j < C; ++j) {
      const BufferRange src = step == 0 ? s.at(Buffer::input, shift(piece(q, j), origin))
                                        : s.at(Buffer::output, piece(q - step, j));
      co_yield prog.emit(send_step(ring.right, src), step == 0 ? kNoStep : received(step - 1, j));
    }
}

class NcclRingAllGather final : public PhasedGenerator {
public:
  NcclRingAllGather()
      : PhasedGenerator("nccl_ring", Op::all_gather,
                        "ring all-gather on K channels, each on NCCL's ring of its channel "
                        "(entering each node on local rank c·L/K, so channels cross nodes on "
                        "different GPUs and NICs); (p-1)α + n(p-1)/p·β spread over the channels; "
                        "uses chunks, channels (NCCL src/graph/connect.cc)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, true, true);
    check_params(call, kUsesNone);
    check_node_layout(call);
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return nccl_ring_all_gather(shape_of(call, rank, channel),
                                nccl_channel_ring(call, rank, channel),
                                NcclRingMembers(call, channel));
  }
};

} // namespace

const Algorithm& all_gather_nccl_ring() {
  static const NcclRingAllGather algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
