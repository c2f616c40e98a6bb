#include "calibrate_inputs.hpp"
#include "ddlsim/calibrate/nccl_protocols.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/models/gpu.hpp"
#include "number_checks.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>

namespace ddlsim::cli {

void add_measured_flags(CLI::App& cmd, MeasuredInputs& inputs) {
  cmd.add_option("--scenario", inputs.scenario,
                 "Scenario describing the measured system (topology); without it the cluster is "
                 "inferred from the logs or --nodes / --gpus-per-node")
      ->check(CLI::ExistingFile);
  cmd.add_option("--op", inputs.op,
                 "Collective of logs that never name their nccl-tests tool (all_reduce, "
                 "reduce_scatter, all_gather, broadcast, reduce, all_to_all, send_recv)");
  cmd.add_option("--nodes", inputs.nodes, "Nodes of the measured system, when logs do not say")
      ->check(checks::positive());
  cmd.add_option("--gpus-per-node", inputs.gpus_per_node,
                 "GPUs per node of the measured system, when logs do not say")
      ->check(checks::positive());
  cmd.add_option("--column", inputs.column,
                 "nccl-tests time column: mean (default: of out-of-place and in-place, two "
                 "measurements of the same operation), out-of-place, or in-place")
      ->check(CLI::IsMember({"out-of-place", "in-place", "mean"}));
  cmd.add_option("--ranks", inputs.ranks,
                 "Use only the points measured on this many ranks (default: all, except that "
                 "1-rank baseline runs are left out of a multi-rank set)")
      ->check(checks::positive());
  cmd.add_flag("--lenient", inputs.lenient,
               "Skip a log row that does not parse, with a warning naming its file:line "
               "(default: an error, so that no measured row is lost silently)");
}

Scenario load_uncalibrated_scenario(const std::string& file) {
  const std::filesystem::path path(file);
  Json resolved = resolve_includes(parse_json_file(path, "a scenario"), file, path.parent_path());
  resolved.erase("calibration");
  return load_scenario(resolved, file, path.parent_path());
}

LoadedMeasurements load_measurements(const MeasuredInputs& inputs) {
  calib::SystemHints hints;
  if (!inputs.op.empty()) {
    const coll::Op ops[] = {coll::Op::all_reduce, coll::Op::reduce_scatter, coll::Op::all_gather,
                            coll::Op::broadcast,  coll::Op::reduce,         coll::Op::all_to_all,
                            coll::Op::send_recv};
    for (coll::Op op : ops)
      if (coll::to_string(op) == inputs.op) hints.op = op;
    if (!hints.op)
      throw InputError("--op " + inputs.op, "unknown collective; expected all_reduce, "
                                            "reduce_scatter, all_gather, broadcast, reduce, "
                                            "all_to_all or send_recv");
  }
  hints.nodes = inputs.nodes;
  hints.gpus_per_node = inputs.gpus_per_node;
  LoadedMeasurements loaded;
  if (!inputs.scenario.empty()) {
    loaded.scenario = load_uncalibrated_scenario(inputs.scenario);
    loaded.cluster = loaded.scenario->topology;
    // The scenario describes the system: its shape answers what logs leave open.
    int nodes = 0, gpus = 0;
    for (const topo::NodeGroup& g : loaded.cluster.node_groups) {
      nodes += g.count;
      gpus = g.spec.gpus;
    }
    if (hints.nodes == 0) hints.nodes = nodes;
    if (hints.gpus_per_node == 0) hints.gpus_per_node = gpus;
  }
  const calib::NcclColumn column = inputs.column == "in-place" ? calib::NcclColumn::in_place
                                   : inputs.column == "out-of-place"
                                       ? calib::NcclColumn::out_of_place
                                       : calib::NcclColumn::mean;
  const calib::MeasuredSystem* widest = nullptr;
  for (const std::string& file : inputs.files)
    loaded.sets.push_back(calib::read_measured_file(file, hints, column, inputs.lenient));
  // A 1-rank run is a local copy (nccl-tests' single-GPU baseline), not a collective over the
  // system's links: by default it stays out of a set that has multi-rank runs.
  bool multi_rank = false;
  for (const calib::MeasuredSet& set : loaded.sets)
    for (const calib::MeasuredPoint& point : set.points) multi_rank |= point.ranks > 1;
  std::size_t single_rank_dropped = 0;
  for (const calib::MeasuredSet& set : loaded.sets) {
    for (const std::string& warning : set.warnings)
      std::cerr << "ddlsim: warning: " << warning << "\n";
    for (const std::string& note : set.system.notes)
      loaded.notes.push_back(set.source + ": " + note);
    for (const calib::MeasuredPoint& point : set.points) {
      const bool keep = inputs.ranks ? point.ranks == inputs.ranks : !multi_rank || point.ranks > 1;
      if (keep) loaded.points.push_back(point);
      if (!inputs.ranks && !keep) ++single_rank_dropped;
    }
    if (!widest || set.system.ranks > widest->ranks) widest = &set.system;
  }
  if (single_rank_dropped > 0)
    loaded.notes.push_back("left out " + std::to_string(single_rank_dropped) +
                           " points of 1-rank runs (single-GPU baselines: a local copy, not a "
                           "collective over the links); --ranks 1 fits them alone");
  if (loaded.points.empty())
    throw InputError(inputs.ranks ? "--ranks " + std::to_string(inputs.ranks)
                                  : inputs.files.front(),
                     "leaves no measured points");
  if (!loaded.scenario) loaded.cluster = calib::generic_cluster(*widest, loaded.notes);
  if (loaded.scenario)
    for (const calib::MeasuredSet& set : loaded.sets)
      for (const std::string& line : layout_contradictions(set, loaded.cluster)) {
        loaded.contradictions.push_back(set.source + ": " + line);
        std::cerr << "ddlsim: WARNING: " << set.source << " contradicts --scenario "
                  << inputs.scenario << ": " << line
                  << " (the fit describes the scenario's hardware only if the log was measured "
                     "on it)\n";
      }
  return loaded;
}

std::vector<std::string> layout_contradictions(const calib::MeasuredSet& set,
                                               const topo::ClusterSpec& cluster) {
  std::vector<std::string> lines;
  const calib::MeasuredSystem& s = set.system;
  int nodes = 0, most_per_node = 0;
  const std::int64_t gpus = topo::total_gpus(cluster);
  bool arch_match = false;
  std::string scenario_gpus;
  const int log_cc = s.gpu_name.empty() ? 0 : models::compute_capability(s.gpu_name);
  for (const topo::NodeGroup& g : cluster.node_groups) {
    nodes += g.count;
    most_per_node = std::max(most_per_node, g.spec.gpus);
    const int cc = models::compute_capability(g.spec.gpu_model);
    arch_match |= cc == 0 || cc == log_cc;
    if (scenario_gpus.find(g.spec.gpu_model) == std::string::npos)
      scenario_gpus += (scenario_gpus.empty() ? "" : ", ") + g.spec.gpu_model + " (sm_" +
                       std::to_string(cc) + ")";
  }
  if (log_cc > 0 && !arch_match)
    lines.push_back("the log ran on " + s.gpu_name + " (sm_" + std::to_string(log_cc) +
                    "), the scenario has " + scenario_gpus);
  // Fewer is fine (nccl-tests -g 4 on an 8-GPU node); more cannot have run on these nodes.
  if (s.gpus_per_node > most_per_node)
    lines.push_back("the log ran " + std::to_string(s.gpus_per_node) +
                    " GPUs per node, the scenario's nodes have at most " +
                    std::to_string(most_per_node));
  if (s.nodes > nodes)
    lines.push_back("the log ran on " + std::to_string(s.nodes) + " nodes, the scenario has " +
                    std::to_string(nodes));
  if (s.ranks > gpus)
    lines.push_back("the log ran " + std::to_string(s.ranks) + " ranks, the scenario has " +
                    std::to_string(gpus) + " GPUs");
  return lines;
}

} // namespace ddlsim::cli

