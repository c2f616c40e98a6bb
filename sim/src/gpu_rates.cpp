#include "ddlsim/sim/gpu_rates.hpp"

#include "ddlsim/core/input_error.hpp"

#include <array>

namespace ddlsim::sim {
namespace {

struct MemoryBandwidth {
  std::string_view model_substring;
  double bytes_per_second;
};

// HBM/GDDR bandwidth from the vendors' datasheets: Tesla P100 SXM2 732 GB/s, Tesla P40 346 GB/s,
// V100 SXM2 900 GB/s, A10G 600 GB/s, A100 40GB 1,555 GB/s, A100 80GB 2,039 GB/s, H100 SXM
// 3.35 TB/s. More specific names first.
constexpr std::array kTable{
    MemoryBandwidth{"A100-SXM4-80GB", 2039e9},
    MemoryBandwidth{"A100", 1555e9},
    MemoryBandwidth{"H100", 3350e9},
    MemoryBandwidth{"V100", 900e9},
    MemoryBandwidth{"P100", 732e9},
    MemoryBandwidth{"P40", 346e9},
    MemoryBandwidth{"A10G", 600e9},
};

} // namespace

GpuRates gpu_rates(std::string_view gpu_model) {
  double memory = 900e9;
  for (const MemoryBandwidth& entry : kTable) {
    if (gpu_model.find(entry.model_substring) != std::string_view::npos) {
      memory = entry.bytes_per_second;
      break;
    }
  }
  // Streaming kernels reach roughly 80-90% of peak; the byte counts below are per byte of the
  // step's `bytes`. A codec (top-k selection by threshold search) makes about 4 passes.
  const double achievable = 0.85 * memory;
  return GpuRates{memory, achievable / 3.0, achievable / 2.0, achievable / 8.0};
}

std::vector<GpuRates> rank_rates(const topo::Topology& topology, int ranks,
                                 double reduce_bytes_per_second, double copy_bytes_per_second) {
  if (static_cast<std::size_t>(ranks) > topology.gpus().size())
    throw InputError("schedule", "has " + std::to_string(ranks) + " ranks but the topology has " +
                                     std::to_string(topology.gpus().size()) + " GPUs");
  std::vector<GpuRates> rates;
  rates.reserve(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    const topo::Vertex& gpu = topology.vertex(topology.gpus()[static_cast<std::size_t>(r)]);
    GpuRates rank = gpu_rates(topology.node(gpu.node).gpu_model);
    if (reduce_bytes_per_second > 0) rank.reduce_bytes_per_second = reduce_bytes_per_second;
    if (copy_bytes_per_second > 0) rank.copy_bytes_per_second = copy_bytes_per_second;
    rates.push_back(rank);
  }
  return rates;
}

} // namespace ddlsim::sim
