#include "ddlsim/sim/engine.hpp"

#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/models/iteration_schedule.hpp"
#include "ddlsim/models/nccl_model.hpp"
#include "ddlsim/sim/auto_select.hpp"
#include "schedule_run.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

namespace ddlsim::sim {
namespace {

EngineResult simulate_collective(coll::CollectiveCall call, const topo::Topology& topology,
                                 topo::Router& router, const EngineSpec& spec,
                                 const CommonOptions& options) {
  std::string auto_reason;
  std::optional<models::NcclChoice> nccl;
  Picoseconds overhead = spec.launch_overhead;
  if (call.algorithm == "nccl") {
    if (!options.nccl)
      throw InputError("/workload/algorithm",
                       "\"nccl\" needs NCCL's description of the cluster, which this caller "
                       "does not give; name a ddlsim algorithm (e.g. \"nccl_ring\")");
    nccl = options.nccl->choose(call.op, call.bytes);
    call.algorithm = nccl->generator;
    call.params.channels = nccl->channels;
    call.params.chunks = models::nccl_pipeline_chunks(options.nccl->system(), *nccl, call.bytes);
    call.protocol = models::nccl_protocol(options.nccl->system(), nccl->algorithm, nccl->protocol);
    // NCCL's base latency is its software cost per call; a calibrated overhead replaces it.
    if (overhead == 0) overhead = models::nccl_call_overhead(nccl->algorithm, nccl->protocol);
  } else if (call.algorithm == "auto") {
    if (std::holds_alternative<packet::PacketEngineSpec>(spec.kind))
      throw InputError("/workload/algorithm",
                       "\"auto\" chooses with the analytic engine; name an algorithm for the "
                       "packet engine (e.g. \"ring\")");
    const AlgorithmChoice choice =
        choose_algorithm(topology, router, call, analytic_options(spec, options));
    call.algorithm = choice.algorithm;
    auto_reason = choice.reason;
  }
  // NCCL's rings run over direct links only (search.cc): on an NVLink mesh they follow it.
  if (call.algorithm == "nccl_ring" && call.node_rings.empty())
    call.node_rings = models::nccl_node_rings(topology);
  EngineResult result = run_schedule(coll::Schedule::make(call), topology, router, spec, options);
  result.time += overhead;
  result.algorithm = std::move(call.algorithm);
  result.auto_reason = std::move(auto_reason);
  if (nccl) {
    result.nccl_choice = nccl->describe();
    result.nccl_model_seconds = nccl->model_seconds;
  }
  return result;
}

// The collectives' local steps run at the jobs' GPU preset rates (calibratable through the
// workload's "gpu" object) when every GPU has the same preset and the spec sets no reduction
// rate: the engines take one rate for all ranks, so mixed clusters keep each GPU model's.
void use_gpu_preset_rates(const std::vector<models::JobSpec>& jobs, EngineSpec& spec) {
  if (jobs.empty() || jobs.front().gpu.empty() || spec.reduce_bytes_per_second != 0) return;
  const models::GpuSpec& first = jobs.front().gpu.front();
  for (const models::JobSpec& job : jobs)
    for (const models::GpuSpec& gpu : job.gpu)
      if (gpu.name != first.name || gpu.memory_bytes_per_second != first.memory_bytes_per_second ||
          gpu.memory_efficiency != first.memory_efficiency)
        return;
  spec.reduce_bytes_per_second = first.reduce_bytes_per_second();
  spec.copy_bytes_per_second = first.memory_efficiency * first.memory_bytes_per_second / 2;
}

EngineResult simulate_iterations(const TrainingIteration& iteration, int iterations,
                                 const topo::Topology& topology, topo::Router& router,
                                 const EngineSpec& spec, const CommonOptions& options) {
  models::PlanOptions plan_options;
  plan_options.switch_steps = std::holds_alternative<AnalyticEngineSpec>(spec.kind);
  models::TrainingPlan planned = models::plan_training(iteration.jobs, plan_options);
  planned.launch_overhead = spec.launch_overhead; // a step before each collective
  planned.iterations = iterations;
  const auto plan = std::make_shared<const models::TrainingPlan>(std::move(planned));
  // The metrics take each step as it is timed; the records themselves only on request.
  models::IterationRecorder steps(plan->ranks);
  EngineResult result = run_schedule(
      models::iteration_schedule(plan), topology, router, spec, options,
      [&steps](const StepRecord& r) { steps.add(r.rank, r.channel, r.start, r.end); },
      [&steps] { steps.clear(); });
  if (result.complete) result.jobs = models::summarize_iteration(*plan, steps);
  return result;
}

// Whether every job's last two iterations agree within kSettleTolerance.
bool settled(const EngineResult& result) {
  for (const models::JobIteration& job : result.jobs) {
    const std::vector<Picoseconds>& t = job.iteration_times;
    if (t.size() < 2) return false;
    const double last = static_cast<double>(t.back()),
                 before = static_cast<double>(t[t.size() - 2]);
    if (std::abs(last - before) > kSettleTolerance * last) return false;
  }
  return true;
}

EngineResult simulate_training(const TrainingIteration& iteration, const topo::Topology& topology,
                               topo::Router& router, EngineSpec spec,
                               const CommonOptions& options) {
  use_gpu_preset_rates(iteration.jobs, spec);
  if (iteration.iterations > 0)
    return simulate_iterations(iteration, iteration.iterations, topology, router, spec, options);
  EngineResult result =
      simulate_iterations(iteration, kSettleIterations, topology, router, spec, options);
  if (!result.complete || settled(result)) return result;
  return simulate_iterations(iteration, kMaxIterations, topology, router, spec, options);
}

// One iteration of large-model training: the plan's Schedule on the engine, the metrics from its
// steps. The launch overhead (a calibration's) replaces NCCL's per-call cost, as for training.
EngineResult simulate_llm(const LlmTraining& llm, const topo::Topology& topology,
                          topo::Router& router, EngineSpec spec, const CommonOptions& options) {
  if (spec.reduce_bytes_per_second == 0) {
    spec.reduce_bytes_per_second = llm.spec.gpu.reduce_bytes_per_second();
    spec.copy_bytes_per_second =
        llm.spec.gpu.memory_efficiency * llm.spec.gpu.memory_bytes_per_second / 2;
  }
  const auto plan =
      std::make_shared<const models::LlmPlan>(models::plan_llm(llm.spec, llm_plan_options(spec)));
  models::LlmRecorder steps(plan->ranks);
  EngineResult result = run_schedule(
      models::llm_schedule(plan), topology, router, spec, options,
      [&steps](const StepRecord& r) {
        steps.add(r.rank, r.channel, r.kind, r.peer, r.start, r.end);
      },
      [&steps] { steps.clear(); }, models::LlmRecorder::kChannels);
  result.algorithm = "llm_training";
  if (result.complete) result.llm = models::summarize_llm(*plan, steps);
  result.llm_plan = plan;
  return result;
}

// Traffic: the flows' Schedule; each flow ends when its receive does. Receives are told apart
// by (src, dst, bytes): flows alike in all three are interchangeable, so the k-th such receive
// to end is given to the k-th such flow.
EngineResult simulate_traffic(const Traffic& traffic, const topo::Topology& topology,
                              topo::Router& router, const EngineSpec& spec,
                              const CommonOptions& options) {
  if (traffic.ranks > static_cast<int>(topology.gpus().size()))
    throw InputError("/workload/ranks", "the traffic has " + std::to_string(traffic.ranks) +
                                            " ranks but the topology " +
                                            std::to_string(topology.gpus().size()) + " GPUs");
  std::map<std::tuple<int, int, std::uint64_t>, std::vector<std::size_t>> alike;
  for (std::size_t i = traffic.flows.size(); i-- > 0;) {
    const coll::Flow& f = traffic.flows[i];
    alike[{f.src, f.dst, f.bytes}].push_back(i); // reversed: the first flow is taken first
  }
  std::vector<Picoseconds> ends(traffic.flows.size(), -1);
  EngineResult result =
      run_schedule(coll::traffic_schedule(traffic.flows, traffic.ranks, traffic.dtype), topology,
                   router, spec, options, [&](const StepRecord& r) {
                     if (r.kind != coll::StepKind::recv) return;
                     auto it = alike.find({r.peer, r.rank, r.bytes});
                     if (it == alike.end() || it->second.empty()) return;
                     ends[it->second.back()] = r.end + spec.launch_overhead;
                     it->second.pop_back();
                   });
  result.time += spec.launch_overhead;
  result.algorithm = "traffic";
  if (result.complete) result.flow_times = std::move(ends);
  return result;
}

// Chakra traces: the plan's Schedule; the metrics from the GPU stream's compute steps and the
// communication channels' steps.
EngineResult simulate_chakra(const ChakraTrace& chakra, const topo::Topology& topology,
                             topo::Router& router, const EngineSpec& spec,
                             const CommonOptions& options) {
  if (chakra.plan->ranks > static_cast<int>(topology.gpus().size()))
    throw InputError("/workload/traces", "the trace has " + std::to_string(chakra.plan->ranks) +
                                             " ranks but the topology " +
                                             std::to_string(topology.gpus().size()) + " GPUs");
  models::ChakraRecorder steps(*chakra.plan);
  EngineResult result;
  try {
    result = run_schedule(
        models::chakra_schedule(chakra.plan, spec.launch_overhead), topology, router, spec, options,
        [&steps](const StepRecord& r) { steps.add(r.rank, r.channel, r.kind, r.start, r.end); },
        [&steps] { steps.clear(); });
  } catch (const std::logic_error& e) {
    // The engines' "cannot finish" names a step; for a trace that is the user's input: ranks
    // that wait on each other (a receive posted before the send it waits for on both sides).
    int rank = 0, channel = 0;
    unsigned step = 0;
    if (std::sscanf(e.what(), "schedule deadlocked: rank %d channel %d cannot finish step %u",
                    &rank, &channel, &step) != 3)
      throw;
    throw InputError("/workload/traces",
                     "the ranks wait on each other forever: " +
                         models::chakra_step_owner(*chakra.plan, rank, channel, step) +
                         " never completes (a message, a collective's other members or a "
                         "dependency it waits for never comes); check that the ranks' "
                         "communication orders and dependencies agree");
  }
  result.algorithm = "chakra";
  if (result.complete) result.chakra = models::summarize_chakra(*chakra.plan, steps, result.time);
  return result;
}

} // namespace

models::LlmPlanOptions llm_plan_options(const EngineSpec& spec) {
  models::LlmPlanOptions options;
  options.switch_steps = std::holds_alternative<AnalyticEngineSpec>(spec.kind);
  options.launch_overhead = spec.launch_overhead;
  return options;
}

EngineResult simulate(const Workload& workload, const topo::Topology& topology,
                      topo::Router& router, const EngineSpec& spec, const CommonOptions& options) {
  if (const auto* call = std::get_if<coll::CollectiveCall>(&workload))
    return simulate_collective(*call, topology, router, spec, options);
  if (const auto* llm = std::get_if<LlmTraining>(&workload))
    return simulate_llm(*llm, topology, router, spec, options);
  if (const auto* traffic = std::get_if<Traffic>(&workload))
    return simulate_traffic(*traffic, topology, router, spec, options);
  if (const auto* chakra = std::get_if<ChakraTrace>(&workload))
    return simulate_chakra(*chakra, topology, router, spec, options);
  return simulate_training(std::get<TrainingIteration>(workload), topology, router, spec, options);
}

bool transfers_cost_at_least_alone(const EngineSpec& spec) {
  return std::holds_alternative<AnalyticEngineSpec>(spec.kind);
}

EngineSpec searchable_engine(const EngineSpec& spec, bool* replaced) {
  const bool analytic = std::holds_alternative<AnalyticEngineSpec>(spec.kind);
  if (replaced) *replaced = !analytic;
  EngineSpec out = spec;
  out.kind = AnalyticEngineSpec{};
  return out;
}

} // namespace ddlsim::sim
