// reduce "binomial": the binomial tree of MPICH toward `root`. In ranks relative to the root,
// rank v receive-reduces from v + 2^k for each 2^k below its lowest set bit (smallest first),
// then sends its partial result to v - (its lowest set bit).
//
// Cost (Thakur, Rabenseifner & Gropp 2005, sec. 4.5): ⌈lg p⌉(α + nβ + nγ). Partial sums build up
// in the root's output, elsewhere in scratch (n bytes, only on ranks with children); leaves send
// their input directly. avg: the root scales by 1/p at the end.
#include "common.hpp"
#include "registry.hpp"

namespace ddlsim::coll::gen {

namespace {

StepStream binomial(Shape s) {
  Program prog(s.channel);
  const int v = s.mod(s.rank - s.root);
  const BufferRange in = s.at(Buffer::input, s.all());
  const BufferRange work = s.at(v == 0 ? Buffer::output : Buffer::scratch, s.all());
  if (s.p == 1) {
    co_yield prog.emit(copy_step(in, work));
    co_return;
  }
  BufferRange current = in;
  std::uint32_t last = kNoStep;
  for (int mask = 1; mask < s.p; mask *= 2) {
    if (v & mask) {
      co_yield prog.emit(send_step(s.mod(v - mask + s.root), current), last);
      co_return;
    }
    if ((v | mask) < s.p) {
      // Partial sums accumulate in place: each waits for the previous one.
      co_yield prog.emit(recv_reduce_step(s.mod((v | mask) + s.root), current, work), last);
      current = work;
      last = prog.last();
    }
  }
  if (s.avg()) co_yield prog.emit(scale_step(work, 1.0 / s.p), last);
}

class Binomial final : public Generator {
public:
  Binomial()
      : Generator("binomial", Op::reduce,
                  "binomial tree toward the root; ⌈lg p⌉(α + nβ + nγ) (Thakur et al. 2005)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, false, false);
    check_params(call, kUsesNone);
  }
  std::uint64_t scratch_bytes(const CollectiveCall& call, int rank) const override {
    const int v = ((rank - call.root) % call.ranks + call.ranks) % call.ranks;
    return v != 0 && v % 2 == 0 && v + 1 < call.ranks ? call.bytes : 0;
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return binomial(shape_of(call, rank, channel));
  }
};

} // namespace

const Algorithm& reduce_binomial() {
  static const Binomial algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
