// GPU models for training compute: peak FP32 and FP16 tensor throughput, memory bandwidth, and
// the fraction of peak that each kind of layer reaches (calibratable), giving per-layer compute
// times by a roofline: a layer takes the longer of its FLOPs at the achieved FLOP rate and its
// memory traffic at the achieved memory bandwidth, plus a fixed kernel-launch overhead. The
// reduction and top-k selection rates are what the collectives' local steps run at.
//
// What it does not model: cuDNN algorithm choice per shape, tensor-core shape alignment,
// kernel fusion, memory capacity (a batch that does not fit is not rejected) and clock
// throttling. Compute slowed by concurrent communication kernels is the engines' (optional,
// sim/compute_slowdown.hpp), from the SM count here.
#pragma once

#include "ddlsim/core/units.hpp"
#include "ddlsim/models/zoo.hpp"

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace ddlsim::models {

// fp16: mixed precision (AMP), fp16 gradients; tf32: FP32 storage and gradients, matrix products
// (conv, linear, attention) on the TF32 tensor cores (Ampere and later; PyTorch's allow_tf32).
enum class Precision : std::uint8_t { fp32, fp16, tf32 };
std::string_view to_string(Precision precision);

struct GpuSpec {
  std::string name;
  double fp32_flops = 0;              // peak FP32 (CUDA cores), FLOP/s
  double fp16_flops = 0;              // peak FP16 with tensor cores (dense), FLOP/s
  double memory_bytes_per_second = 0; // HBM / GDDR datasheet bandwidth
  // Datasheet figures the compute model does not use yet (0: the GPU has no such unit): TF32 and
  // FP8 tensor peaks (dense), and the memory capacity. BF16 runs at the fp16_flops rate on every
  // GPU listed.
  double tf32_flops = 0;
  double fp8_flops = 0;
  double memory_capacity_bytes = 0;
  // Fraction of the FLOP peak each layer kind reaches, indexed by LayerKind, per precision.
  std::array<double, kLayerKinds> fp32_efficiency{};
  std::array<double, kLayerKinds> fp16_efficiency{};
  double memory_efficiency = 0.8;  // fraction of the memory bandwidth streaming kernels reach
  Picoseconds kernel_overhead = 0; // per layer and pass (launch and framework dispatch)
  int compute_capability = 0;      // CUDA compute capability x10 (90 = sm_90); 0 = not CUDA
  // Streaming multiprocessors (gpu_catalog.cpp); 0 = no published figure. The share of them
  // that communication kernels' thread blocks hold sets how much they slow compute beside them
  // (sim/compute_slowdown.hpp).
  int sms = 0;
  // Collective local steps: reduction (reads 2, writes 1 byte per byte) and top-k selection.
  double reduce_bytes_per_second() const { return memory_efficiency * memory_bytes_per_second / 3; }
  double topk_bytes_per_second() const { return memory_efficiency * memory_bytes_per_second / 8; }
};

// The GPU models, by their full names ("A100-SXM4-80GB", "H100-PCIe-80GB", "MI300X"), sorted;
// each figure's source is in gpu_catalog.cpp.
std::vector<std::string> gpu_preset_names();
// The model called `name`: its full name or one of its short names ("V100", "H200"), ignoring
// case, a leading "NVIDIA", "Tesla", "GeForce" or "AMD Instinct", and spaces versus dashes
// ("NVIDIA H100 80GB HBM3" is the H100 SXM5). Anything else throws InputError at `where`
// listing the known models: no GPU silently gets another GPU's figures.
GpuSpec find_gpu(std::string_view name, const std::string& where);
// CUDA compute capability x10 (70 = sm_70) of a GPU model name as find_gpu accepts it, or as
// nvidia-smi prints it ("Tesla V100-SXM2-16GB", "NVIDIA A10G", "NVIDIA H800"); 0 when the name
// is not an NVIDIA GPU we know.
int compute_capability(std::string_view gpu_name);

struct LayerTimes {
  Picoseconds forward = 0;
  Picoseconds backward = 0;
};

// Compute time of one layer for `batch` samples on `gpu`, slowed by 1/speed (speed 1 = the
// preset; 0.5 = a GPU half as fast, for heterogeneous clusters). fp16 uses the tensor-core peak
// and moves 2-byte activations; tf32 runs the matrix-product kinds at the TF32 tensor-core peak
// and the rest as fp32.
LayerTimes layer_times(const Layer& layer, const GpuSpec& gpu, Precision precision, int batch,
                       double speed);
// The optimizer whose step follows the last backward pass; its step is memory-bound, so its time
// is the bytes it reads and writes per parameter over the GPU's memory rate (see optimizer_time).
enum class Optimizer : std::uint8_t { sgd, adam, lamb };
std::string_view to_string(Optimizer optimizer);

// The optimizer step over `parameters`, memory-bound: the bytes read and written per fp32
// parameter by the optimizer's kernels over the memory rate, plus 4 bytes per parameter with fp16
// master weights (the fp16 gradient read and the fp16 copy of the weights written).
//  sgd (the default): SGD with momentum, 16 bytes per parameter.
//  adam: 28 bytes: apex csrc/multi_tensor_adam.cu reads gradient, weight, m and v and writes
//        weight, m and v (7 x 4 bytes) in one fused pass.
//  lamb: 52 bytes: apex FusedLAMB (csrc/multi_tensor_lamb.cu) reads the gradients for the global
//        norm (4), the weights for the per-tensor weight norms (4), then stage 1 reads gradient,
//        weight, m, v and writes the update into the gradient, m and v (28), the update norms
//        read the update (4), and stage 2 reads update and weight and writes the weight (12).
// For model-parallel embedding tables the caller passes only the rows a batch touches (sparse
// updates).
Picoseconds optimizer_time(std::uint64_t parameters, const GpuSpec& gpu, Precision precision,
                           double speed, Optimizer optimizer = Optimizer::sgd);

} // namespace ddlsim::models
