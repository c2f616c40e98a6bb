#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/sim_time.hpp"
#include "ddlsim/scenario/layout_search.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/topologies/spec_parser.hpp"
#include "workload_parser.hpp"

#include "ddlsim/calibrate/calibration.hpp"
#include "ddlsim/collectives/algorithm.hpp"
#include "ddlsim/core/suggest.hpp"
#include "ddlsim/models/nvlink.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace ddlsim {
namespace {

// The node of every GPU rank as the algorithms see it (an NVLink domain counts as one node).
std::vector<int> node_of_rank(const topo::ClusterSpec& spec, int ranks) {
  std::vector<int> nodes = topo::algorithm_node_of_gpu(spec);
  nodes.resize(static_cast<std::size_t>(std::min<std::int64_t>(ranks, nodes.size())));
  return nodes;
}

// A rate of the cluster that moves `bytes` (the largest size of the workload) in one transfer
// more slowly than an engine can count (kMaxSimulatedPs, sim_time.hpp) is an error naming its
// key: such a bandwidth is almost always one given in the wrong unit, and engines would
// otherwise stop mid-run with a message that cannot say which key to fix.
void check_transfer_time(const topo::ClusterSpec& cluster, std::uint64_t bytes) {
  auto check = [&](double bytes_per_second, const std::string& pointer) {
    if (!(bytes_per_second > 0)) return; // unset: the builder derives it from another rate
    const double seconds = static_cast<double>(bytes) / bytes_per_second;
    if (seconds < kMaxSimulatedSeconds) return;
    throw InputError(pointer, format_gbps(bytes_per_second) + " moves one " + format_bytes(bytes) +
                                  " transfer in " + format_significant(seconds / 86400, 3) +
                                  " days of simulated time, more than the " +
                                  format_significant(kMaxSimulatedSeconds / 86400, 3) +
                                  " days an engine can count; is the bandwidth in Gb/s?");
  };
  const std::string& top = cluster.json_path;
  for (std::size_t i = 0; i < cluster.node_groups.size(); ++i) {
    const topo::NodeSpec& s = cluster.node_groups[i].spec;
    const std::string group = top + "/nodes/" + std::to_string(i) + "/";
    check(s.nvlink_bytes_per_second, group + "nvlink_bandwidth_gbps");
    check(s.pcie_bytes_per_second, group + "pcie_bandwidth_gbps");
    if (s.nics > 0) {
      check(s.nic_bytes_per_second, group + "nic_bandwidth_gbps");
      if (s.transport == topo::Transport::socket)
        check(s.socket_stream_bytes_per_second, group + "socket_stream_gbps");
    }
  }
  check(cluster.fabric.link_bytes_per_second, top + "/fabric/bandwidth_gbps");
  for (std::size_t i = 0; i < cluster.fabric.custom_links.size(); ++i)
    check(cluster.fabric.custom_links[i].bytes_per_second,
          top + "/fabric/links/" + std::to_string(i) + "/bandwidth_gbps");
}

// A traffic pattern's flows, drawn now that the ranks are known, and every flow checked.
void check_traffic(TrafficSpec& t, int ranks, coll::DataType dtype) {
  std::string where = "/workload/traffic/flows";
  if (t.pattern == "permutation") {
    t.flows = coll::permutation_flows(ranks, t.bytes, t.seed);
    where = "/workload/traffic";
  } else if (t.pattern == "incast") {
    t.flows =
        coll::incast_flows(ranks, t.senders == 0 ? ranks - 1 : t.senders, t.receiver, t.bytes);
    where = "/workload/traffic";
  } else if (t.pattern == "all_to_all_v") {
    std::istringstream csv(t.matrix_csv);
    t.flows = coll::matrix_flows(csv, ranks, t.matrix_file);
    if (t.flows.empty())
      throw InputError(t.matrix_file, "every entry is 0: the matrix makes no flow");
    where = t.matrix_file;
  }
  coll::check_flows(t.flows, ranks, dtype, where);
}

// Cross-section checks: the collective fits the cluster and its algorithm accepts every size.
void check_collective(CollectiveWorkload& c, const topo::ClusterSpec& cluster) {
  const std::int64_t gpus = topo::total_gpus(cluster);
  if (c.ranks == 0) c.ranks = static_cast<int>(gpus);
  if (c.ranks > gpus)
    throw InputError("/workload/ranks", "asks for " + std::to_string(c.ranks) +
                                            " ranks but the topology has " + std::to_string(gpus) +
                                            " GPUs; lower it or add nodes");
  if (c.traffic) {
    check_traffic(*c.traffic, c.ranks, c.dtype);
    std::uint64_t largest = 0;
    for (const coll::Flow& f : c.traffic->flows) largest = std::max(largest, f.bytes);
    check_transfer_time(cluster, largest);
    return;
  }
  if (c.root >= c.ranks)
    throw InputError("/workload/root", "root " + std::to_string(c.root) +
                                           " is not a rank (ranks are 0.." +
                                           std::to_string(c.ranks - 1) + ")");
  const std::size_t element = coll::element_size(c.dtype);
  for (std::size_t i = 0; i < c.sizes.size(); ++i)
    if (c.sizes[i] % element != 0)
      throw InputError("/workload/sizes",
                       format_bytes(c.sizes[i]) + " (" + std::to_string(c.sizes[i]) +
                           " B) is not a multiple of the " + std::string(coll::to_string(c.dtype)) +
                           " element size (" + std::to_string(element) + " B)");
  if (!c.sizes.empty())
    check_transfer_time(cluster, *std::max_element(c.sizes.begin(), c.sizes.end()));
  // NCCL's view of the cluster, before any calibration (describe_nccl names what it rejects).
  bool nvidia = true;
  for (const topo::NodeGroup& group : cluster.node_groups)
    if (models::compute_capability(group.spec.gpu_model) < 60) nvidia = false;
  if (c.algorithm == "nccl" || nvidia) c.nccl_system = models::describe_nccl(cluster, c.ranks);
  if (c.algorithm == "nccl") {
    const models::NcclTuner tuner(*c.nccl_system, c.nccl);
    coll::CollectiveCall call = make_collective_call(c, cluster, 0);
    for (std::uint64_t size : c.sizes) {
      const models::NcclChoice choice = tuner.choose(c.op, size);
      call.bytes = size;
      call.algorithm = choice.generator;
      call.params.channels = choice.channels;
      try {
        coll::find_algorithm(c.op, choice.generator)->check(call);
      } catch (const InputError& e) {
        throw InputError("/workload", "at size " + format_bytes(size) + ", NCCL's choice " +
                                          choice.describe() + " (" + choice.generator +
                                          "): " + e.what());
      }
    }
    return;
  }
  if (c.algorithm == "auto") return;
  const coll::Algorithm* algorithm = coll::find_algorithm(c.op, c.algorithm);
  if (!algorithm) {
    std::vector<std::string> names;
    for (const coll::Algorithm* a : coll::algorithms_for(c.op)) names.emplace_back(a->name());
    names.emplace_back("auto");
    names.emplace_back("nccl");
    throw InputError("/workload/algorithm", "unknown " + std::string(coll::to_string(c.op)) +
                                                " algorithm \"" + c.algorithm + "\"" +
                                                did_you_mean(c.algorithm, names) + "; expected " +
                                                join_choices(names));
  }
  coll::CollectiveCall call = make_collective_call(c, cluster, 0);
  for (std::uint64_t size : c.sizes) {
    call.bytes = size;
    try {
      algorithm->check(call);
    } catch (const InputError& e) {
      throw InputError("/workload", "at size " + format_bytes(size) + ": " + e.what());
    }
  }
}

// Every step of an iterative workload is a collective: the same checks, its messages pointing
// at the step.
void check_iterative(Scenario& scenario) {
  std::vector<IterativeWorkload::Step>& steps = scenario.workload.iterative.steps;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    try {
      check_collective(steps[i].collective, scenario.topology);
    } catch (const InputError& e) {
      std::string where = e.where();
      const std::string step = "/workload/steps/" + std::to_string(i);
      where = where.starts_with("/workload") ? step + where.substr(9) : step;
      throw InputError(where, e.reason());
    }
  }
}

