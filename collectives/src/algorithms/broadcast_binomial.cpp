// broadcast "binomial": the binomial tree of MPICH rooted at `root`. In ranks relative to the
// root, rank v receives from v - 2^k where 2^k is v's lowest set bit, then sends to v + 2^j for
// every 2^j < 2^k (largest first).
//
// Cost (Thakur, Rabenseifner & Gropp 2005, sec. 4.2): ⌈lg p⌉(α + nβ). The root copies its input
// to its output and sends from the input, so nothing it sends waits for the copy. A rank's sends
// go one after another (each waits for the previous one to complete, as MPICH's blocking sends
// do): sent all at once they would share the sender's link and the tree would lose its rounds.
#include "common.hpp"
#include "registry.hpp"

#include <bit>

namespace ddlsim::coll::gen {

namespace {

StepStream binomial(Shape s) {
  Program prog(s.channel);
  const int v = s.mod(s.rank - s.root);
  auto real = [&s](int relative) { return s.mod(relative + s.root); };
  const BufferRange out = s.at(Buffer::output, s.all());
  BufferRange from = s.at(Buffer::input, s.all());
  std::uint32_t have = kNoStep;
  int mask; // the bit at which v receives; for the root the first power of two >= p
  if (v == 0) {
    co_yield prog.emit(copy_step(from, out));
    mask = int(std::bit_ceil(unsigned(s.p)));
  } else {
    mask = v & -v;
    co_yield prog.emit(recv_step(real(v - mask), out));
    have = prog.last();
    from = out;
  }
  std::uint32_t previous_send = kNoStep;
  for (int m = mask / 2; m >= 1; m /= 2) {
    if (v + m >= s.p) continue;
    co_yield prog.emit(send_step(real(v + m), from), have, previous_send);
    previous_send = prog.last();
  }
}

class Binomial final : public Generator {
public:
  Binomial()
      : Generator("binomial", Op::broadcast,
                  "binomial tree from the root; ⌈lg p⌉(α + nβ) (Thakur et al. 2005)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, false, false);
    check_params(call, kUsesNone);
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return binomial(shape_of(call, rank, channel));
  }
};

} // namespace

const Algorithm& broadcast_binomial() {
  static const Binomial algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
