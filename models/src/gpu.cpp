#include "ddlsim/models/gpu.hpp"

#include <algorithm>
#include <cmath>

namespace ddlsim::models {
namespace {

Picoseconds seconds_to_ps(double seconds) {
  return static_cast<Picoseconds>(std::llround(seconds * 1e12));
}

} // namespace

std::string_view to_string(Precision precision) {
  switch (precision) {
  case Precision::fp16:
    return "fp16";
  case Precision::tf32:
    return "tf32";
  default:
    return "fp32";
  }
}

LayerTimes layer_times(const Layer& layer, const GpuSpec& gpu, Precision precision, int batch,
                       double speed) {
  const bool half = precision == Precision::fp16;
  const std::size_t kind = static_cast<std::size_t>(layer.kind);
  // TF32 reaches the tensor cores only through the matrix products (cuBLAS and cuDNN); it runs
  // them at the tensor cores' per-kind efficiency, the fraction FP16 kernels reach.
  const bool matrix = layer.kind == LayerKind::conv || layer.kind == LayerKind::linear ||
                      layer.kind == LayerKind::attention;
  const double flops_rate = half ? gpu.fp16_flops * gpu.fp16_efficiency[kind]
                            : precision == Precision::tf32 && matrix
                                ? gpu.tf32_flops * gpu.fp16_efficiency[kind]
                                : gpu.fp32_flops * gpu.fp32_efficiency[kind];
  const double memory_rate = gpu.memory_bytes_per_second * gpu.memory_efficiency;
  const double element = half ? 0.5 : 1.0; // activation bytes are stored for fp32
  // Forward reads the input and writes the output (about two activations) and reads the
  // weights; backward reads the output gradient, input and weights and writes the input and
  // weight gradients (about twice that).
  const double activations = static_cast<double>(layer.activation_bytes) * batch * element;
  const double weights = static_cast<double>(layer.parameters) * 4.0 * element;
  double forward_bytes = 2 * activations + weights;
  double backward_bytes = 4 * activations + 2 * weights;
  if (layer.kind == LayerKind::embedding) {
    // A lookup reads only the rows it returns; the backward pass of a dense (data-parallel)
    // embedding writes a full-size gradient, a model-parallel (sparse) one only the rows.
    forward_bytes = 2 * activations;
    backward_bytes = 4 * activations + (layer.model_parallel ? 0 : weights);
  }
  auto time = [&](double flops, double bytes) {
    const double compute = flops_rate > 0 ? flops * batch / flops_rate : 0;
    return seconds_to_ps(std::max(compute, bytes / memory_rate) / speed) + gpu.kernel_overhead;
  };
  return {time(layer.forward_flops, forward_bytes), time(layer.backward_flops, backward_bytes)};
}

std::string_view to_string(Optimizer optimizer) {
  switch (optimizer) {
  case Optimizer::sgd:
    return "sgd";
  case Optimizer::adam:
    return "adam";
  case Optimizer::lamb:
    return "lamb";
  }
  return "sgd";
}

Picoseconds optimizer_time(std::uint64_t parameters, const GpuSpec& gpu, Precision precision,
                           double speed, Optimizer optimizer) {
  // Bytes per fp32 parameter of each optimizer's kernels (gpu.hpp names the sources).
  const double per_parameter = optimizer == Optimizer::lamb   ? 52
                               : optimizer == Optimizer::adam ? 28
                                                              : 16;
  const double bytes =
      static_cast<double>(parameters) * (per_parameter + (precision == Precision::fp16 ? 4 : 0));
  return seconds_to_ps(bytes / (gpu.memory_bytes_per_second * gpu.memory_efficiency) / speed) +
         gpu.kernel_overhead;
}

} // namespace ddlsim::models
