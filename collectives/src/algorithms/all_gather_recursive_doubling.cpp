// all_gather "recursive_doubling": at distance d = 1, 2, 4, ... partners swap the aligned
// groups of d blocks they hold, doubling what each has.
//
// Cost (Thakur, Rabenseifner & Gropp 2005, sec. 4.1): lg(p)α + n(p-1)/p·β for a power-of-two p.
// Other p: MPICH's own non-power-of-two variant is intricate; this uses the fold of the
// reductions instead (see Fold): the first 2r ranks pair up, one hands its block to the other
// first (+α + (n/p)β) and gets the whole result back at the end (+α + nβ). New rank i stands for
// adjacent blocks, so every group swapped is one contiguous range of the output.
#include "common.hpp"
#include "registry.hpp"

namespace ddlsim::coll::gen {

namespace {

StepStream recursive_doubling(Shape s) {
  Program prog(s.channel);
  const int r = s.rank;
  const ElementRange own = s.block(r);
  const BufferRange in = s.at(Buffer::input, shift(own, own.begin));
  if (s.p == 1) {
    co_yield prog.emit(copy_step(in, s.at(Buffer::output, own)));
    co_return;
  }
  const Fold fold(s.p, true);
  if (fold.leaves(r)) {
    co_yield prog.emit(send_step(r + 1, in));
    co_yield prog.emit(recv_step(r + 1, s.at(Buffer::output, s.all())));
    co_return;
  }
  auto blocks = [&s, &fold](int a, int b) {
    return ElementRange{s.block(fold.first_rank(a)).begin, s.block(fold.last_rank(b - 1)).end};
  };
  co_yield prog.emit(copy_step(in, s.at(Buffer::output, own)));
  const std::uint32_t copied = prog.last();
  std::uint32_t last = kNoStep;
  if (fold.absorbs(r)) {
    co_yield prog.emit(recv_step(r - 1, s.at(Buffer::output, s.block(r - 1))));
    last = prog.last();
  }
  const int i = fold.newrank(r);
  for (int d = 1; d < fold.pow2; d *= 2) {
    const int partner = i ^ d, mine = i & ~(d - 1), theirs = partner & ~(d - 1);
    // The first group of a rank that absorbed nobody is its own input: no wait for the copy.
    const bool own_input = d == 1 && !fold.absorbs(r);
    co_yield prog.emit(send_step(fold.rank_of(partner),
                                 own_input ? in : s.at(Buffer::output, blocks(mine, mine + d))),
                       own_input ? kNoStep : copied, last);
    co_yield prog.emit(
        recv_step(fold.rank_of(partner), s.at(Buffer::output, blocks(theirs, theirs + d))));
    last = prog.last();
  }
  if (fold.absorbs(r))
    co_yield prog.emit(send_step(r - 1, s.at(Buffer::output, s.all())), copied, last);
}

class RecursiveDoubling final : public Generator {
public:
  RecursiveDoubling()
      : Generator("recursive_doubling", Op::all_gather,
                  "swap doubling groups with the rank 2^k away; lg(p)α + n(p-1)/p·β "
                  "(+2α + n(1+1/p)β if p is not a power of two) (Thakur et al. 2005)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, false, false);
    check_params(call, kUsesNone);
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return recursive_doubling(shape_of(call, rank, channel));
  }
};

} // namespace

const Algorithm& all_gather_recursive_doubling() {
  static const RecursiveDoubling algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
