#include "llm_tp_overlap.hpp"

#include "kernel_rates.hpp"

#include "ddlsim/core/sim_time.hpp"

#include <string_view>

namespace ddlsim::models {
namespace {

// One linear layer's three GEMMs on one TP rank: Y[m,n] = X[m,k] W[n,k]^T, its input gradient
// (m x k, reduced over n) and its weight gradient (n x k, reduced over m).
struct Gemm {
  Picoseconds forward = 0, input_grad = 0, weight_grad = 0;
};

class GemmTimes {
public:
  explicit GemmTimes(const LlmSpec& spec) : spec_(spec), rates_(KernelRates::for_gpu(spec.gpu)) {}

  // Under FP8 training every one of them is a Transformer Engine layer's, on the FP8 table.
  Gemm linear(double tokens, double n, double k) const {
    const bool fp8 = spec_.precision == LlmPrecision::fp8;
    const double flops = 2 * tokens * n * k;
    if (!rates_) { // the roofline's linear-layer rate (llm_compute.cpp, roofline_block_times)
      const double peak = fp8 ? spec_.gpu.fp8_flops : spec_.gpu.fp16_flops;
      const double efficiency =
          spec_.gpu.fp16_efficiency[static_cast<std::size_t>(LayerKind::linear)];
      const Picoseconds each = checked_ps(flops / (peak * efficiency) * 1e12);
      return {each, each, each};
    }
    const MatmulPrecision precision = fp8 ? MatmulPrecision::fp8 : MatmulPrecision::bf16;
    const double peak = fp8 ? spec_.gpu.fp8_flops : spec_.gpu.fp16_flops;
    auto time = [&](GemmPass pass, double rows, double cols, double depth) {
      return checked_ps(
          flops / (peak * rates_->gemm_efficiency(precision, pass, rows, cols, depth)) * 1e12);
    };
    return {time(GemmPass::forward, tokens, n, k), time(GemmPass::input_grad, tokens, k, n),
            time(GemmPass::weight_grad, n, k, tokens)};
  }

private:
  const LlmSpec& spec_;
  const KernelRates* rates_;
};

} // namespace

TpOverlapTimes llm_tp_overlap_gemms(const LlmSpec& spec) {
  const LlmShape& m = spec.shape;
  const GemmTimes gemms(spec);
  const double t = spec.parallel.tp, h = static_cast<double>(m.hidden);
  const double tokens = static_cast<double>(m.seq_len) * spec.micro_batch;
  const double f = static_cast<double>(m.ffn), up = m.gated_ffn ? 2 : 1;
  // Megatron's fused QKV projection, the attention output projection, the FFN's up projection
  // (fused with its gate) and its down projection, per TP rank (llm_compute.cpp's shapes).
  const Gemm qkv = gemms.linear(tokens, (h + 2 * static_cast<double>(m.kv_dim())) / t, h);
  const Gemm proj = gemms.linear(tokens, h, h / t);
  const Gemm fc1 = gemms.linear(tokens, up * f / t, h);
  const Gemm fc2 = gemms.linear(tokens, h, f / t);
  TpOverlapTimes out;
  out.attention = {qkv.forward, proj.forward, proj.input_grad, qkv.weight_grad};
  out.ffn = {fc1.forward, fc2.forward, fc2.input_grad, fc1.weight_grad};
  return out;
}

int streaming_multiprocessors(const GpuSpec& gpu) {
  const std::string_view name = gpu.name;
  // NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020): 108 SMs. NVIDIA H100 Tensor Core
  // GPU Architecture whitepaper (2022): 132 SMs on the SXM5, 114 on the PCIe card. The H200 and
  // the GH200's GPU are the same GH100 configuration as the H100 SXM5 (their datasheets: the
  // H100's compute figures).
  if (name.starts_with("A100")) return 108;
  if (name.starts_with("H100-PCIe")) return 114;
  if (name == "H100" || name.starts_with("H100-SXM") || name.starts_with("H200") ||
      name.starts_with("GH200"))
    return 132;
  return 0;
}

double tp_overlap_sm_margin(const GpuSpec& gpu) {
  const int sms = streaming_multiprocessors(gpu);
  if (sms <= kTpOverlapCommSms) return 1.0;
  return static_cast<double>(sms) / (sms - kTpOverlapCommSms);
}

} // namespace ddlsim::models
