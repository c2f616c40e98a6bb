#include "ddlsim/core/input_error.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/topologies/spec_parser.hpp"
#include "workload_parser.hpp"

#include "ddlsim/calibrate/calibration.hpp"
#include "ddlsim/collectives/algorithm.hpp"
#include "ddlsim/core/suggest.hpp"

namespace ddlsim {
namespace {

std::int64_t total_gpus(const topo::ClusterSpec& spec) {
  std::int64_t gpus = 0;
  for (const topo::NodeGroup& group : spec.node_groups)
    gpus += static_cast<std::int64_t>(group.count) * group.spec.gpus;
  return gpus;
}

// Node index of every GPU rank, node-major like Topology::gpus().
std::vector<int> node_of_rank(const topo::ClusterSpec& spec, int ranks) {
  std::vector<int> nodes;
  int node = 0;
  for (const topo::NodeGroup& group : spec.node_groups)
    for (int i = 0; i < group.count; ++i, ++node)
      for (int g = 0; g < group.spec.gpus && static_cast<int>(nodes.size()) < ranks; ++g)
        nodes.push_back(node);
  return nodes;
}

// Cross-section checks: the collective fits the cluster and its algorithm accepts every size.
void check_collective(CollectiveWorkload& c, const topo::ClusterSpec& cluster) {
  const std::int64_t gpus = total_gpus(cluster);
  if (c.ranks == 0) c.ranks = static_cast<int>(gpus);
  if (c.ranks > gpus)
    throw InputError("/workload/ranks", "asks for " + std::to_string(c.ranks) +
                                            " ranks but the topology has " + std::to_string(gpus) +
                                            " GPUs; lower it or add nodes");
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
  if (c.algorithm == "auto") return;
  const coll::Algorithm* algorithm = coll::find_algorithm(c.op, c.algorithm);
  if (!algorithm) {
    std::vector<std::string> names;
    for (const coll::Algorithm* a : coll::algorithms_for(c.op)) names.emplace_back(a->name());
    names.emplace_back("auto");
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
Scenario parse_resolved(const Json& json, bool with_sweep) {
  Scenario scenario;
  scenario.resolved = json;
  JsonObject root(json, "");
  root.allow({"$schema", "include"});
  if (auto v = root.optional("name")) scenario.name = v->string();
  if (auto v = root.optional("description")) scenario.description = v->string();
  scenario.topology = topo::parse_cluster_spec(root.required("topology"));
  scenario.workload = detail::parse_workload(root.required("workload"));
  if (auto v = root.optional("engine")) scenario.engine = detail::parse_engine(*v);
  if (auto v = root.optional("output")) scenario.output = parse_output(*v);
  if (auto v = root.optional("calibration")) scenario.calibration_file = v->non_empty_string();
  if (auto v = root.optional("seed"))
    scenario.seed = static_cast<std::uint64_t>(v->integer(0, INT64_MAX));
  if (auto v = root.optional("sweep"); v && with_sweep) scenario.sweep = parse_sweep(*v);
  root.finish();
  check_collective(scenario.workload.collective, scenario.topology);
  return scenario;
}

// Every sweep point must itself be a valid scenario: check them all now, not mid-sweep.
void check_sweep_points(const Scenario& scenario) {
  if (scenario.sweep.empty()) return;
  std::vector<std::size_t> index(scenario.sweep.size(), 0);
  while (true) {
    Json point = scenario.resolved;
    point.erase("sweep");
    std::string where = "sweep point";
    for (std::size_t a = 0; a < scenario.sweep.size(); ++a) {
      const SweepAxis& axis = scenario.sweep[a];
      try {
        point[Json::json_pointer(axis.pointer)] = axis.values[index[a]];
      } catch (const Json::exception&) {
        throw InputError("/sweep", "cannot set " + axis.pointer +
                                       " in this scenario (a step of the path is not an object)");
      }
      where += " " + axis.pointer + "=" + axis.values[index[a]].dump();
    }
    try {
      parse_resolved(point, false);
    } catch (const InputError& e) {
      throw InputError("/sweep", where + ": " + e.what());
    }
    std::size_t a = 0;
    for (; a < index.size(); ++a) {
      if (++index[a] < scenario.sweep[a].values.size()) break;
      index[a] = 0;
    }
    if (a == index.size()) return;
  }
}

// Applies "calibration" to the cluster spec and engine settings, so every engine inherits it.
void apply_calibration_file(Scenario& scenario, const std::filesystem::path& base_dir) {
  if (scenario.calibration_file.empty()) return;
  std::filesystem::path file = scenario.calibration_file;
  if (file.is_relative()) file = base_dir / file;
  try {
    const calib::Calibration calibration = calib::read_calibration_file(file);
    const calib::EngineCalibration engine =
        calib::apply_calibration(calibration, scenario.topology);
    scenario.engine.per_step_overhead = engine.per_step_overhead;
    scenario.engine.launch_overhead = engine.launch_overhead;
    if (engine.reduce_bytes_per_second > 0)
      scenario.engine.reduce_bytes_per_second = engine.reduce_bytes_per_second;
  } catch (const InputError& e) {
    throw InputError("/calibration", e.what());
  }
  scenario.calibration_file = file.string();
}

} // namespace

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

Scenario load_scenario(const Json& json, const std::string& origin,
                       const std::filesystem::path& base_dir) {
  const Json resolved = resolve_includes(json, origin, base_dir);
  try {
    Scenario scenario = parse_resolved(resolved, true);
    check_sweep_points(scenario);
    scenario.origin = origin;
    apply_calibration_file(scenario, base_dir);
    return scenario;
  } catch (const InputError& e) {
    // Errors from sections name a JSON pointer; prefix the file so the user knows which one.
    const bool has_origin = e.where().starts_with(origin);
    throw InputError(has_origin ? e.where() : origin + ": " + e.where(), e.reason());
  }
}

Scenario load_scenario_file(const std::filesystem::path& file) {
  const Json json = parse_json_file(file);
  return load_scenario(json, file.string(), file.parent_path());
}

} // namespace ddlsim
