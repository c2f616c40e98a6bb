// all_reduce "topk": flat sparse all-reduce of top-k sparsified gradients (Aji & Heafield 2017,
// "Sparse communication for distributed gradient descent"; Renggli et al. 2019, SparCML, its
// all-gather form). Each rank keeps the k = ceil(density·n) elements of largest magnitude of its
// input (Codec::topk: ties broken by the lower index) as (uint32 index, value) pairs, the ranks
// all-gather the pairs around a ring, and every rank scatter-adds all p sets into its zeroed
// output as they arrive.
//
// The result is an approximation by definition: out = Σ_r topk(input_r) (avg: / p), the sum over
// ranks of each rank's own top-k; expected_outputs computes exactly that. Elements no rank kept
// are 0. The output is zeroed by scaling the input by 0 (inputs must be finite).
//
// Cost, with w = k(4 + e) bytes of pairs per rank (e the element size) and γ_c the codec rate:
//   n·γ_c (zero + select) + (p-1)(α + w·β) + p·w·γ_c (decompress),
// so it beats a dense ring (2n(p-1)/p·β) while p·w < 2n, i.e. density < 2e/((4+e)p) roughly;
// beyond that the all-gather of pairs grows with p. Scratch: p·w bytes. Uses params.density;
// chunks and channels must be 1 (slices would each keep their own top-k). avg: the output is
// scaled by 1/p at the end.
#include "phases.hpp"
#include "registry.hpp"
#include "sparse.hpp"

namespace ddlsim::coll::gen {

namespace {

StepStream topk_all_reduce(Shape s, std::uint64_t k) {
  Program prog(s.channel);
  const Place in{Buffer::input, 0, s.e}, out{Buffer::output, 0, s.e};
  const Place slots{Buffer::scratch, 0, k * (4 + s.e)}; // slot q: rank q's pairs
  auto slot = [](int q) { return ElementRange{std::uint64_t(q), std::uint64_t(q) + 1}; };
  const BufferRange input = in.at(s.all()), output = out.at(s.all());
  co_yield prog.emit(zero_step(input, output));
  const std::uint32_t zeroed = prog.last();
  co_yield prog.emit(codec_step(StepKind::compress, Codec::topk, input, slots.at(slot(s.rank))));
  std::uint32_t have = prog.last();
  co_yield prog.emit(codec_step(StepKind::decompress, Codec::topk, slots.at(slot(s.rank)), output),
                     zeroed, have);
  std::uint32_t added = prog.last();
  const Ring ring{s.rank, s.p, s.mod(s.rank - 1), s.mod(s.rank + 1)};
  for (int t = 0; t < s.p - 1; ++t) { // ring all-gather of the slots
    co_yield prog.emit(send_step(ring.right, slots.at(slot(s.mod(s.rank - t)))), have);
    const int q = s.mod(s.rank - t - 1);
    co_yield prog.emit(recv_step(ring.left, slots.at(slot(q))));
    have = prog.last();
    co_yield prog.emit(codec_step(StepKind::decompress, Codec::topk, slots.at(slot(q)), output),
                       have, added);
    added = prog.last();
  }
  if (s.avg()) co_yield prog.emit(scale_step(output, 1.0 / s.p), added);
}

class TopK final : public SparseGenerator {
public:
  TopK()
      : SparseGenerator("topk", Op::all_reduce,
                        "lossy: each rank keeps its top ceil(density·n) elements, ring all-gather "
                        "of (index, value) pairs, sum; (p-1)(α + k(4+e)β) + codec; uses density "
                        "(Aji & Heafield 2017; Renggli et al. 2019)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, false, false);
    check_params(call, kUsesDensity);
    check_pair_indices(call.elements());
  }
  std::uint64_t scratch_bytes(const CollectiveCall& call, int /*rank*/) const override {
    return std::uint64_t(call.ranks) * k(call) * (4 + element_size(call.dtype));
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return topk_all_reduce(shape_of(call, rank, channel), k(call));
  }
  std::vector<std::vector<double>>
  expected_outputs(const CollectiveCall& call,
                   const std::vector<std::vector<double>>& inputs) const override {
    std::vector<double> sum(call.elements(), 0.0);
    for (int r = 0; r < call.ranks; ++r) add_topk(inputs[std::size_t(r)], k(call), sum, 0);
    finish_average(call, sum);
    return std::vector<std::vector<double>>(std::size_t(call.ranks), sum);
  }

private:
  static std::uint64_t k(const CollectiveCall& call) {
    return topk_count(call.params.density, call.elements());
  }
};

} // namespace

const Algorithm& all_reduce_topk() {
  static const TopK algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
