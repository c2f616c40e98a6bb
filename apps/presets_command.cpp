// `ddlsim presets`: the bundled node and scenario presets.
#include "commands.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/scenario/presets.hpp"
#include "ddlsim/topologies/presets.hpp"

#include <iostream>

namespace ddlsim::cli {

void add_presets_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "presets", "List the node presets (for topology.nodes[].preset) and the bundled scenario "
                 "presets (for \"include\")");
  cmd->callback([] {
    std::cout << "node presets:\n";
    for (const std::string& name : topo::node_preset_names()) {
      const topo::NodeSpec spec = *topo::find_node_preset(name);
      std::cout << "  " << name << ": " << spec.gpus << "x " << spec.gpu_model << ", " << spec.nics
                << "x " << format_gbps(spec.nic_bytes_per_second) << " NIC\n";
    }
    std::cout << "scenario presets:\n";
    for (const std::string& name : scenario_preset_names()) std::cout << "  " << name << "\n";
  });
}

} // namespace ddlsim::cli
