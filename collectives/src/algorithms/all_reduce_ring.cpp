// all_reduce "ring": a reduce-scatter followed by an all-gather around the ring r -> r+1.
//
// Cost (Thakur, Rabenseifner & Gropp 2005, sec. 4.4; Patarasuk & Yuan 2009 for its bandwidth
// optimality): 2(p-1)α + 2n(p-1)/p·β + n(p-1)/p·γ. The buffer is cut into p blocks (uneven sizes
// by partition()). Reduce-scatter step s: rank r sends block r-s and receive-reduces block r-s-1
// from r-1, so after p-1 steps it owns the full sum of block r+1; all-gather step s passes the
// finished block r+1-s on and receives block r-s.
//
// params.chunks = C pipelines each block in C chunks: 2(p-1)C sends per rank, each waiting only
// for the chunk it forwards. The bytes per link stay the same; the latency term becomes
// 2(p-1)Cα and the reduction of one chunk overlaps the transfer of the next (γ hides behind β),
// as in NCCL's sliced ring.
//
// params.channels = K splits every block into K slices run as K independent rings (one program
// per channel). All channels go the same way round the ring, r -> r+1, so on one fabric they
// share the same links; an engine that maps channels to different paths gets NCCL's multi-ring
// behaviour. avg: the owner of a finished block scales it by 1/p before the all-gather (n/p work
// per rank, not n).
#include "common.hpp"
#include "registry.hpp"

#include <vector>

namespace ddlsim::coll::gen {

namespace {

StepStream ring_all_reduce(Shape s) {
  Program prog(s.channel);
  const int p = s.p, r = s.rank;
  // Elements of chunk j of this channel's slice of block b.
  auto piece = [&s](long long b, int j) { return s.ring_piece(b, j); };
  if (p == 1) {
    co_yield prog.emit(own_share_copy(s));
    co_return;
  }
  const int right = s.mod(r + 1), left = s.mod(r - 1);
  // last[j]: the step that last wrote chunk j of the block this rank forwards next.
  std::vector<std::uint32_t> last(std::size_t(s.chunks), kNoStep);
  for (int step = 0; step < p - 1; ++step) {
    for (int j = 0; j < s.chunks; ++j) {
      const Buffer from = step == 0 ? Buffer::input : Buffer::output;
      co_yield prog.emit(send_step(right, s.at(from, piece(r - step, j))), last[j]);
      const ElementRange into = piece(r - step - 1, j);
      co_yield prog.emit(
          recv_reduce_step(left, s.at(Buffer::input, into), s.at(Buffer::output, into)));
      last[j] = prog.last();
    }
  }
  if (s.avg())
    for (int j = 0; j < s.chunks; ++j) {
      co_yield prog.emit(scale_step(s.at(Buffer::output, piece(r + 1, j)), 1.0 / p), last[j]);
      last[j] = prog.last();
    }
  for (int step = 0; step < p - 1; ++step) {
    for (int j = 0; j < s.chunks; ++j) {
      co_yield prog.emit(send_step(right, s.at(Buffer::output, piece(r + 1 - step, j))), last[j]);
      co_yield prog.emit(recv_step(left, s.at(Buffer::output, piece(r - step, j))));
      last[j] = prog.last();
    }
  }
}

class RingAllReduce final : public Generator {
public:
  RingAllReduce()
      : Generator("ring", Op::all_reduce,
                  "reduce-scatter + all-gather around a ring; 2(p-1)α + 2n(p-1)/p·β + "
                  "n(p-1)/p·γ; uses chunks, channels (Thakur et al. 2005; Patarasuk & Yuan "
                  "2009)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, true, true);
    check_params(call, kUsesNone);
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return ring_all_reduce(shape_of(call, rank, channel));
  }
};

} // namespace

const Algorithm& all_reduce_ring() {
  static const RingAllReduce algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
