#include "ddlsim/models/gpu.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/suggest.hpp"

#include <algorithm>
#include <cmath>

namespace ddlsim::models {
namespace {

// Efficiency per LayerKind {conv, linear, attention, norm, embedding, pool, elementwise}: the
// fraction of the FLOP peak that cuDNN/cuBLAS kernels reach on typical training shapes. Norm,
// embedding, pool and elementwise layers are memory-bound, so their FLOP efficiency barely
// matters (the roofline takes the memory time). Calibrated so that ResNet-50 on one V100
// gives about 370 images/s in FP32 and 1,300 in mixed precision (NVIDIA DeepLearningExamples,
// PyTorch ResNet-50 v1.5 training performance on DGX-1 V100), and BERT-Large about 2.5x faster
// in mixed precision than in FP32 on V100 (same source, BERT). Calibrate from measurements by
// editing these (the `gpu` object of a training workload overrides them per scenario).
constexpr std::array<double, kLayerKinds> kFp32Efficiency{0.65, 0.75, 0.55, 0.5, 0.5, 0.5, 0.5};
constexpr std::array<double, kLayerKinds> kFp16Efficiency{0.32, 0.45, 0.3, 0.5, 0.5, 0.5, 0.5};
constexpr Picoseconds kKernelOverhead = 4 * kPsPerUs; // PyTorch eager dispatch + launch per op

GpuSpec make(std::string name, double fp32_tflops, double fp16_tflops, double memory_gbytes) {
  GpuSpec gpu;
  gpu.name = std::move(name);
  gpu.fp32_flops = fp32_tflops * 1e12;
  gpu.fp16_flops = fp16_tflops * 1e12;
  gpu.memory_bytes_per_second = memory_gbytes * 1e9;
  gpu.fp32_efficiency = kFp32Efficiency;
  gpu.fp16_efficiency = kFp16Efficiency;
  gpu.kernel_overhead = kKernelOverhead;
  return gpu;
}

// Datasheet figures (boost clock, dense; no structured sparsity):
//  P100 SXM2: 10.6 TFLOPS FP32, 21.2 FP16 (no tensor cores), 732 GB/s (NVIDIA Tesla P100
//    datasheet).
//  P40: 12 TFLOPS FP32, 346 GB/s (NVIDIA Tesla P40 datasheet); its FP16 rate is 1/64 of FP32,
//    so mixed precision runs at the FP32 rate (frameworks keep FP32 math there).
//  V100 SXM2: 15.7 TFLOPS FP32, 125 FP16 tensor, 900 GB/s (NVIDIA V100 datasheet).
//  A10G (AWS G5): 31.2 TFLOPS FP32, 70 FP16 tensor, 600 GB/s (AWS G5 / NVIDIA A10G figures as
//    published by AWS; NVIDIA publishes no A10G datasheet).
//  A100 SXM4: 19.5 TFLOPS FP32 (PyTorch's default TF32 convolutions are not modelled), 312 FP16
//    tensor, 1,555 GB/s for 40 GB, 2,039 GB/s for 80 GB (NVIDIA A100 datasheet).
//  H100 SXM5: 67 TFLOPS FP32, 989 FP16 tensor, 3,350 GB/s (NVIDIA H100 datasheet).
std::vector<GpuSpec> presets() {
  return {make("P100", 10.6, 21.2, 732),
          make("P40", 12.0, 12.0, 346),
          make("V100", 15.7, 125.0, 900),
          make("A10G", 31.2, 70.0, 600),
          make("A100-SXM4-80GB", 19.5, 312.0, 2039),
          make("A100", 19.5, 312.0, 1555),
          make("H100", 67.0, 989.0, 3350)};
}

Picoseconds seconds_to_ps(double seconds) {
  return static_cast<Picoseconds>(std::llround(seconds * 1e12));
}

} // namespace

std::string_view to_string(Precision precision) {
  return precision == Precision::fp32 ? "fp32" : "fp16";
}

std::vector<std::string> gpu_preset_names() {
  std::vector<std::string> names;
  for (const GpuSpec& gpu : presets()) names.push_back(gpu.name);
  return names;
}

GpuSpec find_gpu(std::string_view name, const std::string& where) {
  const std::vector<GpuSpec> all = presets();
  for (const GpuSpec& gpu : all)
    if (gpu.name == name) return gpu;
  for (const GpuSpec& gpu : all) // more specific names come first in the list
    if (name.find(gpu.name) != std::string_view::npos) return gpu;
  const std::vector<std::string> names = gpu_preset_names();
  throw InputError(where, "no GPU model for \"" + std::string(name) + "\"" +
                              did_you_mean(name, names) + "; expected one of " +
                              join_choices(names) + " (or a name containing one)");
}

LayerTimes layer_times(const Layer& layer, const GpuSpec& gpu, Precision precision, int batch,
                       double speed) {
  const bool half = precision == Precision::fp16;
  const std::size_t kind = static_cast<std::size_t>(layer.kind);
  const double flops_rate = half ? gpu.fp16_flops * gpu.fp16_efficiency[kind]
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

Picoseconds optimizer_time(std::uint64_t parameters, const GpuSpec& gpu, Precision precision,
                           double speed) {
  const double bytes = static_cast<double>(parameters) * (precision == Precision::fp16 ? 20 : 16);
  return seconds_to_ps(bytes / (gpu.memory_bytes_per_second * gpu.memory_efficiency) / speed) +
         gpu.kernel_overhead;
}

} // namespace ddlsim::models
