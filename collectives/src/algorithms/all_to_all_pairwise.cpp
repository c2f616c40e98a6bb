// all_to_all "pairwise": p-1 exchange steps; at step s rank r sends block r+s of its input to
// rank r+s and receives block r-s of its output from rank r-s, one exchange at a time.
//
// Cost (Thakur, Rabenseifner & Gropp 2005, sec. 4.6, pairwise exchange for long messages):
// (p-1)α + n(p-1)/p·β. The shift form is used for every p (MPICH uses XOR partners for
// power-of-two p; the cost is the same). Each step's send waits for the previous receive, so at
// most one message per rank is in flight. The own block is a local copy.
#include "common.hpp"
#include "registry.hpp"

namespace ddlsim::coll::gen {

namespace {

StepStream pairwise(Shape s) {
  Program prog(s.channel);
  const int r = s.rank;
  co_yield prog.emit(copy_step(s.at(Buffer::input, s.block(r)), s.at(Buffer::output, s.block(r))));
  std::uint32_t last = kNoStep;
  for (int step = 1; step < s.p; ++step) {
    const int to = s.mod(r + step), from = s.mod(r - step);
    co_yield prog.emit(send_step(to, s.at(Buffer::input, s.block(to))), last);
    co_yield prog.emit(recv_step(from, s.at(Buffer::output, s.block(from))));
    last = prog.last();
  }
}

class Pairwise final : public Generator {
public:
  Pairwise()
      : Generator("pairwise", Op::all_to_all,
                  "p-1 pairwise exchanges, one at a time; (p-1)α + n(p-1)/p·β "
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

const Algorithm& all_to_all_pairwise() {
  static const Pairwise algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
