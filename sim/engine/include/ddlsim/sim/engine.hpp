// The engine layer: the one way to simulate a workload (a collective call, or one iteration of
// data-parallel training jobs) on a topology with any engine.
//
// simulate() runs the engine the EngineSpec names and applies the model terms once: the
// per-step overhead and GPU rates inside the engine, the launch overhead once per collective
// call (a training iteration runs it as a step before each of its collectives). It returns one
// EngineResult: the figures every engine has, plus what only some engines add (the packet
// engine's drop and queue figures, its queue-depth trace counters; the analytic tuner's choice
// for algorithm "auto", NCCL's for "nccl") in a form callers present without knowing which
// engine ran.
//
//   const sim::EngineResult result = sim::simulate(call, topology, router, scenario.engine, {});
//   print(result.time, result.details.summary);
#pragma once

#include "ddlsim/collectives/call.hpp"
#include "ddlsim/collectives/traffic.hpp"
#include "ddlsim/core/json_reader.hpp"
#include "ddlsim/models/chakra.hpp"
#include "ddlsim/models/iteration_metrics.hpp"
#include "ddlsim/models/llm.hpp"
#include "ddlsim/models/nccl_model.hpp"
#include "ddlsim/models/training.hpp"
#include "ddlsim/sim/analytic_engine.hpp"
#include "ddlsim/sim/engine_spec.hpp"
#include "ddlsim/sim/trace.hpp"
#include "ddlsim/topologies/router.hpp"
#include "ddlsim/topologies/topology.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace ddlsim::sim {

// One iteration of data-parallel training jobs on disjoint GPUs (models/training.hpp): planned,
// composed into one Schedule (models/iteration_schedule.hpp) and summarised per job and GPU.
struct TrainingIteration {
  std::vector<models::JobSpec> jobs;
  // Iterations simulated back to back; 0: until the iteration time settles (kSettleIterations,
  // then kMaxIterations when the last two still differ by more than kSettleTolerance).
  int iterations = 0;
};
inline constexpr int kSettleIterations = 2;
inline constexpr int kMaxIterations = 8;
inline constexpr double kSettleTolerance = 1e-3;

// One iteration of large-model training (models/llm.hpp): planned, lowered to one Schedule and
// summarised (iteration time, MFU, exposed communication per kind, bubble).
struct LlmTraining {
  models::LlmSpec spec;
};

// Point-to-point flows, all posted at once (collectives/traffic.hpp): EngineResult::flow_times
// gives when each ended.
struct Traffic {
  std::vector<coll::Flow> flows;
  int ranks = 0;
  coll::DataType dtype = coll::DataType::fp32;
};

// Chakra execution traces, lowered (models/chakra.hpp): EngineResult::chakra has the metrics.
struct ChakraTrace {
  std::shared_ptr<const models::ChakraPlan> plan;
};

// A collective call (algorithm "auto": chosen by timing the candidates on the analytic engine,
// sim/auto_select.hpp; "nccl": NCCL's own choice per size, models/nccl_model.hpp, with
// CommonOptions::nccl), a training iteration, a large-model training iteration, traffic or
// Chakra traces.
using Workload =
    std::variant<coll::CollectiveCall, TrainingIteration, LlmTraining, Traffic, ChakraTrace>;

// How to run, the same for every engine.
struct CommonOptions {
  std::uint64_t seed = 1;       // ECMP hashing, packet spraying
  bool record_steps = false;    // keep every step's record in EngineResult::steps_recorded
  bool record_counters = false; // fill EngineDetails' trace counters (packet: queue depths)
  // Called every so often with the simulated time and the work done so far, counted in
  // progress_unit(spec); returning false stops the run (EngineResult::complete is then false).
  std::function<bool(Picoseconds simulated, std::uint64_t done)> progress;
  // A collective with algorithm "nccl": NCCL's tuner for the cluster and the scenario's forced
  // keys (models::describe_nccl on the scenario's topology, the workload's "nccl" object). The
  // call runs the generator of NCCL's choice with its channels and protocol, plus NCCL's
  // per-call base latency unless the spec has a (calibrated) launch overhead.
  std::shared_ptr<const models::NcclTuner> nccl;
};

// What an engine adds to the figures every engine has.
struct EngineDetails {
  Json json;           // the report's object under engine_name(); null = nothing to add
  std::string summary; // lines for under the report's table, each starting with "#   "
  // Trace counter tracks (with CommonOptions::record_counters), e.g. "queue bytes leaf0 ->
  // spine1": TraceSection's counter_names and counters.
  std::vector<std::string> counter_names;
  std::vector<TraceCounterPoint> counters;
};

struct EngineResult {
  bool complete = true; // false when CommonOptions::progress stopped the run
  // A collective: when its last step ended, plus the launch overhead. A training iteration:
  // when its last step ended (its launch overheads are steps of it).
  Picoseconds time = 0;
  std::uint64_t steps = 0;
  std::uint64_t transfers = 0;
  std::uint64_t bytes_sent = 0;
  std::size_t peak_flows_per_link = 0;    // 0 where the engine does not count it (packet)
  std::string algorithm;                  // a collective: the algorithm that ran
  std::string auto_reason;                // a collective with algorithm "auto": why that one
  std::string nccl_choice;                // algorithm "nccl": "tree/LL128, 16 channels"
  double nccl_model_seconds = 0;          // algorithm "nccl": NCCL's own modelled time
  std::vector<models::JobIteration> jobs; // a training iteration: per job, in the jobs' order
  // A large-model iteration: its plan (collectives and NCCL's choices, memory) and metrics.
  std::shared_ptr<const models::LlmPlan> llm_plan;
  models::LlmIteration llm;
  // Traffic: when each flow's receive completed (plus the launch overhead), in the flows' order.
  std::vector<Picoseconds> flow_times;
  // Chakra traces: compute, exposed communication, per collective type.
  models::ChakraIteration chakra;
  std::vector<StepRecord> steps_recorded; // with CommonOptions::record_steps
  EngineDetails details;
};

// Rank r runs on topology.gpus()[r]. Throws InputError for what the engine cannot run (more
// ranks than GPUs, no route, "auto" on the packet engine, "nccl" for an op NCCL does not tune,
// a job the collectives cannot do),
// naming the JSON path of the scenario key to change.
EngineResult simulate(const Workload& workload, const topo::Topology& topology,
                      topo::Router& router, const EngineSpec& spec, const CommonOptions& options);

// For callers that simulate many points to search (ddlsim guide): the spec with the analytic
// engine in place of a flow or packet one (their runs are too slow to search with), model terms
// kept; `replaced` says whether it changed anything, so the caller can tell its user.
EngineSpec searchable_engine(const EngineSpec& spec, bool* replaced = nullptr);
// The options `simulate` plans an llm_training workload with on the engine `spec` (NVLS switch
// steps where the engine runs them, the calibrated launch overhead), for callers that plan one
// themselves (the layout search's lower bound) without naming an engine.
models::LlmPlanOptions llm_plan_options(const EngineSpec& spec);
// Whether every transfer on the engine `spec` takes at least what the analytic cost model
// charges it alone on its path (per-step overhead, path and protocol latency, bytes at the
// bottleneck rate): true on the analytic engine, whose costs these are. The layout search's
// lower bound counts collectives only where it holds, without naming an engine.
bool transfers_cost_at_least_alone(const EngineSpec& spec);

} // namespace ddlsim::sim
