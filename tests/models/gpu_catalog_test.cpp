// The GPU models: datasheet figures by name, the names ddlsim always accepted keep their figures,
// and a GPU ddlsim does not know is an error, never another GPU's figures.
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/models/gpu.hpp"
#include "ddlsim/sim/gpu_rates.hpp"
#include "ddlsim/topologies/presets.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

using namespace ddlsim;
using namespace ddlsim::models;

TEST_CASE("GPU models: the issue's list is there, each with its datasheet figures") {
  const std::vector<std::string> names = gpu_preset_names();
  CHECK(std::is_sorted(names.begin(), names.end()));
  for (const char* wanted :
       {"P100-SXM2-16GB", "V100-SXM2-16GB", "V100-SXM2-32GB", "V100-PCIe-16GB", "T4",
        "RTX-2080-Ti",    "RTX-3090",       "RTX-4090",       "A10G",           "L4",
        "L40S",           "A100-SXM4-40GB", "A100-SXM4-80GB", "A100-PCIe-40GB", "A100-PCIe-80GB",
        "H100-SXM5-80GB", "H100-PCIe-80GB", "H100-NVL-94GB",  "H200-SXM-141GB", "GH200-96GB",
        "GH200-144GB",    "B200-SXM-180GB", "GB200-186GB",    "MI250X",         "MI300X"}) {
    INFO(wanted);
    CHECK(std::find(names.begin(), names.end(), wanted) != names.end());
  }
  for (const std::string& name : names) {
    INFO(name);
    const GpuSpec gpu = find_gpu(name, "x");
    CHECK(gpu.fp32_flops > 0);
    CHECK(gpu.fp16_flops >= gpu.fp32_flops);
    CHECK(gpu.memory_bytes_per_second > 0);
    CHECK(gpu.memory_capacity_bytes >= 11e9);
    if (gpu.tf32_flops > 0) CHECK(gpu.tf32_flops <= gpu.fp16_flops);
    if (gpu.fp8_flops > 0) CHECK(gpu.fp8_flops == Approx(2 * gpu.fp16_flops).epsilon(0.02));
  }
}

TEST_CASE("GPU models: the names bundled scenarios use keep their figures and report names") {
  struct Kept {
    const char* asked;
    const char* reported;
    double fp32_tflops, fp16_tflops, memory_gbps;
  };
  for (const Kept& kept :
       {Kept{"V100", "V100", 15.7, 125, 900}, Kept{"V100-SXM2-16GB", "V100", 15.7, 125, 900},
        Kept{"V100-SXM2-32GB", "V100", 15.7, 125, 900}, Kept{"P100", "P100", 10.6, 21.2, 732},
        Kept{"P100-SXM2-16GB", "P100", 10.6, 21.2, 732}, Kept{"P40", "P40", 12, 12, 346},
        Kept{"A10G", "A10G", 31.2, 70, 600}, Kept{"A100", "A100", 19.5, 312, 1555},
        Kept{"A100-SXM4-40GB", "A100", 19.5, 312, 1555},
        Kept{"A100-SXM4-80GB", "A100-SXM4-80GB", 19.5, 312, 2039},
        Kept{"H100", "H100", 67, 989, 3350}, Kept{"H100-SXM5-80GB", "H100", 67, 989, 3350}}) {
    INFO(kept.asked);
    const GpuSpec gpu = find_gpu(kept.asked, "x");
    CHECK(gpu.name == kept.reported);
    CHECK(gpu.fp32_flops == kept.fp32_tflops * 1e12);
    CHECK(gpu.fp16_flops == kept.fp16_tflops * 1e12);
    CHECK(gpu.memory_bytes_per_second == kept.memory_gbps * 1e9);
  }
}

TEST_CASE("GPU models: no silent fallback to a similar GPU's figures") {
  // GH200 used to get the V100 memory rate, H100 PCIe the SXM5 figures.
  const GpuSpec gh200 = find_gpu("GH200", "x");
  CHECK(gh200.memory_bytes_per_second == 4000e9);
  CHECK(gh200.memory_capacity_bytes == 96e9);
  const GpuSpec h100_pcie = find_gpu("H100-PCIe-80GB", "x");
  CHECK(h100_pcie.fp32_flops == 51e12);
  CHECK(h100_pcie.memory_bytes_per_second == 2000e9);
  CHECK(find_gpu("V100-PCIe-16GB", "x").fp16_flops == 112e12);
  CHECK(find_gpu("H200", "x").memory_bytes_per_second == 4800e9);
  CHECK(find_gpu("B200", "x").fp8_flops == 4500e12);
  CHECK(find_gpu("MI300X", "x").memory_capacity_bytes == 192e9);
  CHECK(find_gpu("MI250X", "x").tf32_flops == 0); // no TF32 on CDNA2
}

TEST_CASE("GPU models: the names nvidia-smi and rocm-smi print are found") {
  CHECK(find_gpu("NVIDIA H100 80GB HBM3", "x").memory_bytes_per_second == 3350e9);
  CHECK(find_gpu("Tesla V100-SXM2-16GB", "x").name == "V100");
  CHECK(find_gpu("NVIDIA A100-SXM4-80GB", "x").memory_bytes_per_second == 2039e9);
  CHECK(find_gpu("NVIDIA GeForce RTX 4090", "x").memory_bytes_per_second == 1008e9);
  CHECK(find_gpu("AMD Instinct MI300X", "x").fp16_flops == 1307.4e12);
  CHECK(find_gpu("nvidia gh200 480gb", "x").memory_bytes_per_second == 4000e9);
}

TEST_CASE("GPU models: an unknown name is an error naming the place, the nearest and the list") {
  CHECK_THROWS_AS(find_gpu("TPUv4", "/workload/gpu"), InputError);
  CHECK_THROWS_WITH(find_gpu("H300", "/workload/gpu"),
                    Catch::Contains("/workload/gpu") && Catch::Contains("\"H300\"") &&
                        Catch::Contains("did you mean") && Catch::Contains("MI300X") &&
                        Catch::Contains("RTX-2080-Ti"));
  // A name that only contains a known one is not that GPU.
  CHECK_THROWS_AS(find_gpu("H100-SXM5-80GB-prototype", "x"), InputError);
  CHECK_THROWS_AS(find_gpu("XV100", "x"), InputError);
}

TEST_CASE("GPU models: every node preset names a GPU model ddlsim knows") {
  for (const std::string& name : topo::node_preset_names()) {
    INFO(name);
    CHECK_NOTHROW(find_gpu(topo::find_node_preset(name)->gpu_model, "x"));
  }
}

TEST_CASE("GPU models: collective reduction rates come from the same table") {
  CHECK(sim::gpu_rates("V100-SXM2-32GB").memory_bytes_per_second == 900e9);
  CHECK(sim::gpu_rates("A100-SXM4-80GB").memory_bytes_per_second == 2039e9);
  CHECK(sim::gpu_rates("A100-SXM4-40GB").memory_bytes_per_second == 1555e9);
  CHECK(sim::gpu_rates("H200-SXM-141GB").memory_bytes_per_second == 4800e9);
  CHECK(sim::gpu_rates("B200-SXM-180GB").memory_bytes_per_second == 8000e9);
  // GH200 used to get the V100's 900 GB/s here, and so did any name the table lacked.
  CHECK(sim::gpu_rates("GH200").memory_bytes_per_second == 4000e9);
  CHECK_THROWS_WITH(sim::gpu_rates("GH300"), Catch::Contains("gpu_model") &&
                                                 Catch::Contains("\"GH300\"") &&
                                                 Catch::Contains("GH200"));
}
