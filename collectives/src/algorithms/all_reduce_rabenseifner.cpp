// all_reduce "rabenseifner": a reduce-scatter by recursive halving followed by an all-gather by
// recursive doubling (Rabenseifner 2004; Thakur, Rabenseifner & Gropp 2005, sec. 4.4).
//
// Cost for a power-of-two p: 2lg(p)α + 2n(p-1)/p·β + n(p-1)/p·γ, the bandwidth of the ring with
// the latency of a tree. Other p: MPICH's fix-up (see Fold), the first 2r ranks fold pairwise
// before and unfold after (+2α + 2nβ + nγ). The buffer is cut into 2^⌊lg p⌋ blocks (partition()).
// Halving level with distance d: a rank sends the half of its current range that the partner
// keeps and receive-reduces the half it keeps, in output (first level reads straight from
// input). Doubling then mirrors it: at distance d the partners swap their aligned groups of d
// blocks. avg: each rank scales its finished block by 1/p between the two phases.
#include "common.hpp"
#include "registry.hpp"

namespace ddlsim::coll::gen {

namespace {

StepStream rabenseifner(Shape s) {
  Program prog(s.channel);
  const int r = s.rank;
  const BufferRange in = s.at(Buffer::input, s.all()), out = s.at(Buffer::output, s.all());
  if (s.p == 1) {
    co_yield prog.emit(copy_step(in, out));
    co_return;
  }
  const Fold fold(s.p, true);
  if (fold.leaves(r)) {
    co_yield prog.emit(send_step(r + 1, in));
    co_yield prog.emit(recv_step(r + 1, out));
    co_return;
  }
  const int P = fold.pow2, i = fold.newrank(r);
  // Elements of the new ranks' blocks [a, b).
  auto blocks = [&s, P](int a, int b) {
    return parts_span(s.n, std::uint64_t(P), std::uint64_t(a), std::uint64_t(b));
  };
  Buffer current = Buffer::input;
  std::uint32_t last_write = kNoStep;
  if (fold.absorbs(r)) {
    co_yield prog.emit(recv_reduce_step(r - 1, in, out));
    current = Buffer::output;
    last_write = prog.last();
  }
  int lo = 0, hi = P;
  for (int d = P / 2; d >= 1; d /= 2) { // recursive halving
    const int partner = fold.rank_of(i ^ d), mid = lo + d;
    const bool lower = i < mid;
    const ElementRange keep = lower ? blocks(lo, mid) : blocks(mid, hi);
    const ElementRange give = lower ? blocks(mid, hi) : blocks(lo, mid);
    co_yield prog.emit(send_step(partner, s.at(current, give)), last_write);
    co_yield prog.emit(recv_reduce_step(partner, s.at(current, keep), s.at(Buffer::output, keep)));
    current = Buffer::output;
    last_write = prog.last();
    (lower ? hi : lo) = mid;
  }
  if (s.avg()) {
    co_yield prog.emit(scale_step(s.at(Buffer::output, blocks(i, i + 1)), 1.0 / s.p), last_write);
    last_write = prog.last();
  }
  for (int d = 1; d < P; d *= 2) { // recursive doubling
    const int partner = i ^ d, mine = i & ~(d - 1), theirs = partner & ~(d - 1);
    co_yield prog.emit(
        send_step(fold.rank_of(partner), s.at(Buffer::output, blocks(mine, mine + d))), last_write);
    co_yield prog.emit(
        recv_step(fold.rank_of(partner), s.at(Buffer::output, blocks(theirs, theirs + d))));
    last_write = prog.last();
  }
  if (fold.absorbs(r)) co_yield prog.emit(send_step(r - 1, out), last_write);
}

class Rabenseifner final : public Generator {
public:
  Rabenseifner()
      : Generator("rabenseifner", Op::all_reduce,
                  "recursive-halving reduce-scatter + recursive-doubling all-gather; "
                  "2lg(p)α + 2n(p-1)/p·β + n(p-1)/p·γ (+2α + 2nβ + nγ if p is not a power of "
                  "two) (Rabenseifner 2004; Thakur et al. 2005)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, false, false);
    check_params(call, kUsesNone);
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return rabenseifner(shape_of(call, rank, channel));
  }
};

} // namespace

const Algorithm& all_reduce_rabenseifner() {
  static const Rabenseifner algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
