// Scenario: one JSON file describing a what-if run: the cluster (`topology`), what runs on it
// (`workload`), how it is simulated (`engine`), optional `sweep` axes, `output` files and `seed`.
// Loading resolves `include`s, validates every key (errors name the JSON pointer, say what was
// expected and found, and suggest the nearest key), and checks cross-section consistency (e.g.
// a collective on more ranks than the cluster has GPUs).
#pragma once

#include "ddlsim/collectives/call.hpp"
#include "ddlsim/collectives/traffic.hpp"
#include "ddlsim/core/json_reader.hpp"
#include "ddlsim/models/chakra.hpp"
#include "ddlsim/models/llm.hpp"
#include "ddlsim/models/nccl_model.hpp"
#include "ddlsim/models/training.hpp"
#include "ddlsim/sim/engine_spec.hpp"
#include "ddlsim/topologies/cluster_spec.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ddlsim {

// A send_recv workload's "traffic" object (docs/workloads.md): point-to-point flows, all posted
// at once. The pattern's flows are drawn when the scenario loads, once the ranks are known.
struct TrafficSpec {
  std::string pattern;           // "flows", "permutation", "incast" or "all_to_all_v"
  std::uint64_t bytes = 0;       // permutation, incast: bytes per flow
  std::uint64_t seed = 1;        // permutation
  int senders = 0;               // incast; 0 = every rank but the receiver
  int receiver = 0;              // incast
  std::string matrix_file;       // all_to_all_v: the CSV, as the scenario names it
  std::string matrix_csv;        // all_to_all_v: its contents
  std::vector<coll::Flow> flows; // the flows (given, or drawn from the pattern at load)
};

// workload.type = "collective": one collective at a list of sizes, or (op send_recv with a
// "traffic" object) one set of point-to-point flows.
struct CollectiveWorkload {
  coll::Op op = coll::Op::all_reduce;
  std::string algorithm = "ring"; // or "auto", or "nccl" (NCCL's own choice per size)
  coll::AlgorithmParams params;
  // The "nccl" object: what NCCL's choice is forced to (NCCL_ALGO, NCCL_PROTO, channels).
  models::NcclOverrides nccl;
  // NCCL's view of the cluster as the scenario describes it, before any calibration (NCCL sees
  // the hardware's nominal rates): set when the algorithm is "nccl" or every GPU is one NCCL
  // runs on, so that `--algorithm nccl` can use it too.
  std::optional<models::NcclSystem> nccl_system;
  coll::DataType dtype = coll::DataType::fp32;
  coll::Reduction reduction = coll::Reduction::sum;
  int root = 0;
  int ranks = 0;                      // the first `ranks` GPUs in rank order; 0 = every GPU
  std::vector<std::uint64_t> sizes;   // bytes, nccl-tests meaning (see CollectiveCall::bytes)
  std::optional<TrafficSpec> traffic; // op send_recv with "traffic": `sizes` is then empty
};

// workload.type = "training": data-parallel training jobs on disjoint GPUs (models/), resolved
// against the cluster (GPU models, nodes) when the scenario loads.
struct TrainingWorkload {
  std::vector<models::JobSpec> jobs;
  double epochs = 1;
  std::uint64_t dataset_samples = 0; // 0: no time-to-train line
  // Iterations simulated back to back ("iterations"); 0 ("auto"): until the time settles.
  int iterations = 0;
};

// workload.type = "iterative": an iterative algorithm whose every iteration computes, then runs
// its collectives one after another, with sizes that may change from one iteration to the next
// (e.g. a parallel SVM whose active set shrinks). Every value is per iteration, already
// expanded from the scenario's constant, list, geometric series or CSV column.
struct IterativeWorkload {
  int iterations = 0;
  std::vector<double> compute_seconds; // one per iteration
  struct Step {
    std::string name;                 // e.g. "gradient all-reduce"; defaults to the op
    CollectiveWorkload collective;    // op, algorithm, dtype...; sizes = its distinct sizes
    std::vector<std::uint64_t> bytes; // one per iteration; 0 = the step does not run then
  };
  std::vector<Step> steps;
};

// workload.type = "job_trace": training jobs that arrive over time on one shared cluster, queued
// and placed by the scheduler's policies (jobs/, docs/shared-cluster.md).
struct TraceJob {
  std::string id;
  double arrival_seconds = 0;
  std::size_t workload = 0;       // index into JobTraceWorkload::workloads
  std::size_t template_index = 0; // index into JobTraceWorkload::templates (workload at this size)
  int gpus = 0;
  std::int64_t iterations = 0;   // the work; 0: the job runs for time_limit_seconds
  double time_limit_seconds = 0; // with iterations: a cap (0 = none)
  std::string where;             // where the job was given, for messages
};
struct JobTraceWorkload {
  std::vector<std::string> workload_names; // named ("workloads" keys) or "<id>/workload"
  // One job of each (workload, GPU count) the trace uses, resolved on the cluster's first GPUs;
  // the scheduler moves it to the GPUs it places it on.
  struct Template {
    std::size_t workload = 0;
    models::JobSpec job;
  };
  std::vector<Template> templates;
  std::vector<TraceJob> jobs;       // in arrival order (ties: the order given)
  std::string queue = "fifo";       // "fifo" or "easy" (backfilling)
  std::string placement = "packed"; // "packed", "spread", "rail_aligned", "network_aware"
  int iterations_simulated = 0;     // per co-running mix; 0 = until the time settles
};

