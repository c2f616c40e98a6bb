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
// Assumptions (docs/engines.md says so too): other GPUs follow the same curve by SM share (only
// the H200 was measured); every compute step is GEMM-like (memory-bound kernels, norms and
// elementwise, are not slowed by blocks that only hold SMs and 1.02-1.11x by copying ones, so
// this overstates their slowdown); past the largest share measured (64 of 132) the slowdown
// stays at its last measured value.
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

// How many times longer a compute step takes while `blocks` thread blocks of communication
// kernels are resident on a GPU of `sms` SMs: the curve above interpolated linearly by SM share,
// 1 without blocks, held at its last point past it. sms <= 0 (a GPU without a figure): 1.
inline double compute_slowdown(double blocks, int sms) {
  if (sms <= 0 || blocks <= 0) return 1.0;
  const double share = blocks / static_cast<double>(sms);
  for (std::size_t i = 1; i < kGemmSlowdownCurve.size(); ++i) {
    const SlowdownPoint& lo = kGemmSlowdownCurve[i - 1];
    const SlowdownPoint& hi = kGemmSlowdownCurve[i];
    if (share <= hi.sm_share)
      return lo.slowdown +
             (hi.slowdown - lo.slowdown) * (share - lo.sm_share) / (hi.sm_share - lo.sm_share);
  }
  return kGemmSlowdownCurve.back().slowdown;
}

} // namespace ddlsim::sim
