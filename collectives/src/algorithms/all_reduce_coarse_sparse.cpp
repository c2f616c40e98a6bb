// all_reduce "coarse_sparse": coarse-grained sparse communication of GradientFlow (Sun et al.
// 2019, "Optimizing network performance for distributed DNN training on GPU clusters:
// ImageNet/AlexNet training in 1.5 minutes", arXiv:1902.06855). The buffer is cut into chunks of
// params.chunk_bytes (0 = 32,768 elements); every rank computes each chunk's L2 norm
// (Codec::chunk_norms), the ranks ring-all-reduce the norms (sum), every rank picks the same
// s = ceil(density·F) chunks with the largest summed norms (Codec::chunk_select, ties by the
// lower index; F = whole chunks) and packs them, the packed chunks are all-reduced densely
// (ring), and unpacked into the output.
//
// What the output holds (expected_outputs): the exact sum (avg: mean) on the selected chunks,
// 0 on the chunks not selected (GradientFlow keeps those as local residuals, which is the
// training loop's business, not the collective's), and the exact sum on the tail: when the size
// is not a multiple of chunk_bytes the last, partial chunk is always sent (it rides with the
// packed chunks), so nothing is lost to rounding the size.
//
// Cost, with F chunks of c bytes, s selected, t tail bytes, m = 4F + s·c + t, γ_c the codec rate
// (norms, select, unpack, zeroing):
//   4(p-1)α + 2m(p-1)/p·β + m(p-1)/p·γ + about 3n·γ_c,
// two ring all-reduces (norms, then chunks) moving about density·n instead of n.
// fp32 only: the norms are fp32 and the Schedule's receive-reduce adds in the call's dtype, so
// an fp16 / bf16 call could not sum them (use dtype fp32, or topk for 16-bit gradients). Scratch:
// 4F + s·c + t bytes. Uses params.density and params.chunk_bytes; chunks and channels must be 1.
#include "registry.hpp"
#include "sparse.hpp"

#include <cmath>