namespace ddlsim::cli {

void choose_protocols(const std::string& flag, LoadedMeasurements& loaded, calib::FitOptions& fit) {
  fit.protocols.clear();
  fit.optional_protocol.clear();
  if (!flag.empty()) {
    std::istringstream in(flag);
    for (std::string item; std::getline(in, item, ',');)
      if (!item.empty()) fit.protocols.push_back(item);
    return;
  }
  if (std::none_of(loaded.points.begin(), loaded.points.end(),
                   [](const calib::MeasuredPoint& p) { return p.algorithm.empty(); })) {
    loaded.notes.push_back("protocols simple only (every point names its algorithm: no NCCL "
                           "protocol choice to model)");
    fit.protocols = {"simple"};
    return;
  }
  // The system of the set with the most ranks (the one the collective points come from).
  const calib::MeasuredSet* widest = nullptr;
  for (const calib::MeasuredSet& set : loaded.sets)
    if (!widest || set.system.ranks > widest->system.ranks) widest = &set;
  const calib::ProtocolChoice choice = calib::infer_nccl_protocols(widest->system, loaded.cluster);
  loaded.notes.push_back(choice.reason + "; --protocols overrides");
  fit.protocols = choice.protocols;
  fit.optional_protocol = choice.optional;
}

// The calibrations the scenario itself runs with: its "calibration" files, each on its node
// groups, or its engine settings alone.
std::vector<calib::Calibration> scenario_calibrations(const std::string& scenario_file) {
  const Scenario scenario = load_scenario_file(scenario_file);
  std::vector<calib::Calibration> calibrations;
  for (const Scenario::CalibrationRef& ref : scenario.calibrations) {
    calibrations.push_back(calib::read_calibration_file(ref.file));
    if (!ref.node_groups.empty()) calibrations.back().node_groups = ref.node_groups;
  }
  if (!calibrations.empty()) return calibrations;
  calib::Calibration c;
  c.protocols.front().per_step_overhead = scenario.engine.per_step_overhead;
  c.reduce_bytes_per_second = scenario.engine.reduce_bytes_per_second;
  c.launch_overhead = scenario.engine.launch_overhead;
  return {c};
}

models::NcclOverrides measured_nccl_force(const LoadedMeasurements& loaded) {
  if (!loaded.scenario || loaded.scenario->workload.type != "collective") return {};
  const CollectiveWorkload& collective = loaded.scenario->workload.collective;
  return collective.algorithm == "nccl" ? collective.nccl : models::NcclOverrides{};
}

} // namespace ddlsim::cli