// workload.type = "chakra": Chakra execution traces, read and lowered when the scenario loads
// (models/chakra.hpp; docs/workloads.md).
struct ChakraWorkload {
  std::string prefix;                             // "traces" as a prefix; empty for a list
  std::vector<std::string> files;                 // one per rank, as named in messages
  std::shared_ptr<const models::ChakraPlan> plan; // the ranks' lowered operations
};

struct WorkloadSpec {
  std::string type = "collective";
  CollectiveWorkload collective;
  TrainingWorkload training;
  IterativeWorkload iterative;
  JobTraceWorkload job_trace;
  // workload.type = "llm_training": one large-model job on every GPU of the cluster.
  models::LlmSpec llm;
  ChakraWorkload chakra;
};

// The `engine` section: "type" picks the engine (EngineSpec::kind: "analytic", "flow" with its
// options, or "packet" with its options); the model terms come from the section's
// per_step_overhead_ns and reduce_bandwidth_gbps and from the scenario's calibrations.
using sim::EngineSpec;

// One sweep axis: the value at JSON pointer `pointer` takes each of `values` in turn.
struct SweepAxis {
  std::string pointer;
  std::vector<Json> values;
};

// The `plan` section: what `ddlsim plan` optimises for and the constraints a point must meet.
// Every goal is optional; a price makes costs (and the time-vs-cost Pareto front) appear.
// A price or power figure of the plan section: one for every node kind, or one per kind. A
// node's kind is its node group's preset name ("custom" for a node given key by key).
struct PerNodeKind {
  std::optional<double> all;
  std::map<std::string, double> by_kind;
  std::string where; // its JSON pointer, for messages

  bool given() const { return all.has_value() || !by_kind.empty(); }
  // The figure of `kind`; InputError naming `where` and the kind to add when it has none.
  double of(const std::string& kind) const;
};

struct PlanSpec {
  PerNodeKind price_per_gpu_hour;   // currency units per GPU-hour of the GPUs a point uses
  PerNodeKind price_per_node_hour;  // per node-hour of the nodes it uses (exclusive with the GPU's)
  double price_per_kwh = 0;         // energy, on top of the hourly price; needs power figures
  PerNodeKind power_per_gpu_watts;  // each GPU a point uses, under load
  PerNodeKind power_per_node_watts; // each node it uses, beside its GPUs (CPUs, NICs, fans)
  std::optional<double> max_time_seconds; // on the plan's time axis (see planning/)
  std::optional<double> min_samples_per_second;
  std::optional<double> min_scaling_efficiency; // 0..1
  std::optional<double> max_cost;               // on the plan's cost axis
  // Among feasible points: "cost", "time", or "knee" (the knee of the time-cost front); empty:
  // "knee" when there are no goals (every point is feasible), else "cost".
  std::string prefer;
};

struct OutputSpec {
  std::string json_path;  // machine report; "" = none
  std::string trace_path; // Chrome trace; "" = none
};

struct Scenario {
  std::string name;
  std::string description;
  std::string origin;             // file it came from, for messages
  std::filesystem::path base_dir; // where relative paths in it (model files) are resolved
  Json resolved;                  // the scenario after includes are merged (what was validated)
  topo::ClusterSpec topology;
  WorkloadSpec workload;
  EngineSpec engine;
  std::vector<SweepAxis> sweep;
  PlanSpec plan;
  OutputSpec output;
  std::uint64_t seed = 1;
  // "calibration": calibration files (calibrate/calibration.hpp), resolved against the
  // scenario's folder, already applied to `topology` and `engine`; empty = none. A file may
  // target node groups (names or presets); empty node_groups = the file's own, else all.
  struct CalibrationRef {
    std::string file;
    std::vector<std::string> node_groups;
  };
  std::vector<CalibrationRef> calibrations;
  // What the user should know but is no error: a calibration fitted on another kind of system
  // (calib::calibration_differences). Commands print them on stderr.
  std::vector<std::string> warnings;
};

// Loads a scenario file. Throws InputError on any problem.
Scenario load_scenario_file(const std::filesystem::path& file);
// Loads from parsed JSON; `origin` names it in messages and `base_dir` resolves relative
// includes.
Scenario load_scenario(const Json& json, const std::string& origin,
                       const std::filesystem::path& base_dir);

// The scenario JSON with every `include` resolved (included file first, then this file's keys
// merged over it with JSON merge-patch semantics: objects merge, anything else replaces).
Json resolve_includes(const Json& json, const std::string& origin,
                      const std::filesystem::path& base_dir);

// One point of a scenario's sweep: the base scenario with each axis set to one of its values.
struct SweepPoint {
  std::size_t index = 0; // 0 .. sweep_point_count - 1; the first axis varies fastest
  std::vector<std::pair<std::string, Json>> settings; // (JSON pointer, value) per axis
  Scenario scenario;                                  // parsed, without a sweep of its own
};

// How many points the sweep has (1 for a scenario without a sweep: the scenario itself).
std::size_t sweep_point_count(const Scenario& scenario);
// Point `index` of the sweep. The points were validated at load, so this throws only for an
// index out of range.
SweepPoint sweep_point(const Scenario& scenario, std::size_t index);

// The collective call of `workload` at one of its sizes, with every rank's node taken from the
// cluster (ranks are node-major, as in Topology::gpus()).
coll::CollectiveCall make_collective_call(const CollectiveWorkload& workload,
                                          const topo::ClusterSpec& cluster, std::uint64_t bytes);

// Limits that keep a typo from asking for an absurd run.
inline constexpr std::size_t kMaxSweepPoints = 100'000;
inline constexpr std::size_t kMaxSizesPerWorkload = 4096;
inline constexpr int kMaxIncludeDepth = 16;

} // namespace ddlsim
