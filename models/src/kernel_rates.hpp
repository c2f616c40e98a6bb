// Kernel rates measured on a real GPU (models/kernel-rates/*.tsv, written by
// scripts/measure-gpu-kernels.py): GEMM throughput by shape, layout and precision, and fused causal
// attention by heads and sequence length, as fractions of the measured GPU's datasheet peak. The
// large-model compute model (llm_compute.cpp) applies them to GPUs of the same architecture, whose
// kernels (cuBLAS, cuDNN) run the same tiles: the fraction, not the rate, carries over.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

namespace ddlsim::models {

// Which product of a linear layer Y[m,n] = X[m,k] W[n,k]^T a GEMM is: the forward product, the
// input gradient dX = dY W (output m x k, reduction over n) or the weight gradient dW = dY^T X
// (output n x k, reduction over m). Each has its own operand layout and so its own kernels.
enum class GemmPass { forward, input_grad, weight_grad };
enum class MatmulPrecision { bf16, fp8 };

class KernelRates {
public:
  // The table measured on a GPU of compute capability `cc` (x10), or nullptr when there is none.
  static const KernelRates* for_compute_capability(int cc);

  // Fraction of the datasheet peak (dense, this precision) that the linear layer's `pass` reaches
  // for a layer of m tokens, n outputs and k inputs (interpolated in log2 of each size between
  // the measured shapes, clamped at the table's edges).
  double gemm_efficiency(MatmulPrecision precision, GemmPass pass, double m, double n,
                         double k) const;
  // Fraction of the bf16 peak a fused causal attention kernel (head size 128) reaches for
  // `heads` query heads (times the micro-batch) over `seq` tokens; forward or backward pass.
  // FLOPs counted causal: the forward pass 2 s^2 d per head, the backward 2.5x that.
  double attention_efficiency(double heads, double seq, bool backward) const;
  // The measurement the table comes from, for reports and docs.
  const std::string& source() const { return source_; }

  struct Grid { // values on the product of three log2-spaced axes (or two: the last of size 1)
    std::array<std::vector<double>, 3> axes;
    std::vector<double> values; // row-major over axes[0], axes[1], axes[2]
    double at(double a, double b, double c) const;
  };

private:
  std::string source_;
  std::map<std::pair<MatmulPrecision, GemmPass>, Grid> gemm_;
  Grid attention_forward_, attention_backward_;
  friend KernelRates load_hopper_rates();
};

} // namespace ddlsim::models
