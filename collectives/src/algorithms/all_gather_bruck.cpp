// all_gather "bruck": ⌈lg p⌉ steps for any p; at step k rank r sends the first min(2^k, p-2^k)
// blocks it holds to rank r-2^k and receives as many from rank r+2^k.
//
// Cost (Bruck et al. 1997; Thakur, Rabenseifner & Gropp 2005, sec. 4.1): ⌈lg p⌉α + n(p-1)/p·β,
// plus a local rotation. Blocks are held in scratch in rotated order (position q holds block
// r+q), so what is sent and received is always one contiguous range even with uneven block
// sizes; two copies put them in place at the end.
#include "common.hpp"
#include "registry.hpp"

#include <algorithm>

namespace ddlsim::coll::gen {

namespace {

StepStream bruck(Shape s) {
  Program prog(s.channel);
  const int p = s.p, r = s.rank;
  const ElementRange own = s.block(r);
  const BufferRange in = s.at(Buffer::input, shift(own, own.begin));
  if (p == 1) {
    co_yield prog.emit(copy_step(in, s.at(Buffer::output, own)));
    co_return;
  }
  // Elements before position q of this rank's rotated order (blocks r, r+1, ... r+q-1).
  auto position = [&s, p, r](int q) -> std::uint64_t {
    auto begin = [&s, p](int b) { return b >= p ? s.n : s.block(b).begin; };
    return r + q <= p ? begin(r + q) - begin(r) : (s.n - begin(r)) + begin(r + q - p);
  };
  auto rotated = [&](int a, int b) {
    return s.at(Buffer::scratch, ElementRange{position(a), position(b)});
  };
  co_yield prog.emit(copy_step(in, rotated(0, 1)));
  std::uint32_t last = prog.last();
  for (int d = 1; d < p; d *= 2) {
    const int count = std::min(d, p - d);
    co_yield prog.emit(send_step(s.mod(r - d), rotated(0, count)), last);
    co_yield prog.emit(recv_step(s.mod(r + d), rotated(d, d + count)));
    last = prog.last();
  }
  // Undo the rotation: positions 0..p-r-1 are blocks r..p-1, the rest blocks 0..r-1.
  co_yield prog.emit(
      copy_step(rotated(0, p - r), s.at(Buffer::output, ElementRange{own.begin, s.n})), last);
  if (r > 0)
    co_yield prog.emit(
        copy_step(rotated(p - r, p), s.at(Buffer::output, ElementRange{0, own.begin})), last);
}

class Bruck final : public Generator {
public:
  Bruck()
      : Generator("bruck", Op::all_gather,
                  "⌈lg p⌉ steps for any p, blocks kept rotated; ⌈lg p⌉α + n(p-1)/p·β "
                  "(Bruck et al. 1997)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, false, false);
    check_params(call, kUsesNone);
  }
  std::uint64_t scratch_bytes(const CollectiveCall& call, int /*rank*/) const override {
    return call.ranks > 1 ? call.bytes : 0;
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return bruck(shape_of(call, rank, channel));
  }
};

} // namespace

const Algorithm& all_gather_bruck() {
  static const Bruck algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