namespace ddlsim::coll::gen {

namespace {

struct Layout {
  std::uint64_t chunk = 0;    // bytes per chunk
  std::uint64_t full = 0;     // F: whole chunks
  std::uint64_t selected = 0; // s
  std::uint64_t tail = 0;     // bytes after the whole chunks
  std::uint64_t norms_bytes() const { return 4 * full; }
  std::uint64_t packed_bytes() const { return selected * chunk + tail; }
};

Layout layout_of(const CollectiveCall& call) {
  Layout l;
  const std::uint64_t e = element_size(call.dtype);
  l.chunk = call.params.chunk_bytes == 0 ? 32768 * e : call.params.chunk_bytes;
  l.full = call.bytes / l.chunk;
  l.tail = call.bytes - l.full * l.chunk;
  l.selected = topk_count(call.params.density, l.full);
  return l;
}

StepStream coarse_sparse(Shape s, Layout l) {
  Program prog(s.channel);
  Step step;
  const Ring ring{s.rank, s.p, s.mod(s.rank - 1), s.mod(s.rank + 1)};
  const std::uint64_t dense = l.full * l.chunk;
  const BufferRange chunks_in{Buffer::input, 0, dense}, chunks_out{Buffer::output, 0, dense};
  const Place norms{Buffer::scratch, 0, 4};
  const Place packed{Buffer::scratch, l.norms_bytes(), s.e};
  const BufferRange all_norms = norms.at({0, l.full});
  const ElementRange packed_units{0, l.packed_bytes() / s.e};
  std::uint32_t zeroed = kNoStep, summed = kNoStep, ready = kNoStep;
  if (l.full > 0) {
    co_yield prog.emit(zero_step(chunks_in, chunks_out));
    zeroed = prog.last();
    co_yield prog.emit(
        codec_step(StepKind::compress, Codec::chunk_norms, chunks_in, all_norms, double(l.chunk)));
    summed = prog.last();
    for (StepStream phase =
             ring_reduce_scatter(prog, ring, {0, l.full}, norms, norms, summed, summed);
         phase.next(step);)
      co_yield step;
    for (StepStream phase = ring_all_gather(prog, ring, {0, l.full}, norms, summed, summed);
         phase.next(step);)
      co_yield step;
    co_yield prog.emit(codec_step(StepKind::compress, Codec::chunk_select, chunks_in,
                                  packed.at({0, l.selected * l.chunk / s.e}), double(l.chunk),
                                  all_norms),
                       summed);
    ready = prog.last();
  }
  if (l.tail > 0) {
    co_yield prog.emit(copy_step({Buffer::input, dense, l.tail},
                                 {Buffer::scratch, l.norms_bytes() + l.selected * l.chunk, l.tail}),
                       ready);
    ready = prog.last();
  }
  // Dense ring all-reduce of the packed chunks and the tail, in place in scratch.
  for (StepStream phase =
           ring_reduce_scatter(prog, ring, packed_units, packed, packed, ready, ready);
       phase.next(step);)
    co_yield step;
  if (s.avg()) {
    co_yield prog.emit(
        scale_step(packed.at(sub(packed_units, std::uint64_t(s.p), std::uint64_t(s.rank))),
                   1.0 / s.p),
        ready);
    ready = prog.last();
  }
  for (StepStream phase = ring_all_gather(prog, ring, packed_units, packed, ready, ready);
       phase.next(step);)
    co_yield step;
  if (l.full > 0)
    co_yield prog.emit(codec_step(StepKind::decompress, Codec::chunk_select,
                                  packed.at({0, l.selected * l.chunk / s.e}), chunks_out,
                                  double(l.chunk), all_norms),
                       ready, zeroed);
  if (l.tail > 0)
    co_yield prog.emit(copy_step({Buffer::scratch, l.norms_bytes() + l.selected * l.chunk, l.tail},
                                 {Buffer::output, dense, l.tail}),
                       ready);
}

class CoarseSparse final : public SparseGenerator {
public:
  CoarseSparse()
      : SparseGenerator("coarse_sparse", Op::all_reduce,
                        "lossy: ring all-reduce of chunk norms, dense ring all-reduce of the "
                        "ceil(density·chunks) chunks with the largest norms, others 0; 4(p-1)α + "
                        "2(4F + density·n)(p-1)/p·β + codec; uses density, chunk_bytes; fp32 (Sun "
                        "et al. 2019, GradientFlow)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, false, false);
    check_params(call, kUsesDensity | kUsesChunkBytes);
    const std::uint64_t e = element_size(call.dtype);
    if (call.dtype != DataType::fp32)
      reject("coarse_sparse sums fp32 chunk norms, which a receive-reduce of an " +
             std::string(to_string(call.dtype)) +
             " call cannot add; use dtype fp32 (or topk for 16-bit gradients)");
    if (call.params.chunk_bytes % e != 0 || call.params.chunk_bytes > (std::uint64_t(1) << 40))
      reject("chunk_bytes must be a whole number of " + std::to_string(e) +
             "-byte elements, at most 1 TiB, not " + std::to_string(call.params.chunk_bytes));
  }
  std::uint64_t scratch_bytes(const CollectiveCall& call, int /*rank*/) const override {
    const Layout l = layout_of(call);
    return l.norms_bytes() + l.packed_bytes();
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return coarse_sparse(shape_of(call, rank, channel), layout_of(call));
  }
  std::vector<std::vector<double>>
  expected_outputs(const CollectiveCall& call,
                   const std::vector<std::vector<double>>& inputs) const override;
};

std::vector<std::vector<double>>
CoarseSparse::expected_outputs(const CollectiveCall& call,
                               const std::vector<std::vector<double>>& inputs) const {
  const Layout l = layout_of(call);
  const std::uint64_t e = element_size(call.dtype), per_chunk = l.chunk / e, n = call.elements();
  const auto p = std::size_t(call.ranks);
  // Each rank's chunk norms as Codec::chunk_norms computes them (double sum, fp32 result), then
  // their sum in the ring's order (the chain of block b starts at rank b+1) in fp32.
  std::vector<std::vector<double>> norms(p, std::vector<double>(l.full));
  for (std::size_t r = 0; r < p; ++r)
    for (std::uint64_t c = 0; c < l.full; ++c) {
      double squares = 0;
      for (std::uint64_t i = c * per_chunk; i < (c + 1) * per_chunk; ++i)
        squares += inputs[r][i] * inputs[r][i];
      norms[r][c] = static_cast<float>(std::sqrt(squares));
    }
  std::vector<double> total(l.full);
  for (int b = 0; b < call.ranks; ++b) {
    const std::vector<double> part = ring_sum(call, norms, 0, call.ranks, 1, {0, l.full}, b);
    const ElementRange range = sub({0, l.full}, p, std::uint64_t(b));
    std::copy(part.begin(), part.end(), total.begin() + std::ptrdiff_t(range.begin));
  }
  std::vector<bool> selected(l.full, false);
  for (std::uint64_t c : top_indices(total, l.selected)) selected[c] = true;
  std::vector<double> sum(n, 0.0);
  for (std::size_t r = 0; r < p; ++r)
    for (std::uint64_t i = 0; i < n; ++i)
      if (i / per_chunk >= l.full || selected[i / per_chunk]) sum[i] += inputs[r][i];
  finish_average(call, sum);
  return std::vector<std::vector<double>>(p, sum);
}

} // namespace

const Algorithm& all_reduce_coarse_sparse() {
  static const CoarseSparse algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
