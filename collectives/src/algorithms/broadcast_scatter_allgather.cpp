// broadcast "scatter_allgather": van de Geijn's long-message broadcast, a binomial scatter of
// the p blocks followed by a ring all-gather (Barnett et al. 1994; MPICH's
// scatter_ring_allgather).
//
// Cost (Thakur, Rabenseifner & Gropp 2005, sec. 4.2): (⌈lg p⌉ + p - 1)α + 2n(p-1)/p·β. Blocks are
// numbered in ranks relative to the root (block v = partition(n, p, v) of the buffer), so the
// subtree of relative rank v, ranks v .. v+min(2^k, p-v)-1, owns one contiguous range. The root
// copies its input to its output and scatters from the input; every rank, the root included,
// then runs the p-1 all-gather steps around the relative ring v -> v+1.
#include "common.hpp"
#include "registry.hpp"

#include <algorithm>
#include <bit>

namespace ddlsim::coll::gen {

namespace {

StepStream scatter_allgather(Shape s) {
  Program prog(s.channel);
  const int p = s.p, v = s.mod(s.rank - s.root);
  auto real = [&s](long long relative) { return s.mod(relative + s.root); };
  auto blocks = [&s, p](int a, int b) {
    return parts_span(s.n, std::uint64_t(p), std::uint64_t(a), std::uint64_t(b));
  };
  Buffer from = Buffer::input;
  std::uint32_t have;
  int mask;
  if (v == 0) {
    co_yield prog.emit(copy_step(s.at(Buffer::input, s.all()), s.at(Buffer::output, s.all())));
    have = prog.last();
    mask = int(std::bit_ceil(unsigned(p)));
  } else {
    mask = v & -v;
    co_yield prog.emit(
        recv_step(real(v - mask), s.at(Buffer::output, blocks(v, std::min(v + mask, p)))));
    have = prog.last();
    from = Buffer::output;
  }
  for (int m = mask / 2; m >= 1; m /= 2)
    if (v + m < p)
      co_yield prog.emit(send_step(real(v + m), s.at(from, blocks(v + m, std::min(v + 2 * m, p)))),
                         v == 0 ? kNoStep : have);
  std::uint32_t last = have;
  for (int step = 0; step < p - 1; ++step) {
    const int sent = s.mod(v - step), received = s.mod(v - step - 1);
    co_yield prog.emit(send_step(real(v + 1), s.at(Buffer::output, blocks(sent, sent + 1))), last);
    co_yield prog.emit(
        recv_step(real(v - 1), s.at(Buffer::output, blocks(received, received + 1))));
    last = prog.last();
  }
}

class ScatterAllgather final : public Generator {
public:
  ScatterAllgather()
      : Generator("scatter_allgather", Op::broadcast,
                  "binomial scatter + ring all-gather; (⌈lg p⌉ + p - 1)α + 2n(p-1)/p·β "
                  "(van de Geijn; Thakur et al. 2005)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, false, false);
    check_params(call, kUsesNone);
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return scatter_allgather(shape_of(call, rank, channel));
  }
};

} // namespace

const Algorithm& broadcast_scatter_allgather() {
  static const ScatterAllgather algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
