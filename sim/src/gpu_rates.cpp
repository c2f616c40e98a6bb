#include "ddlsim/sim/gpu_rates.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/models/gpu.hpp"

namespace ddlsim::sim {

GpuRates gpu_rates(std::string_view gpu_model) {
  // The memory bandwidth from the GPU model's datasheet (models/src/gpu_catalog.cpp); a model
  // ddlsim does not know is an error, not another GPU's rate.
  const models::GpuSpec gpu = models::find_gpu(gpu_model, "topology: a node's gpu_model (its "
                                                          "memory bandwidth sets the reduction "
                                                          "rate)");
  const double memory = gpu.memory_bytes_per_second;
  // Streaming kernels reach roughly 80-90% of peak; the byte counts below are per byte of the
  // step's `bytes`. A codec (top-k selection by threshold search) makes about 4 passes.
  const double achievable = 0.85 * memory;
  return GpuRates{memory, achievable / 3.0, achievable / 2.0, achievable / 8.0, gpu.sms};
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
