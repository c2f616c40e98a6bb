// `ddlsim check SCENARIO...`: load and validate scenarios without running them.
#include "commands.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/topologies/builders.hpp"

#include <iostream>

namespace ddlsim::cli {

void add_check_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "check", "Validate scenario files: every key, value, include and sweep point, and that the "
               "topology builds. Prints one line per file; exit status 2 on the first bad one.");
  auto files = std::make_shared<std::vector<std::string>>();
  cmd->add_option("scenarios", *files, "Scenario JSON files")->required()->check(CLI::ExistingFile);
  auto resolved = std::make_shared<bool>(false);
  cmd->add_flag("--resolved", *resolved,
                "Print each scenario as it is simulated: includes and presets merged, as one "
                "JSON document per file (a file to edit or diff instead of the include chain)");
  cmd->callback([files, resolved] {
    for (const std::string& file : *files) {
      const Scenario scenario = load_scenario_file(file);
      if (*resolved) {
        std::cout << scenario.resolved.dump(2) << "\n";
        continue;
      }
      const topo::Topology topology = topo::build_topology(scenario.topology);
      std::size_t points = 1;
      for (const SweepAxis& axis : scenario.sweep) points *= axis.values.size();
      std::cout << file << ": ok (" << topology.gpus().size() << " GPUs in "
                << topology.nodes().size() << " nodes, " << topology.vertex_count() << " vertices, "
                << topology.link_count() << " links; " << points
                << (points == 1 ? " point" : " sweep points") << ")\n";
    }
  });
}

} // namespace ddlsim::cli
