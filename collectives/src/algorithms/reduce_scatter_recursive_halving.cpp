// reduce_scatter "recursive_halving": at distance d = 2^(lg p - 1) .. 1 each rank sends the half
// of its current range that its partner keeps and receive-reduces the half it keeps.
//
// Cost (Thakur, Rabenseifner & Gropp 2005, sec. 4.3): lg(p)α + n(p-1)/p·β + n(p-1)/p·γ for a
// power-of-two p. Other p: MPICH's fix-up (see Fold), the first 2r ranks fold pairwise first
// (+α + nβ + nγ) and the absorber hands the partner its block at the end (+α + (n/p)β). New rank
// i stands for the blocks of the ranks it represents, which are adjacent, so every range halved
// is contiguous and uneven block sizes need nothing special. Partial sums live in scratch (n
// bytes); the last level reduces straight into the output where the kept range is the rank's
// own block. avg: every rank scales its block by 1/p at the end.
#include "common.hpp"
#include "registry.hpp"

namespace ddlsim::coll::gen {

namespace {

StepStream recursive_halving(Shape s) {
  Program prog(s.channel);
  const int r = s.rank;
  const BufferRange in = s.at(Buffer::input, s.all());
  const BufferRange out = s.at(Buffer::output, shift(s.block(r), s.block(r).begin));
  if (s.p == 1) {
    co_yield prog.emit(copy_step(in, out));
    co_return;
  }
  const Fold fold(s.p, true);
  std::uint32_t last_write = kNoStep;
  if (fold.leaves(r)) {
    co_yield prog.emit(send_step(r + 1, in));
    co_yield prog.emit(recv_step(r + 1, out));
    if (s.avg()) co_yield prog.emit(scale_step(out, 1.0 / s.p), prog.last());
    co_return;
  }
  const int i = fold.newrank(r);
  // Elements of the blocks of the ranks that new ranks [a, b) stand for.
  auto blocks = [&s, &fold](int a, int b) {
    return ElementRange{s.block(fold.first_rank(a)).begin, s.block(fold.last_rank(b - 1)).end};
  };
  Buffer current = Buffer::input;
  if (fold.absorbs(r)) {
    co_yield prog.emit(recv_reduce_step(r - 1, in, s.at(Buffer::scratch, s.all())));
    current = Buffer::scratch;
    last_write = prog.last();
  }
  int lo = 0, hi = fold.pow2;
  for (int d = fold.pow2 / 2; d >= 1; d /= 2) {
    const int partner = fold.rank_of(i ^ d), mid = lo + d;
    const bool lower = i < mid;
    const ElementRange keep = lower ? blocks(lo, mid) : blocks(mid, hi);
    const ElementRange give = lower ? blocks(mid, hi) : blocks(lo, mid);
    co_yield prog.emit(send_step(partner, s.at(current, give)), last_write);
    const bool into_output = d == 1 && !fold.absorbs(r); // keep is exactly block r
    co_yield prog.emit(recv_reduce_step(partner, s.at(current, keep),
                                        into_output ? out : s.at(Buffer::scratch, keep)));
    current = Buffer::scratch;
    last_write = prog.last();
    (lower ? hi : lo) = mid;
  }
  if (fold.absorbs(r)) { // holds blocks r-1 and r
    co_yield prog.emit(send_step(r - 1, s.at(Buffer::scratch, s.block(r - 1))), last_write);
    co_yield prog.emit(copy_step(s.at(Buffer::scratch, s.block(r)), out), last_write);
    last_write = prog.last();
  }
  if (s.avg()) co_yield prog.emit(scale_step(out, 1.0 / s.p), last_write);
}

class RecursiveHalving final : public Generator {
public:
  RecursiveHalving()
      : Generator("recursive_halving", Op::reduce_scatter,
                  "halve the range with the rank 2^k away; lg(p)α + n(p-1)/p·β + n(p-1)/p·γ "
                  "(+2α + n(1+1/p)β + nγ if p is not a power of two) (Thakur et al. 2005)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, false, false);
    check_params(call, kUsesNone);
  }
  std::uint64_t scratch_bytes(const CollectiveCall& call, int rank) const override {
    if (call.ranks == 1) return 0;
    const Fold fold(call.ranks, true);
    const bool uses = !fold.leaves(rank) && (fold.absorbs(rank) || fold.pow2 >= 4);
    return uses ? call.bytes : 0;
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return recursive_halving(shape_of(call, rank, channel));
  }
};

} // namespace

const Algorithm& reduce_scatter_recursive_halving() {
  static const RecursiveHalving algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
