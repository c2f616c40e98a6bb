// all_gather "ring": p-1 steps around the ring r -> r+1; at step s rank r forwards block r-s
// (its own input at step 0) and receives block r-s-1.
//
// Cost (Thakur, Rabenseifner & Gropp 2005, sec. 4.1): (p-1)α + n(p-1)/p·β. Each rank first
// copies its input into its block of the output. params.chunks pipelines every block in chunks
// and params.channels runs independent rings over slices of every block, as in all_reduce ring.
#include "common.hpp"
#include "registry.hpp"

#include <vector>

namespace ddlsim::coll::gen {

namespace {

StepStream ring_all_gather(Shape s) {
  Program prog(s.channel);
  const int r = s.rank;
  auto slice = [&s](long long b) {
    return sub(s.block(s.mod(b)), std::uint64_t(s.channels), std::uint64_t(s.channel));
  };
  auto piece = [&](long long b, int j) {
    return sub(slice(b), std::uint64_t(s.chunks), std::uint64_t(j));
  };
  const std::uint64_t origin = s.block(r).begin; // input holds block r only
  co_yield prog.emit(
      copy_step(s.at(Buffer::input, shift(slice(r), origin)), s.at(Buffer::output, slice(r))));
  const int right = s.mod(r + 1), left = s.mod(r - 1);
  std::vector<std::uint32_t> last(std::size_t(s.chunks), kNoStep);
  for (int step = 0; step < s.p - 1; ++step) {
    for (int j = 0; j < s.chunks; ++j) {
      const BufferRange src = step == 0 ? s.at(Buffer::input, shift(piece(r, j), origin))
                                        : s.at(Buffer::output, piece(r - step, j));
      co_yield prog.emit(send_step(right, src), last[j]);
      co_yield prog.emit(recv_step(left, s.at(Buffer::output, piece(r - step - 1, j))));
      last[j] = prog.last();
    }
  }
}

class RingAllGather final : public Generator {
public:
  RingAllGather()
      : Generator("ring", Op::all_gather,
                  "p-1 steps around a ring; (p-1)α + n(p-1)/p·β; uses chunks, channels "
                  "(Thakur et al. 2005)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, true, true);
    check_params(call, kUsesNone);
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return ring_all_gather(shape_of(call, rank, channel));
  }
};

} // namespace

const Algorithm& all_gather_ring() {
  static const RingAllGather algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