std::vector<SweepAxis> parse_sweep(const JsonValue& section) {
  std::vector<SweepAxis> axes;
  std::size_t points = 1;
  for (const JsonValue& axis_value : section.array(1, 16)) {
    JsonObject axis = axis_value.object();
    SweepAxis parsed;
    const JsonValue set = axis.required("set");
    parsed.pointer = set.non_empty_string();
    try {
      (void)Json::json_pointer(parsed.pointer);
    } catch (const Json::exception&) {
      set.fail_expected("a JSON pointer such as \"/topology/fabric/bandwidth_gbps\"");
    }
    if (parsed.pointer.starts_with("/sweep") || parsed.pointer.starts_with("/include"))
      set.fail("a sweep axis cannot change /sweep or /include");
    for (const JsonValue& value : axis.required("values").array(1, 10'000))
      parsed.values.push_back(value.raw());
    axis.finish();
    points *= parsed.values.size();
    if (points > kMaxSweepPoints)
      section.fail("the sweep has more than " + std::to_string(kMaxSweepPoints) + " points");
    axes.push_back(std::move(parsed));
  }
  return axes;
}

OutputSpec parse_output(const JsonValue& section) {
  OutputSpec output;
  JsonObject object = section.object();
  if (auto v = object.optional("json")) output.json_path = v->non_empty_string();
  if (auto v = object.optional("trace")) output.trace_path = v->non_empty_string();
  object.finish();
  return output;
}

// Parses a scenario with includes already resolved. `with_sweep` = false for sweep points.
// "calibration": "file.json", or a list of files and {"file", "node_groups": [...]} objects.
std::vector<Scenario::CalibrationRef> parse_calibrations(const JsonValue& value) {
  if (!value.raw().is_array()) return {{value.non_empty_string(), {}}};
  std::vector<Scenario::CalibrationRef> refs;
  for (const JsonValue& item : value.array(1, 1024)) {
    if (!item.raw().is_object()) {
      refs.push_back({item.non_empty_string(), {}});
      continue;
    }
    JsonObject object = item.object();
    Scenario::CalibrationRef ref;
    ref.file = object.required("file").non_empty_string();
    if (auto groups = object.optional("node_groups"))
      for (const JsonValue& group : groups->array(1, 1024))
        ref.node_groups.push_back(group.non_empty_string());
    object.finish();
    refs.push_back(ref);
  }
  return refs;
}

Scenario parse_resolved(const Json& json, bool with_sweep, const std::filesystem::path& base_dir,
                        bool check_llm_memory = true) {
  Scenario scenario;
  scenario.resolved = json;
  JsonObject root(json, "");
  root.allow({"$schema", "include"});
  if (auto v = root.optional("name")) scenario.name = v->string();
  if (auto v = root.optional("description")) scenario.description = v->string();
  scenario.topology = topo::parse_cluster_spec(root.required("topology"));
  // NVLinks carry their generation's payload rate, not the datasheet's (models/nvlink.hpp).
  models::set_nvlink_payload_efficiency(scenario.topology);
  scenario.workload = detail::parse_workload(root.required("workload"), scenario.topology, base_dir,
                                             check_llm_memory);
  if (auto v = root.optional("engine")) scenario.engine = detail::parse_engine(*v);
  if (auto v = root.optional("output")) scenario.output = parse_output(*v);
  if (auto v = root.optional("calibration")) scenario.calibrations = parse_calibrations(*v);
  if (auto v = root.optional("seed"))
    scenario.seed = static_cast<std::uint64_t>(v->integer(0, INT64_MAX));
  if (auto v = root.optional("sweep"); v && with_sweep) scenario.sweep = parse_sweep(*v);
  if (auto v = root.optional("plan")) scenario.plan = detail::parse_plan(*v, scenario.topology);
  root.finish();
  if (scenario.workload.type == "collective")
    check_collective(scenario.workload.collective, scenario.topology);
  if (scenario.workload.type == "iterative") check_iterative(scenario);
  return scenario;
}

// The JSON of sweep point `index` (first axis fastest) and its settings.
Json point_json(const Scenario& scenario, std::size_t index,
                std::vector<std::pair<std::string, Json>>& settings) {
  Json point = scenario.resolved;
  point.erase("sweep");
  for (const SweepAxis& axis : scenario.sweep) {
    const Json& value = axis.values[index % axis.values.size()];
    index /= axis.values.size();
    try {
      point[Json::json_pointer(axis.pointer)] = value;
    } catch (const Json::exception&) {
      throw InputError("/sweep", "cannot set " + axis.pointer +
                                     " in this scenario (a step of the path is not an object)");
    }
    settings.emplace_back(axis.pointer, value);
  }
  return point;
}

// Every sweep point must itself be a valid scenario: check them all now, not mid-sweep.
void check_sweep_points(const Scenario& scenario, const std::filesystem::path& base_dir) {
  if (scenario.sweep.empty()) return;
  const std::size_t count = sweep_point_count(scenario);
  for (std::size_t i = 0; i < count; ++i) {
    std::vector<std::pair<std::string, Json>> settings;
    const Json point = point_json(scenario, i, settings);
    try {
      parse_resolved(point, false, base_dir);
    } catch (const InputError& e) {
      std::string where = "sweep point";
      for (const auto& [pointer, value] : settings) where += " " + pointer + "=" + value.dump();
      throw InputError("/sweep", where + ": " + e.what());
    }
  }
}

// Applies "calibration" to the cluster spec and engine settings, so every engine inherits it.
void apply_calibration_file(Scenario& scenario, const std::filesystem::path& base_dir) {
  if (scenario.calibrations.empty()) return;
  try {
    std::vector<calib::Calibration> calibrations;
    for (std::size_t i = 0; i < scenario.calibrations.size(); ++i) {
      Scenario::CalibrationRef& ref = scenario.calibrations[i];
      std::filesystem::path file = ref.file;
      if (file.is_relative()) file = base_dir / file;
      ref.file = file.string();
      calibrations.push_back(calib::read_calibration_file(file));
      if (!ref.node_groups.empty()) calibrations.back().node_groups = ref.node_groups;
    }
    for (std::size_t i = 0; i < calibrations.size(); ++i)
      for (const std::string& line :
           calib::calibration_differences(calibrations[i], scenario.topology))
        scenario.warnings.push_back("calibration " + scenario.calibrations[i].file +
                                    " was fitted on another kind of system: " + line);
    const calib::EngineCalibration engine =
        calib::apply_calibrations(calibrations, scenario.topology);
    scenario.engine.per_step_overhead = engine.per_step_overhead;
    scenario.engine.launch_overhead = engine.launch_overhead;
    if (engine.reduce_bytes_per_second > 0)
      scenario.engine.reduce_bytes_per_second = engine.reduce_bytes_per_second;
  } catch (const InputError& e) {
    throw InputError("/calibration", e.what());
  }
}

} // namespace

std::size_t sweep_point_count(const Scenario& scenario) {
  std::size_t count = 1;
  for (const SweepAxis& axis : scenario.sweep) count *= axis.values.size();
  return count;
}

SweepPoint sweep_point(const Scenario& scenario, std::size_t index) {
  if (index >= sweep_point_count(scenario))
    throw std::out_of_range("sweep point " + std::to_string(index) + " of " +
                            std::to_string(sweep_point_count(scenario)));
  SweepPoint point;
  point.index = index;
  point.scenario =
      parse_resolved(point_json(scenario, index, point.settings), false, scenario.base_dir);
  point.scenario.base_dir = scenario.base_dir;
  point.scenario.name = scenario.name;
  point.scenario.description = scenario.description;
  point.scenario.origin = scenario.origin;
  point.scenario.plan = scenario.plan;
  // A point inherits the scenario's calibration like the base scenario does.
  apply_calibration_file(point.scenario, std::filesystem::path(scenario.origin).parent_path());
  return point;
}

coll::CollectiveCall make_collective_call(const CollectiveWorkload& workload,
                                          const topo::ClusterSpec& cluster, std::uint64_t bytes) {
  coll::CollectiveCall call;
  call.op = workload.op;
  call.ranks = workload.ranks;
  call.bytes = bytes;
  call.dtype = workload.dtype;
  call.reduction = workload.reduction;
  call.root = workload.root;
  call.algorithm = workload.algorithm;
  call.params = workload.params;
  call.node_of_rank = node_of_rank(cluster, workload.ranks);
  return call;
}

namespace {

Scenario load(const Json& json, const std::string& origin, const std::filesystem::path& base_dir,
              bool check_llm_memory) {
  const Json resolved = resolve_includes(json, origin, base_dir);
  try {
    Scenario scenario = parse_resolved(resolved, true, base_dir, check_llm_memory);
    check_sweep_points(scenario, base_dir);
    scenario.origin = origin;
    scenario.base_dir = base_dir;
    apply_calibration_file(scenario, base_dir);
    return scenario;
  } catch (const InputError& e) {
    // Errors from sections name a JSON pointer; prefix the file so the user knows which one.
    const bool has_origin = e.where().starts_with(origin);
    throw InputError(has_origin ? e.where() : origin + ": " + e.where(), e.reason());
  }
}

} // namespace

Scenario load_scenario(const Json& json, const std::string& origin,
                       const std::filesystem::path& base_dir) {
  return load(json, origin, base_dir, true);
}

Scenario load_scenario_for_layout_search(const Json& json, const std::string& origin,
                                         const std::filesystem::path& base_dir) {
  return load(json, origin, base_dir, false);
}

Scenario load_scenario_file(const std::filesystem::path& file) {
  const Json json = parse_json_file(file, "a scenario");
  return load_scenario(json, file.string(), file.parent_path());
}

} // namespace ddlsim
