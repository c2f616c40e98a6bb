#include "ddlsim/runner/run_report.hpp"

#include "ddlsim/topologies/builders.hpp"
#include "workload_reports.hpp"

namespace ddlsim::runner {

sim::CommonOptions common_options(const Scenario& scenario, const RunSettings& settings) {
  sim::CommonOptions options;
  options.seed = scenario.seed;
  options.record_steps = settings.trace;
  options.progress = settings.progress;
  options.nccl = nccl_tuner(scenario);
  return options;
}

std::shared_ptr<const models::NcclTuner> nccl_tuner(const Scenario& scenario) {
  const CollectiveWorkload& workload = scenario.workload.collective;
  if (scenario.workload.type != "collective" || workload.algorithm != "nccl") return nullptr;
  // `--algorithm nccl` on a scenario loaded for another algorithm on non-NVIDIA GPUs: describe
  // (and reject) here.
  return std::make_shared<const models::NcclTuner>(
      workload.nccl_system ? *workload.nccl_system
                           : models::describe_nccl(scenario.topology, workload.ranks),
      workload.nccl);
}

namespace {

RunReport workload_report(const Scenario& scenario, const std::string& label,
                          const RunSettings& settings) {
  if (scenario.workload.type == "training") return training_report(scenario, label, settings);
  if (scenario.workload.type == "llm_training") return llm_report(scenario, label, settings);
  if (scenario.workload.type == "iterative") return iterative_report(scenario, label, settings);
  if (scenario.workload.type == "job_trace") return jobs_report(scenario, label, settings);
  if (scenario.workload.type == "chakra") return chakra_report(scenario, label, settings);
  if (scenario.workload.collective.traffic) return traffic_report(scenario, label, settings);
  return collective_report(scenario, label, settings);
}

// Per global rank (topology order: node-major), its GPU vertex and model.
std::vector<std::string> rank_gpus(const topo::Topology& topology) {
  std::vector<std::string> names;
  names.reserve(topology.gpus().size());
  for (const topo::VertexId gpu : topology.gpus()) {
    const topo::Vertex& vertex = topology.vertex(gpu);
    std::string name = vertex.name;
    if (vertex.node >= 0 && !topology.node(vertex.node).gpu_model.empty())
      name += ", " + topology.node(vertex.node).gpu_model;
    names.push_back(std::move(name));
  }
  return names;
}

} // namespace

RunReport run_scenario(const Scenario& scenario, const std::string& label,
                       const RunSettings& settings) {
  RunReport report = workload_report(scenario, label, settings);
  if (settings.trace && !report.trace.empty() && report.timeline_trace.is_null())
    report.rank_gpus = rank_gpus(topo::build_topology(scenario.topology));
  return report;
}

void write_trace(const RunReport& report, std::ostream& out, sim::TraceLevel level) {
  if (!report.timeline_trace.is_null()) {
    out << report.timeline_trace.dump() << "\n";
    return;
  }
  std::vector<sim::TraceSection> sections;
  sections.reserve(report.trace.size());
  for (const TracePart& part : report.trace)
    sections.push_back({part.name, &part.steps, part.counter_names, part.counters,
                        part.iteration_ends, report.rank_gpus});
  sim::write_chrome_trace(sections, out, level);
}

} // namespace ddlsim::runner
