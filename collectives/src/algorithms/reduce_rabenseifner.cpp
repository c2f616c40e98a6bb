// reduce "rabenseifner": a reduce-scatter by recursive halving followed by a binomial gather of
// the blocks to the root (Rabenseifner 2004; MPICH's reduce_redscat_gather).
//
// Cost (Thakur, Rabenseifner & Gropp 2005, sec. 4.5): 2lg(p)α + 2n(p-1)/p·β + n(p-1)/p·γ for a
// power-of-two p. Other p: the fold of MPICH (see Fold), here keeping the even rank of each
// pair, in ranks relative to the root, so that the root always takes part: +α + nβ + nγ. The
// buffer is cut into 2^⌊lg p⌋ blocks; after the halving new rank i holds block i, and the
// gather at distance d = 1, 2, ... sends the d blocks a rank holds to the rank d below it.
// Work happens in the root's output and in scratch elsewhere. avg: the root scales by 1/p.
#include "common.hpp"
#include "registry.hpp"

namespace ddlsim::coll::gen {

namespace {

StepStream rabenseifner(Shape s) {
  Program prog(s.channel);
  const int v = s.mod(s.rank - s.root);
  auto real = [&s](int relative) { return s.mod(relative + s.root); };
  const Buffer work = v == 0 ? Buffer::output : Buffer::scratch;
  const BufferRange in = s.at(Buffer::input, s.all());
  if (s.p == 1) {
    co_yield prog.emit(copy_step(in, s.at(work, s.all())));
    co_return;
  }
  const Fold fold(s.p, false);
  if (fold.leaves(v)) {
    co_yield prog.emit(send_step(real(v - 1), in));
    co_return;
  }
  const int P = fold.pow2, i = fold.newrank(v);
  auto blocks = [&s, P](int a, int b) {
    return parts_span(s.n, std::uint64_t(P), std::uint64_t(a), std::uint64_t(b));
  };
  Buffer current = Buffer::input;
  std::uint32_t last = kNoStep;
  if (fold.absorbs(v)) {
    co_yield prog.emit(recv_reduce_step(real(v + 1), in, s.at(work, s.all())));
    current = work;
    last = prog.last();
  }
  int lo = 0, hi = P;
  for (int d = P / 2; d >= 1; d /= 2) { // recursive halving
    const int partner = real(fold.rank_of(i ^ d)), mid = lo + d;
    const bool lower = i < mid;
    const ElementRange keep = lower ? blocks(lo, mid) : blocks(mid, hi);
    const ElementRange give = lower ? blocks(mid, hi) : blocks(lo, mid);
    co_yield prog.emit(send_step(partner, s.at(current, give)), last);
    co_yield prog.emit(recv_reduce_step(partner, s.at(current, keep), s.at(work, keep)));
    current = work;
    last = prog.last();
    (lower ? hi : lo) = mid;
  }
  for (int d = 1; d < P; d *= 2) { // binomial gather toward new rank 0, the root
    if (i & d) {
      co_yield prog.emit(send_step(real(fold.rank_of(i - d)), s.at(work, blocks(i, i + d))), last);
      co_return;
    }
    // Each receive waits for the previous one, so the last to complete implies all did.
    co_yield prog.emit(recv_step(real(fold.rank_of(i + d)), s.at(work, blocks(i + d, i + 2 * d))),
                       last);
    last = prog.last();
  }
  if (s.avg()) co_yield prog.emit(scale_step(s.at(work, s.all()), 1.0 / s.p), last);
}

class Rabenseifner final : public Generator {
public:
  Rabenseifner()
      : Generator("rabenseifner", Op::reduce,
                  "recursive-halving reduce-scatter + binomial gather to the root; "
                  "2lg(p)α + 2n(p-1)/p·β + n(p-1)/p·γ (+α + nβ + nγ if p is not a power of "
                  "two) (Rabenseifner 2004; Thakur et al. 2005)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, false, false);
    check_params(call, kUsesNone);
  }
  std::uint64_t scratch_bytes(const CollectiveCall& call, int rank) const override {
    const int v = ((rank - call.root) % call.ranks + call.ranks) % call.ranks;
    return v != 0 && !Fold(call.ranks, false).leaves(v) ? call.bytes : 0;
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return rabenseifner(shape_of(call, rank, channel));
  }
};

} // namespace

const Algorithm& reduce_rabenseifner() {
  static const Rabenseifner algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
