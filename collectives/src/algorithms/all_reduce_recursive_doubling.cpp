// all_reduce "recursive_doubling": at level k each rank exchanges its whole buffer with the rank
// 2^k away and combines, so after log2(p) levels every rank holds the full reduction.
//
// Cost (Thakur, Rabenseifner & Gropp 2005, sec. 4.4): lg(p)α + n·lg(p)·β + n·lg(p)·γ for a
// power-of-two p. Other p use MPICH's fix-up (see Fold): the first 2r ranks (r = p - 2^⌊lg p⌋)
// fold pairwise before and unfold after, adding 2α + 2nβ + nγ: ⌊lg p⌋+2 steps in all. Latency-
// optimal, so the choice for small messages.
//
// Buffers: each level sends the current buffer while receiving the partner's into the other of
// output / scratch (ping-pong), so no level overwrites bytes still being sent; the parity is
// chosen so that the last level lands in output. avg scales the result by 1/p. adasum (Maleki et
// al. 2021, as in Horovod): each combine is adasum of the two whole vectors, which makes the
// result the binary adasum tree of exact_outputs; needs a power-of-two p (no fold for adasum).
#include "common.hpp"
#include "registry.hpp"

#include <bit>

namespace ddlsim::coll::gen {

namespace {

StepStream recursive_doubling(Shape s) {
  Program prog(s.channel);
  const int r = s.rank;
  const BufferRange in = s.at(Buffer::input, s.all()), out = s.at(Buffer::output, s.all());
  if (s.p == 1) {
    co_yield prog.emit(copy_step(in, out));
    co_return;
  }
  const Fold fold(s.p, true);
  if (fold.leaves(r)) { // hand the data to r+1, get the result back
    co_yield prog.emit(send_step(r + 1, in));
    co_yield prog.emit(recv_step(r + 1, out));
    co_return;
  }
  const int levels = log2_floor(fold.pow2), i = fold.newrank(r);
  // The buffer written at level k (level 0: the fold): output for the last level.
  auto target = [&](int k) {
    return s.at((levels - k) % 2 == 0 ? Buffer::output : Buffer::scratch, s.all());
  };
  BufferRange current = in;
  std::uint32_t last_write = kNoStep, last_send = kNoStep;
  if (fold.absorbs(r)) {
    co_yield prog.emit(recv_reduce_step(r - 1, in, target(0)));
    current = target(0);
    last_write = prog.last();
  }
  for (int k = 1; k <= levels; ++k) {
    const int partner = fold.rank_of(i ^ (1 << (k - 1)));
    co_yield prog.emit(send_step(partner, current), last_write);
    const std::uint32_t previous_send = last_send;
    last_send = prog.last();
    // target(k) was the source of the previous level's send: wait until it is out.
    co_yield prog.emit(recv_reduce_step(partner, current, target(k)), previous_send);
    current = target(k);
    last_write = prog.last();
  }
  if (s.avg()) {
    co_yield prog.emit(scale_step(out, 1.0 / s.p), last_write);
    last_write = prog.last();
  }
  if (fold.absorbs(r)) co_yield prog.emit(send_step(r - 1, out), last_write);
}

class RecursiveDoubling final : public Generator {
public:
  RecursiveDoubling()
      : Generator("recursive_doubling", Op::all_reduce,
                  "whole-buffer exchange with rank 2^k away; lg(p)α + n·lg(p)·β + n·lg(p)·γ "
                  "(+2α + 2nβ + nγ if p is not a power of two); supports adasum "
                  "(Thakur et al. 2005; Maleki et al. 2021)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, false, false, true);
    check_params(call, kUsesNone);
    if (call.reduction == Reduction::adasum && !std::has_single_bit(unsigned(call.ranks)))
      reject("adasum needs a power-of-two rank count (adasum is not associative, so the "
             "non-power-of-two fold would change the result); " +
             std::to_string(call.ranks) + " ranks is not one: use " +
             std::to_string(pow2_floor(call.ranks)) + " or " +
             std::to_string(2 * pow2_floor(call.ranks)));
  }
  std::uint64_t scratch_bytes(const CollectiveCall& call, int rank) const override {
    if (call.ranks == 1) return 0;
    const Fold fold(call.ranks, true);
    const int levels = log2_floor(fold.pow2);
    const bool uses = !fold.leaves(rank) && (levels >= 2 || fold.absorbs(rank));
    return uses ? call.bytes : 0;
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return recursive_doubling(shape_of(call, rank, channel));
  }
};

} // namespace

const Algorithm& all_reduce_recursive_doubling() {
  static const RecursiveDoubling algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
