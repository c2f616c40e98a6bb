// reduce_scatter "ring": p-1 steps around the ring r -> r+1; rank r ends with block r.
//
// Cost (Thakur, Rabenseifner & Gropp 2005, sec. 4.3; the first half of the ring all-reduce):
// (p-1)α + n(p-1)/p·β + n(p-1)/p·γ. Step s: rank r sends the partial sum of block r-s-1 (its own
// input at step 0) and receive-reduces block r-s-2 into it, so the chain of block b starts at
// b+1 and ends at b. Partial sums live in scratch (n bytes, indexed like the input); the last
// step reduces straight into the output. params.chunks pipelines every block in chunks and
// params.channels runs independent rings over slices of every block, as in all_reduce ring.
#include "common.hpp"
#include "registry.hpp"

#include <vector>

namespace ddlsim::coll::gen {

namespace {

StepStream ring_reduce_scatter(Shape s) {
  Program prog(s.channel);
  const int p = s.p, r = s.rank;
  auto piece = [&s](long long b, int j) { return s.ring_piece(b, j); };
  const std::uint64_t origin = s.block(r).begin; // output holds block r only
  if (p == 1) {
    co_yield prog.emit(own_share_copy(s));
    co_return;
  }
  const int right = s.mod(r + 1), left = s.mod(r - 1);
  std::vector<std::uint32_t> last(std::size_t(s.chunks), kNoStep);
  for (int step = 0; step < p - 1; ++step) {
    const bool final_step = step == p - 2;
    for (int j = 0; j < s.chunks; ++j) {
      const Buffer from = step == 0 ? Buffer::input : Buffer::scratch;
      co_yield prog.emit(send_step(right, s.at(from, piece(r - step - 1, j))), last[j]);
      const ElementRange into = piece(r - step - 2, j);
      const BufferRange dst =
          final_step ? s.at(Buffer::output, shift(into, origin)) : s.at(Buffer::scratch, into);
      co_yield prog.emit(recv_reduce_step(left, s.at(Buffer::input, into), dst));
      last[j] = prog.last();
    }
  }
  if (s.avg())
    for (int j = 0; j < s.chunks; ++j)
      co_yield prog.emit(scale_step(s.at(Buffer::output, shift(piece(r, j), origin)), 1.0 / p),
                         last[j]);
}

class RingReduceScatter final : public Generator {
public:
  RingReduceScatter()
      : Generator("ring", Op::reduce_scatter,
                  "p-1 steps around a ring; (p-1)α + n(p-1)/p·β + n(p-1)/p·γ; uses chunks, "
                  "channels (Thakur et al. 2005)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, true, true);
    check_params(call, kUsesNone);
  }
  std::uint64_t scratch_bytes(const CollectiveCall& call, int /*rank*/) const override {
    return call.ranks > 2 ? call.bytes : 0;
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return ring_reduce_scatter(shape_of(call, rank, channel));
  }
};

} // namespace

const Algorithm& reduce_scatter_ring() {
  static const RingReduceScatter algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
