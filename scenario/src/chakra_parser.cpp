// workload.type = "chakra": Chakra execution traces (docs/workloads.md#chakra-execution-traces).
// The files are read and lowered when the scenario loads (models/chakra.hpp), so that a bad
// trace is an error before anything runs:
//   "traces": "PREFIX" (PREFIX.0.et, PREFIX.1.et, ...) or a list of files, one per rank in order,
//             relative to the scenario's folder;
//   "process_groups": {"NAME": [ranks]} or a JSON file of that shape (ASTRA-sim's
//             --comm-group-configuration file): the ranks of each pg_name;
//   "algorithms": {"all_reduce": "ring", ...}: the generator per collective type;
//   "dtype": the element type collectives reduce (default bf16);
//   "dependencies": "data_and_control" (default) or "data" (data_deps only, as ASTRA-sim);
//   "ignore_unknown_dependencies": drop dependencies on nodes a file does not have.
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/input_file.hpp"
#include "workload_parser.hpp"

#include <array>
#include <set>

namespace ddlsim::detail {
namespace {

std::map<std::string, std::vector<int>> parse_groups(const JsonValue& value) {
  std::map<std::string, std::vector<int>> groups;
  JsonObject object = value.object();
  for (const auto& item : value.raw().items()) {
    const std::string& name = item.key();
    const JsonValue ranks = object.required(name);
    std::vector<int>& members = groups[name];
    for (const JsonValue& r : ranks.array(1, 1 << 20))
      members.push_back(static_cast<int>(r.integer(0, 1 << 20)));
  }
  object.finish();
  return groups;
}

} // namespace

ChakraWorkload parse_chakra(JsonObject& workload, const topo::ClusterSpec& cluster,
                            const std::filesystem::path& base_dir) {
  ChakraWorkload chakra;
  const JsonValue traces = workload.required("traces");
  std::vector<std::filesystem::path> files;
  if (traces.raw().is_string()) {
    chakra.prefix = traces.non_empty_string();
    files = models::chakra_prefix_files(base_dir / chakra.prefix, traces.path());
  } else {
    for (const JsonValue& f : traces.array(1, 1 << 20))
      files.push_back(base_dir / f.non_empty_string());
  }
  std::vector<models::ChakraRankTrace> ranks;
  ranks.reserve(files.size());
  for (const std::filesystem::path& file : files) {
    const std::string text = read_input_file(file, "a Chakra trace", kMaxTraceInputBytes);
    std::string name = file.lexically_relative(base_dir).string();
    if (name.empty() || name.starts_with("..")) name = file.string();
    chakra.files.push_back(name);
    ranks.push_back(models::parse_chakra_rank(text, name));
  }

  models::ChakraOptions options;
  options.where = workload.path();
  if (auto v = workload.optional("process_groups")) {
    if (v->raw().is_string()) {
      const std::filesystem::path file = base_dir / v->non_empty_string();
      const Json json = parse_json_file(file, "a process-group file");
      options.groups = parse_groups(JsonValue(json, file.string()));
    } else {
      options.groups = parse_groups(*v);
    }
  }
  if (auto v = workload.optional("algorithms")) {
    JsonObject object = v->object();
    constexpr std::array ops{coll::Op::all_reduce, coll::Op::reduce_scatter, coll::Op::all_gather,
                             coll::Op::broadcast,  coll::Op::reduce,         coll::Op::all_to_all};
    for (coll::Op op : ops)
      if (auto name = object.optional(std::string(coll::to_string(op))))
        options.algorithms[op] = name->non_empty_string();
    object.finish();
  }
  if (auto v = workload.optional("dependencies"))
    options.control_dependencies =
        v->choice(std::vector<std::string>{"data_and_control", "data"}) == "data_and_control";
  if (auto v = workload.optional("ignore_unknown_dependencies"))
    options.ignore_unknown_dependencies = v->boolean();
  if (auto v = workload.optional("dtype")) {
    const std::string name = v->choice(std::vector<std::string>{"fp32", "fp16", "bf16"});
    options.dtype = name == "fp32"   ? coll::DataType::fp32
                    : name == "fp16" ? coll::DataType::fp16
                                     : coll::DataType::bf16;
  }

  std::set<std::string> gpu_models;
  int gpus = 0;
  for (const topo::NodeGroup& group : cluster.node_groups) {
    gpus += group.count * group.spec.gpus;
    gpu_models.insert(group.spec.gpu_model);
  }
  if (static_cast<int>(ranks.size()) > gpus)
    throw InputError(traces.path(), "the trace has " + std::to_string(ranks.size()) +
                                        " ranks (files) but the cluster " + std::to_string(gpus) +
                                        " GPUs; give the cluster more GPUs");
  // Compute nodes with only num_ops need the GPU's roofline: one GPU model the presets know.
  if (gpu_models.size() == 1) {
    try {
      options.gpu = models::find_gpu(*gpu_models.begin(), cluster.json_path + "/nodes/0/gpu_model");
    } catch (const InputError&) {
      options.gpu.reset(); // an error only if a node needs it (plan_chakra says which)
    }
  }
  options.node_of_rank = topo::algorithm_node_of_gpu(cluster);
  options.node_of_rank.resize(ranks.size());
  chakra.plan = std::make_shared<const models::ChakraPlan>(models::plan_chakra(ranks, options));
  return chakra;
}

} // namespace ddlsim::detail
