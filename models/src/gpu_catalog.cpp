// The GPU models and where each figure comes from. Figures are the vendor's peak rates at boost
// clock, dense (NVIDIA datasheets quote tensor rates "with sparsity": those are halved here).
// fp16 is the tensor-core rate with FP32 accumulation (what mixed-precision training uses: on
// GeForce cards it is half the FP16-accumulate rate the box quotes); fp32 is the CUDA-core (AMD:
// vector) rate. A figure the vendor does not publish, or a unit the GPU lacks, is 0.
#include "ddlsim/models/gpu.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/suggest.hpp"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <string_view>
#include <utility>

namespace ddlsim::models {
namespace {

// Efficiency per LayerKind {conv, linear, attention, norm, embedding, pool, elementwise}: the
// fraction of the FLOP peak that cuDNN/cuBLAS kernels reach on typical training shapes. Norm,
// embedding, pool and elementwise layers are memory-bound, so their FLOP efficiency barely
// matters (the roofline takes the memory time). Chosen aiming at ResNet-50 on one V100 at about
// 370 images/s in FP32 and 1,300 in mixed precision (NVIDIA DeepLearningExamples, PyTorch
// ResNet-50 v1.5 training performance on DGX-1 V100), and BERT-Large about 2.5x faster in mixed
// precision than in FP32 on V100 (same source, BERT). The model falls short of the first: it gives
// 334 images/s in FP32 and 1,058 in FP16 at batch 64 (docs/training.md has the scenario). The
// `gpu` object of a training workload overrides these per scenario.
constexpr std::array<double, kLayerKinds> kFp32Efficiency{0.65, 0.75, 0.55, 0.5, 0.5, 0.5, 0.5};
constexpr std::array<double, kLayerKinds> kFp16Efficiency{0.32, 0.45, 0.3, 0.5, 0.5, 0.5, 0.5};
constexpr Picoseconds kKernelOverhead = 4 * kPsPerUs; // PyTorch eager dispatch + launch per op

struct Peaks { // TFLOP/s, dense
  double fp32 = 0;
  double tf32 = 0;
  double fp16 = 0; // also BF16 where the GPU has it
  double fp8 = 0;
};

struct GpuModel {
  std::string full_name;
  // What reports print. The models ddlsim had first keep the short names reports have always
  // shown ("V100", "A100", "H100"); newer ones print their full name.
  std::string report_name;
  std::vector<std::string> short_names;
  Peaks peaks;
  double memory_gbytes_per_second = 0;
  double memory_gbytes = 0;
  int compute_capability = 0; // x10; 0 = not a CUDA GPU
};

GpuModel model(std::string full_name, std::string report_name,
               std::initializer_list<std::string> short_names, Peaks peaks, double memory_gbps,
               double memory_gbytes, int compute_capability) {
  return {std::move(full_name), std::move(report_name), short_names,       peaks,
          memory_gbps,          memory_gbytes,          compute_capability};
}

// Sources, by model (datasheet = the vendor's product datasheet for that GPU):
//  P100 SXM2: 10.6 TFLOPS FP32, 21.2 FP16 (no tensor cores), 732 GB/s, 16 GB (NVIDIA Tesla P100
//    datasheet).
//  P40: 12 TFLOPS FP32, 346 GB/s, 24 GB (NVIDIA Tesla P40 datasheet); its FP16 rate is 1/64 of
//    FP32, so mixed precision runs at the FP32 rate (frameworks keep FP32 math there).
//  V100: SXM2 15.7 TFLOPS FP32, 125 tensor; PCIe 14 and 112; both 900 GB/s, 16 or 32 GB HBM2
//    (NVIDIA V100 datasheet).
//  T4: 8.1 TFLOPS FP32, 65 FP16 tensor (mixed precision), 320 GB/s, 16 GB GDDR6 (NVIDIA T4
//    datasheet).
//  RTX 2080 Ti: 13.4 TFLOPS FP32, 53.8 FP16 tensor with FP32 accumulate, 616 GB/s, 11 GB
//    (NVIDIA Turing GPU architecture whitepaper, appendix A, reference-clock card).
//  RTX 3090: 35.6 TFLOPS FP32, 35.6 TF32, 71 FP16 tensor with FP32 accumulate, 936 GB/s, 24 GB
//    (NVIDIA Ampere GA102 GPU architecture whitepaper, table of GeForce RTX 3090 specifications).
//  RTX 4090: 82.6 TFLOPS FP32, 82.6 TF32, 165.2 FP16 and 330.3 FP8 tensor with FP32 accumulate,
//    1,008 GB/s, 24 GB (NVIDIA Ada GPU architecture whitepaper, appendix, RTX 4090).
//  A10G (AWS G5): 31.2 TFLOPS FP32, 70 FP16 tensor, 600 GB/s, 24 GB (AWS G5 / NVIDIA A10G
//    figures as published by AWS; NVIDIA publishes no A10G datasheet, and no TF32 figure).
//  L4: 30.3 TFLOPS FP32, TF32 120, FP16 242, FP8 485 with sparsity, 300 GB/s, 24 GB (NVIDIA L4
//    datasheet).
//  L40S: 91.6 TFLOPS FP32, dense TF32 183, FP16 362.05, FP8 733 (twice that with sparsity),
//    864 GB/s, 48 GB (NVIDIA L40S datasheet).
//  A100: 19.5 TFLOPS FP32 (PyTorch's default TF32 convolutions are not modelled), TF32 156,
//    FP16 312 tensor; 40 GB 1,555 GB/s; 80 GB PCIe 1,935 GB/s; 80 GB SXM 2,039 GB/s (NVIDIA
//    A100 datasheet).
//  H100: SXM5 67 TFLOPS FP32, TF32 989, FP16 1,979, FP8 3,958 with sparsity, 80 GB, 3,350 GB/s;
//    PCIe 51, 756, 1,513, 3,026, 80 GB, 2,000 GB/s; NVL 60, 835, 1,671, 3,341, 94 GB,
//    3,900 GB/s (NVIDIA H100 datasheet). The SXM5's FP16 stays at the 989 ddlsim has always
//    used (the datasheet's 1,979 / 2 = 989.5) so that reports do not move.
//  H200 SXM: the H100 SXM5 compute with 141 GB HBM3e at 4,800 GB/s (NVIDIA H200 datasheet).
//  GH200: the Hopper GPU of the Grace Hopper superchip, 67 TFLOPS FP32, TF32 989, FP16 1,979,
//    FP8 3,958 with sparsity; 96 GB HBM3 at 4,000 GB/s, or 144 GB HBM3e at 4,900 GB/s (NVIDIA
//    GH200 Grace Hopper Superchip datasheet).
//  B200: per GPU of a DGX B200 (the datasheet gives 8 GPUs): 72 PFLOPS FP8 training and 1,440 GB
//    of HBM3e at 64 TB/s, so 9 PFLOPS FP8 with sparsity, 180 GB, 8,000 GB/s; FP16 4.5 PFLOPS and
//    TF32 2.2 PFLOPS with sparsity, FP32 75 TFLOPS (NVIDIA HGX B200 specifications, per GPU).
//  GB200: per Blackwell GPU of a GB200 NVL72 rack (the datasheet gives the rack's 72): FP32
//    5,760 TFLOPS, TF32 180 PFLOPS, FP16/BF16 360, FP8 720 with sparsity, 13.4 TB of HBM3e at
//    576 TB/s, so 80 TFLOPS FP32, dense TF32 1,250, FP16 2,500, FP8 5,000, 186 GB at 8,000 GB/s
//    (NVIDIA GB200 NVL72 specifications).
//  MI250X: 47.9 TFLOPS FP32 vector, 383 FP16/BF16 matrix, no TF32 or FP8, 128 GB HBM2e at
//    3,276.8 GB/s (AMD Instinct MI250X data sheet; one OAM module, both dies).
//  MI300X: 163.4 TFLOPS FP32, TF32 653.7, FP16/BF16 1,307.4, FP8 2,614.9 dense, 192 GB HBM3 at
//    5,300 GB/s (AMD Instinct MI300X data sheet).
// The last figure is the CUDA compute capability x10 (NVIDIA, "CUDA GPUs - Compute Capability",
// developer.nvidia.com/cuda-gpus): P100 6.0, P40 6.1, V100 7.0, T4 and RTX 2080 Ti 7.5, A100 8.0,
// A10G and RTX 3090 8.6, L4, L40S and RTX 4090 8.9, H100, H200 and GH200 9.0, B200 and GB200 10.0;
// AMD GPUs have none (0). NCCL's tuner picks its constants by it (models/nccl_model.hpp).
std::vector<GpuModel> catalog() {
  return {
      model("P100-SXM2-16GB", "P100", {"P100"}, {10.6, 0, 21.2, 0}, 732, 16, 60),
      model("P40", "P40", {"P40-24GB"}, {12.0, 0, 12.0, 0}, 346, 24, 61),
      model("V100-SXM2-16GB", "V100", {"V100", "V100-SXM2"}, {15.7, 0, 125.0, 0}, 900, 16, 70),
      model("V100-SXM2-32GB", "V100", {}, {15.7, 0, 125.0, 0}, 900, 32, 70),
      model("V100-PCIe-16GB", "V100-PCIe-16GB", {"V100-PCIe"}, {14.0, 0, 112.0, 0}, 900, 16, 70),
      model("V100-PCIe-32GB", "V100-PCIe-32GB", {}, {14.0, 0, 112.0, 0}, 900, 32, 70),
      model("T4", "T4", {"T4-16GB"}, {8.1, 0, 65.0, 0}, 320, 16, 75),
      model("RTX-2080-Ti", "RTX-2080-Ti", {}, {13.4, 0, 53.8, 0}, 616, 11, 75),
      model("RTX-3090", "RTX-3090", {}, {35.6, 35.6, 71.0, 0}, 936, 24, 86),
      model("RTX-4090", "RTX-4090", {}, {82.6, 82.6, 165.2, 330.3}, 1008, 24, 89),
      model("A10G", "A10G", {}, {31.2, 0, 70.0, 0}, 600, 24, 86),
      model("L4", "L4", {}, {30.3, 60.0, 121.0, 242.5}, 300, 24, 89),
      model("L40S", "L40S", {}, {91.6, 183.0, 362.05, 733.0}, 864, 48, 89),
      model("A100-SXM4-40GB", "A100", {"A100", "A100-SXM4"}, {19.5, 156.0, 312.0, 0}, 1555, 40, 80),
      model("A100-SXM4-80GB", "A100-SXM4-80GB", {"A100-80GB"}, {19.5, 156.0, 312.0, 0}, 2039, 80,
            80),
      model("A100-PCIe-40GB", "A100-PCIe-40GB", {"A100-PCIe"}, {19.5, 156.0, 312.0, 0}, 1555, 40,
            80),
      model("A100-PCIe-80GB", "A100-PCIe-80GB", {}, {19.5, 156.0, 312.0, 0}, 1935, 80, 80),
      model("H100-SXM5-80GB", "H100", {"H100", "H100-SXM", "H100-SXM5", "H100-80GB-HBM3"},
            {67.0, 494.5, 989.0, 1979.0}, 3350, 80, 90),
      model("H100-PCIe-80GB", "H100-PCIe-80GB", {"H100-PCIe"}, {51.0, 378.0, 756.5, 1513.0}, 2000,
            80, 90),
      model("H100-NVL-94GB", "H100-NVL-94GB", {"H100-NVL"}, {60.0, 417.5, 835.5, 1670.5}, 3900, 94,
            90),
      model("H200-SXM-141GB", "H200-SXM-141GB", {"H200", "H200-SXM"}, {67.0, 494.5, 989.5, 1979.0},
            4800, 141, 90),
      model("GH200-96GB", "GH200-96GB", {"GH200", "GH200-480GB"}, {67.0, 494.5, 989.5, 1979.0},
            4000, 96, 90),
      model("GH200-144GB", "GH200-144GB", {"GH200-624GB"}, {67.0, 494.5, 989.5, 1979.0}, 4900, 144,
            90),
      model("B200-SXM-180GB", "B200-SXM-180GB", {"B200"}, {75.0, 1100.0, 2250.0, 4500.0}, 8000, 180,
            100),
      model("GB200-186GB", "GB200-186GB", {"GB200"}, {80.0, 1250.0, 2500.0, 5000.0}, 8000, 186,
            100),
      model("MI250X", "MI250X", {}, {47.9, 0, 383.0, 0}, 3276.8, 128, 0),
      model("MI300X", "MI300X", {}, {163.4, 653.7, 1307.4, 2614.9}, 5300, 192, 0),
  };
}

// Streaming multiprocessors (SMs) of the NVIDIA GPUs whose count the vendor publishes: NVIDIA's
// architecture whitepapers (Pascal: Tesla P100 56; Volta: V100 80; Turing: T4 40, RTX 2080 Ti
// 68; Ampere GA100: A100 108; GA102: RTX 3090 82; Ada: RTX 4090 128, L40S 142, L4 58; Hopper:
// H100 SXM5 132, H100 PCIe 114) and the H100 NVL, H200 and GH200 datasheets (the Hopper GPU with
// 132 SMs). P40: 3,840 CUDA cores at 128 per Pascal GP102 SM (Tesla P40 datasheet), 30.
// Not published per GPU, so 0 (compute is then not slowed by communication kernels): A10G,
// B200, GB200; AMD's compute units are not SMs and RCCL's blocks were not measured: 0.
int streaming_multiprocessors(const std::string& full_name) {
  static const std::array<std::pair<std::string_view, int>, 22> kSms{{
      {"P100-SXM2-16GB", 56},
      {"P40", 30},
      {"V100-SXM2-16GB", 80},
      {"V100-SXM2-32GB", 80},
      {"V100-PCIe-16GB", 80},
      {"V100-PCIe-32GB", 80},
      {"T4", 40},
      {"RTX-2080-Ti", 68},
      {"RTX-3090", 82},
      {"RTX-4090", 128},
      {"L4", 58},
      {"L40S", 142},
      {"A100-SXM4-40GB", 108},
      {"A100-SXM4-80GB", 108},
      {"A100-PCIe-40GB", 108},
      {"A100-PCIe-80GB", 108},
      {"H100-SXM5-80GB", 132},
      {"H100-PCIe-80GB", 114},
      {"H100-NVL-94GB", 132},
      {"H200-SXM-141GB", 132},
      {"GH200-96GB", 132},
      {"GH200-144GB", 132},
  }};
  for (const auto& [name, sms] : kSms)
    if (name == full_name) return sms;
  return 0;
}

GpuSpec to_spec(const GpuModel& model) {
  GpuSpec gpu;
  gpu.name = model.report_name;
  gpu.fp32_flops = model.peaks.fp32 * 1e12;
  gpu.fp16_flops = model.peaks.fp16 * 1e12;
  gpu.tf32_flops = model.peaks.tf32 * 1e12;
  gpu.fp8_flops = model.peaks.fp8 * 1e12;
  gpu.memory_bytes_per_second = model.memory_gbytes_per_second * 1e9;
  gpu.memory_capacity_bytes = model.memory_gbytes * 1e9;
  gpu.fp32_efficiency = kFp32Efficiency;
  gpu.fp16_efficiency = kFp16Efficiency;
  gpu.kernel_overhead = kKernelOverhead;
  gpu.compute_capability = model.compute_capability;
  gpu.sms = streaming_multiprocessors(model.full_name);
  return gpu;
}

// Lower case, spaces and underscores as dashes, without the vendor's brand prefix, so that the
// names nvidia-smi and rocm-smi print ("Tesla V100-SXM2-16GB", "NVIDIA H100 80GB HBM3") match.
std::string normalized(std::string_view name) {
  std::string out;
  for (char c : name)
    out += (c == ' ' || c == '_') ? '-'
                                  : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view prefix : {"amd-instinct-", "nvidia-", "tesla-", "geforce-"})
    if (out.starts_with(prefix)) out.erase(0, prefix.size());
  return out;
}

} // namespace

