// Parsing of the "workload" and "engine" sections (private to the scenario library).
#pragma once

#include "ddlsim/scenario/scenario.hpp"

namespace ddlsim::detail {

// check_llm_memory = false: an llm_training layout is not checked against the GPUs' memory
// (`ddlsim plan`'s layout search checks each layout it tries).
WorkloadSpec parse_workload(const JsonValue& section, const topo::ClusterSpec& cluster,
                            const std::filesystem::path& base_dir, bool check_llm_memory = true);
coll::AlgorithmParams parse_params(const JsonValue& section);
// The collective workload's "nccl" object: {"algorithm", "protocol", "channels"}, each optional.
models::NcclOverrides parse_nccl_overrides(const JsonValue& section);
// workload.type = "training" (training_parser.cpp): reads the keys of `workload` it knows; the
// caller finishes the object. Model files are relative to `base_dir`.
TrainingWorkload parse_training(JsonObject& workload, const topo::ClusterSpec& cluster,
                                const std::filesystem::path& base_dir);
// One training job (the keys of one entry of a training workload's "jobs", "gpus" a count) on
// the cluster's first GPUs, named `name`; planned once so that errors come now.
models::JobSpec parse_training_job(const JsonValue& job, const topo::ClusterSpec& cluster,
                                   const std::filesystem::path& base_dir, const std::string& name);
// workload.type = "job_trace" (job_trace_parser.cpp): reads the keys of `workload` it knows.
JobTraceWorkload parse_job_trace(JsonObject& workload, const topo::ClusterSpec& cluster,
                                 const std::filesystem::path& base_dir);
// workload.type = "llm_training" (llm_parser.cpp): reads the keys of `workload` it knows.
models::LlmSpec parse_llm(JsonObject& workload, const topo::ClusterSpec& cluster,
                          bool check_memory = true);
// The "plan" section (plan_parser.cpp); every node kind of `cluster` must have a figure in each
// per-kind price or power table given.
PlanSpec parse_plan(const JsonValue& section, const topo::ClusterSpec& cluster);
// workload.type = "iterative" (iterative_parser.cpp): reads the keys of `workload` it knows.
IterativeWorkload parse_iterative(JsonObject& workload, const std::filesystem::path& base_dir);
// The keys a collective names besides its sizes: op, algorithm, params, nccl, dtype, reduction,
// root, ranks (a collective workload and an iterative workload's steps).
void parse_collective_keys(JsonObject& object, CollectiveWorkload& c);
// workload.type = "chakra" (chakra_parser.cpp): reads the keys of `workload` it knows, the
// trace files (relative to `base_dir`) and lowers them.
ChakraWorkload parse_chakra(JsonObject& workload, const topo::ClusterSpec& cluster,
                            const std::filesystem::path& base_dir);
EngineSpec parse_engine(const JsonValue& section);
std::vector<std::uint64_t> parse_sizes(const JsonValue& sizes);
// The cells of one CSV row (split at commas, blanks around each cell trimmed; a trailing comma
// ends with an empty cell). For the CSV inputs: iterative series and job traces.
std::vector<std::string> split_csv_row(const std::string& row);

} // namespace ddlsim::detail
