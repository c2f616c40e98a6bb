// `ddlsim presets`: the bundled node and scenario presets.
#include "commands.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/models/gpu.hpp"
#include "ddlsim/scenario/presets.hpp"
#include "ddlsim/topologies/presets.hpp"

#include <iostream>

namespace ddlsim::cli {

void add_presets_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "presets", "List the node presets (for topology.nodes[].preset), the GPU models (for a "
                 "node's gpu_model and a training workload's gpu) and the bundled scenario presets "
                 "(for \"include\")");
  cmd->callback([] {
    std::cout << "node presets:\n";
    for (const std::string& name : topo::node_preset_names()) {
      const topo::NodeSpec spec = *topo::find_node_preset(name);
      std::cout << "  " << name << ": " << spec.gpus << "x " << spec.gpu_model << ", " << spec.nics
                << "x " << format_gbps(spec.nic_bytes_per_second) << " NIC";
      if (spec.nics > 0) std::cout << " (" << topo::transport_name(spec.transport) << ")";
      if (spec.nvlink_domain_gpus > 0)
        std::cout << ", NVLink domain of " << spec.nvlink_domain_gpus << " GPUs";
      std::cout << "\n";
    }
    std::cout << "GPU models (sources in docs/presets.md):\n";
    for (const std::string& name : models::gpu_preset_names()) {
      const models::GpuSpec gpu = models::find_gpu(name, "GPU models");
      std::cout << "  " << name << ": " << gpu.fp32_flops / 1e12 << " TFLOPS fp32, "
                << gpu.fp16_flops / 1e12 << " fp16, " << gpu.memory_bytes_per_second / 1e9
                << " GB/s, " << gpu.memory_capacity_bytes / 1e9 << " GB\n";
    }
    std::cout << "scenario presets:\n";
    for (const std::string& name : scenario_preset_names()) std::cout << "  " << name << "\n";
  });
}

} // namespace ddlsim::cli