std::vector<std::string> gpu_preset_names() {
  std::vector<std::string> names;
  for (const GpuModel& gpu : catalog()) names.push_back(gpu.full_name);
  std::sort(names.begin(), names.end());
  return names;
}

GpuSpec find_gpu(std::string_view name, const std::string& where) {
  const std::string wanted = normalized(name);
  for (const GpuModel& gpu : catalog()) {
    if (normalized(gpu.full_name) == wanted) return to_spec(gpu);
    for (const std::string& short_name : gpu.short_names)
      if (normalized(short_name) == wanted) return to_spec(gpu);
  }
  const std::vector<std::string> names = gpu_preset_names();
  std::vector<std::string> all_names = names; // "H300" is nearer "H100" than "H100-SXM5-80GB"
  for (const GpuModel& gpu : catalog())
    all_names.insert(all_names.end(), gpu.short_names.begin(), gpu.short_names.end());
  throw InputError(where, "no GPU model \"" + std::string(name) + "\"" +
                              did_you_mean(name, all_names) + "; expected one of " +
                              join_choices(names));
}

int compute_capability(std::string_view gpu_name) {
  const std::string wanted = normalized(gpu_name);
  for (const GpuModel& gpu : catalog()) {
    if (normalized(gpu.full_name) == wanted) return gpu.compute_capability;
    for (const std::string& short_name : gpu.short_names)
      if (normalized(short_name) == wanted) return gpu.compute_capability;
  }
  // Names nvidia-smi prints for GPUs the catalog has no compute figures for, matched by the
  // model token they contain (same source as the catalog's figures). Longest first where one
  // token contains another (A100 before A10, H100 before H10).
  struct Arch {
    const char* token;
    int cc;
  };
  static constexpr Arch kArchs[] = {
      {"gb200", 100}, {"b200", 100},   {"b100", 100}, {"gh200", 90},  {"h200", 90},
      {"h100", 90},   {"h800", 90},    {"h20", 90},   {"l40", 89},    {"l4", 89},
      {"a100", 80},   {"a800", 80},    {"a30", 80},   {"a10g", 86},   {"a10", 86},
      {"a40", 86},    {"a6000", 86},   {"a5000", 86}, {"rtx-30", 86}, {"t4", 75},
      {"v100", 70},   {"titan-v", 70}, {"p100", 60},  {"p40", 61},    {"k80", 37}};
  for (const Arch& arch : kArchs)
    if (wanted.find(arch.token) != std::string::npos) return arch.cc;
  return 0;
}

} // namespace ddlsim::models
