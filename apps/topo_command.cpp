// `ddlsim topo describe SCENARIO`: what the cluster of a scenario looks like.
#include "commands.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "ddlsim/topologies/describe.hpp"

#include <fstream>
#include <iostream>

namespace ddlsim::cli {

void add_topo_command(CLI::App& app) {
  auto* topo_cmd = app.add_subcommand("topo", "Inspect the topology of a scenario");
  topo_cmd->require_subcommand(1);

  struct Options {
    std::string scenario;
    std::string dot;
  };
  auto options = std::make_shared<Options>();
  auto* describe = topo_cmd->add_subcommand(
      "describe",
      "Print vertex and link counts per kind, per-GPU injection bandwidth inside and across "
      "nodes, bisection bandwidth, diameter and ECMP fan-out of the scenario's cluster");
  describe->add_option("scenario", options->scenario, "Scenario JSON file")
      ->required()
      ->check(CLI::ExistingFile);
  describe->add_option("--dot", options->dot, "Also write the topology as Graphviz to FILE");
  describe->callback([options] {
    const Scenario scenario = load_scenario_file(options->scenario);
    const topo::Topology topology = topo::build_topology(scenario.topology);
    std::cout << "scenario: " << options->scenario;
    if (!scenario.name.empty()) std::cout << " (" << scenario.name << ")";
    std::cout << "\n";
    topo::print_summary(topo::summarize(topology), std::cout);
    if (!options->dot.empty()) {
      std::ofstream out(options->dot);
      if (!out) throw InputError(options->dot, "cannot write the --dot file");
      topo::write_dot(topology, out);
      std::cout << "wrote " << options->dot << "\n";
    }
  });
}

} // namespace ddlsim::cli
