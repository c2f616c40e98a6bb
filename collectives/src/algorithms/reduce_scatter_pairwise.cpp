// reduce_scatter "pairwise": p-1 exchange steps; at step s rank r sends its input block r+s to
// rank r+s and receive-reduces rank r-s's contribution to its own block.
//
// Cost (Thakur, Rabenseifner & Gropp 2005, sec. 4.3, the algorithm MPICH uses for long messages
// and non-commutative-safe orderings): (p-1)α + n(p-1)/p·β + n(p-1)/p·γ. Each step waits for the
// previous receive (one exchange at a time, avoiding the incast of sending everything at once);
// the partial sum accumulates in the output in place. avg: scale by 1/p at the end.
#include "common.hpp"
#include "registry.hpp"

namespace ddlsim::coll::gen {

namespace {

StepStream pairwise(Shape s) {
  Program prog(s.channel);
  const int r = s.rank;
  const ElementRange own = s.block(r);
  const BufferRange out = s.at(Buffer::output, shift(own, own.begin));
  if (s.p == 1) {
    co_yield prog.emit(copy_step(s.at(Buffer::input, own), out));
    co_return;
  }
  std::uint32_t last = kNoStep;
  for (int step = 1; step < s.p; ++step) {
    const int to = s.mod(r + step), from = s.mod(r - step);
    co_yield prog.emit(send_step(to, s.at(Buffer::input, s.block(to))), last);
    const BufferRange acc = step == 1 ? s.at(Buffer::input, own) : out;
    co_yield prog.emit(recv_reduce_step(from, acc, out), last);
    last = prog.last();
  }
  if (s.avg()) co_yield prog.emit(scale_step(out, 1.0 / s.p), last);
}

class Pairwise final : public Generator {
public:
  Pairwise()
      : Generator("pairwise", Op::reduce_scatter,
                  "p-1 pairwise exchanges of one block; (p-1)α + n(p-1)/p·β + n(p-1)/p·γ "
                  "(Thakur et al. 2005)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, false, false);
    check_params(call, kUsesNone);
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return pairwise(shape_of(call, rank, channel));
  }
};

} // namespace

const Algorithm& reduce_scatter_pairwise() {
  static const Pairwise algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
