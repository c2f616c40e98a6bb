// Compute slowed by the communication kernels beside it on the same GPU.
//
// NCCL runs a collective as one kernel with one thread block per channel, resident for the
// kernel's whole life (it spins while it waits for data), beside the framework's compute kernels
// on another stream. Those blocks take SM slots the compute kernel's blocks would have used.
// Measured on one H200 (132 SMs; scripts/measure-gpu-overlap.py, kept in
// tests/data/gpu-overlap/h200-overlap.tsv): a bf16 GEMM beside k blocks of another stream takes
// 1.13-1.22x as long at k = 8, 1.22-1.24x at 16, 1.33-1.37x at 32 and 1.85-1.93x at 64, whether
// the blocks only hold their SMs or also copy memory. The curve below is the mean of the four
// GEMM rows (two shapes, spinning or copying blocks) at each k, by SM share k / 132.
//
// Memory-bound kernels (norms, elementwise) are not slowed by blocks that only hold SMs and
// 1.01-1.11x by blocks that copy memory, as NCCL's do: a compute step says which share of its
// time is such kernels (coll::Step::memory_bound_share) and that share follows the measured
// elementwise-beside-copying-blocks curve below, the rest the GEMM curve.
//
// Assumptions (docs/engines.md says so too): other GPUs follow the same curves by SM share (the
// H200 and an H100 were measured); a step's kernels interleave finely enough that its rate is
// the mix of the two curves (exact while the blocks beside it do not change); past the largest
// share measured (64 of 132) the slowdown stays at its last measured value.
#pragma once

#include <array>
#include <cstddef>

namespace ddlsim::sim {

struct SlowdownPoint {
  double sm_share = 0; // blocks beside the compute kernel / the GPU's SMs
  double slowdown = 1; // time beside them / time alone
};

// tests/data/gpu-overlap/h200-overlap.tsv: the gemm8192 and gemm4096x4096x16384 rows, spin and
// copy, averaged per k (k = 8, 16, 32, 64 of 132 SMs).
inline constexpr std::array<SlowdownPoint, 5> kGemmSlowdownCurve{{
    {0.0, 1.0},
    {8.0 / 132.0, (1.148 + 1.135 + 1.223 + 1.129) / 4.0},
    {16.0 / 132.0, (1.224 + 1.243 + 1.215 + 1.235) / 4.0},
    {32.0 / 132.0, (1.328 + 1.372 + 1.328 + 1.346) / 4.0},
    {64.0 / 132.0, (1.859 + 1.932 + 1.854 + 1.930) / 4.0},
}};

// tests/data/gpu-overlap/h200-overlap.tsv: the elementwise1GiB row beside copying blocks (NCCL's
// blocks move data), k = 8, 16, 32, 64 of 132 SMs.
inline constexpr std::array<SlowdownPoint, 5> kMemoryBoundSlowdownCurve{{
    {0.0, 1.0},
    {8.0 / 132.0, 1.010},
    {16.0 / 132.0, 1.022},
    {32.0 / 132.0, 1.055},
    {64.0 / 132.0, 1.114},
}};

// A curve interpolated linearly by SM share, held at its last point past it.
template <std::size_t N>
double interpolate_slowdown(const std::array<SlowdownPoint, N>& curve, double share) {
  for (std::size_t i = 1; i < N; ++i) {
    const SlowdownPoint& lo = curve[i - 1];
    const SlowdownPoint& hi = curve[i];
    if (share <= hi.sm_share)
      return lo.slowdown +
             (hi.slowdown - lo.slowdown) * (share - lo.sm_share) / (hi.sm_share - lo.sm_share);
  }
  return curve.back().slowdown;
}

// The two slowdowns a rank's compute sees beside `blocks` thread blocks of communication
// kernels on a GPU of `sms` SMs; both 1 without blocks or for sms <= 0 (a GPU without a figure).
struct RankSlowdown {
  double gemm = 1;
  double memory_bound = 1;

  // A compute step with `memory_bound_share` of its time in memory-bound kernels.
  double of(double memory_bound_share) const {
    return memory_bound_share <= 0 ? gemm : gemm + (memory_bound - gemm) * memory_bound_share;
  }
  bool operator==(const RankSlowdown&) const = default;
};

inline RankSlowdown rank_slowdown(double blocks, int sms) {
  if (sms <= 0 || blocks <= 0) return {};
  const double share = blocks / static_cast<double>(sms);
  return {interpolate_slowdown(kGemmSlowdownCurve, share),
          interpolate_slowdown(kMemoryBoundSlowdownCurve, share)};
}

// How many times longer a compute step takes while `blocks` thread blocks of communication
// kernels are resident on a GPU of `sms` SMs: the GEMM curve for its GEMM share, the
// memory-bound curve for the rest (0: all GEMM-like), 1 without blocks.
inline double compute_slowdown(double blocks, int sms, double memory_bound_share = 0) {
  return rank_slowdown(blocks, sms).of(memory_bound_share);
}

} // namespace ddlsim::sim
