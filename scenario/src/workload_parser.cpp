#include "workload_parser.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/input_file.hpp"
#include "ddlsim/core/units.hpp"

#include <array>

namespace ddlsim::detail {
namespace {

template <typename Enum, std::size_t N>
Enum parse_enum(const JsonValue& value, const std::array<Enum, N>& all) {
  std::vector<std::string> names;
  for (Enum e : all) names.emplace_back(coll::to_string(e));
  const std::string chosen = value.choice(names);
  for (Enum e : all)
    if (coll::to_string(e) == chosen) return e;
  return all[0]; // unreachable: choice() accepted one of the names
}

constexpr std::uint64_t kMaxMessageBytes = 1ull << 40; // 1 TiB per collective

constexpr std::size_t kMaxFlows = std::size_t{1} << 24; // 16 M flows (a 4,096-rank matrix)

// The "traffic" object of a send_recv workload: {"flows": [...]} or {"pattern": ...}.
TrafficSpec parse_traffic(const JsonValue& section, const std::filesystem::path& base_dir) {
  TrafficSpec traffic;
  JsonObject object = section.object();
  if (auto flows = object.optional("flows")) {
    if (object.has("pattern")) flows->fail("give either \"flows\" or \"pattern\", not both");
    traffic.pattern = "flows";
    for (const JsonValue& item : flows->array(1, kMaxFlows)) {
      JsonObject flow = item.object();
      coll::Flow f;
      f.src = static_cast<int>(flow.required("src").integer(0, 1 << 20));
      f.dst = static_cast<int>(flow.required("dst").integer(0, 1 << 20));
      f.bytes = flow.required("bytes").bytes(1, kMaxMessageBytes);
      flow.finish();
      traffic.flows.push_back(f);
    }
    object.finish();
    return traffic;
  }
  const JsonValue pattern = object.required("pattern");
  traffic.pattern =
      pattern.choice(std::vector<std::string>{"permutation", "incast", "all_to_all_v"});
  if (traffic.pattern == "all_to_all_v") {
    const JsonValue matrix = object.required("matrix");
    traffic.matrix_file = matrix.non_empty_string();
    std::filesystem::path file(traffic.matrix_file);
    if (file.is_relative()) file = base_dir / file;
    try {
      traffic.matrix_csv = read_input_file(file, "a traffic matrix", kMaxLogInputBytes);
    } catch (const InputError& e) {
      matrix.fail(e.what());
    }
  } else {
    traffic.bytes = object.required("bytes").bytes(1, kMaxMessageBytes);
    if (traffic.pattern == "permutation") {
      if (auto v = object.optional("seed"))
        traffic.seed = static_cast<std::uint64_t>(v->integer(0, INT64_MAX));
    } else {
      if (auto v = object.optional("senders"))
        traffic.senders = static_cast<int>(v->integer(1, 1 << 20));
      if (auto v = object.optional("receiver"))
        traffic.receiver = static_cast<int>(v->integer(0, 1 << 20));
    }
  }
  object.finish();
  return traffic;
}

} // namespace

coll::AlgorithmParams parse_params(const JsonValue& section) {
  coll::AlgorithmParams params;
  JsonObject object = section.object();
  if (auto v = object.optional("chunks")) params.chunks = static_cast<int>(v->integer(1, 1 << 16));
  if (auto v = object.optional("channels")) params.channels = static_cast<int>(v->integer(1, 256));
  if (auto v = object.optional("group_sizes"))
    for (const JsonValue& size : v->array(1, 8))
      params.group_sizes.push_back(static_cast<int>(size.integer(1, 1 << 20)));
  if (auto v = object.optional("servers"))
    params.servers = static_cast<int>(v->integer(1, 1 << 20));
  if (auto v = object.optional("dedicated_servers")) params.dedicated_servers = v->boolean();
  if (auto v = object.optional("density")) params.density = v->positive_number(1.0);
  if (auto v = object.optional("chunk_bytes")) params.chunk_bytes = v->bytes(1, kMaxMessageBytes);
  object.finish();
  return params;
}

models::NcclOverrides parse_nccl_overrides(const JsonValue& section) {
  models::NcclOverrides force;
  JsonObject object = section.object();
  if (auto v = object.optional("algorithm"))
    force.algorithm = models::parse_nccl_algorithm(v->non_empty_string(), v->path());
  if (auto v = object.optional("protocol"))
    models::parse_nccl_protocols(v->non_empty_string(), v->path(), force);
  if (auto v = object.optional("channels")) force.channels = static_cast<int>(v->integer(1, 64));
  object.finish();
  return force;
}

std::vector<std::uint64_t> parse_sizes(const JsonValue& sizes) {
  std::vector<std::uint64_t> out;
  if (sizes.raw().is_array()) {
    for (const JsonValue& size : sizes.array(1, kMaxSizesPerWorkload))
      out.push_back(size.bytes(0, kMaxMessageBytes));
    return out;
  }
  if (!sizes.raw().is_object())
    sizes.fail_expected("a list of byte sizes or {\"from\": ..., \"to\": ..., \"factor\": ...}");
  JsonObject range = sizes.object();
  const std::uint64_t from = range.required("from").bytes(1, kMaxMessageBytes);
  const JsonValue to_value = range.required("to");
  const std::uint64_t to = to_value.bytes(1, kMaxMessageBytes);
  const double factor = range.has("factor") ? range.required("factor").number(1.01, 1024) : 2.0;
  range.finish();
  if (to < from)
    to_value.fail("\"to\" (" + format_bytes(to) + ") is smaller than \"from\" (" +
                  format_bytes(from) + ")");
  for (double size = static_cast<double>(from); size <= static_cast<double>(to) * (1 + 1e-12);
       size *= factor) {
    out.push_back(static_cast<std::uint64_t>(size + 0.5));
    if (out.size() > kMaxSizesPerWorkload)
      sizes.fail("the range makes more than " + std::to_string(kMaxSizesPerWorkload) +
                 " sizes; use a larger factor");
  }
  return out;
}

void parse_collective_keys(JsonObject& object, CollectiveWorkload& c) {
  c.op = parse_enum(object.required("op"),
                    std::array{coll::Op::all_reduce, coll::Op::reduce_scatter, coll::Op::all_gather,
                               coll::Op::broadcast, coll::Op::reduce, coll::Op::all_to_all,
                               coll::Op::send_recv});
  if (auto v = object.optional("algorithm")) c.algorithm = v->non_empty_string();
  if (auto v = object.optional("params")) c.params = parse_params(*v);
  if (auto v = object.optional("nccl")) {
    if (c.algorithm != "nccl")
      v->fail(
          "the \"nccl\" object forces NCCL's choice; it needs \"algorithm\": \"nccl\" (found \"" +
          c.algorithm + "\")");
    c.nccl = parse_nccl_overrides(*v);
  }
  if (auto v = object.optional("dtype"))
    c.dtype = parse_enum(
        *v, std::array{coll::DataType::fp32, coll::DataType::fp16, coll::DataType::bf16});
  if (auto v = object.optional("reduction"))
    c.reduction = parse_enum(
        *v, std::array{coll::Reduction::sum, coll::Reduction::avg, coll::Reduction::adasum});
  if (auto v = object.optional("root")) c.root = static_cast<int>(v->integer(0, 1 << 20));
  if (auto v = object.optional("ranks")) c.ranks = static_cast<int>(v->integer(1, 1 << 20));
}

WorkloadSpec parse_workload(const JsonValue& section, const topo::ClusterSpec& cluster,
                            const std::filesystem::path& base_dir, bool check_llm_memory) {
  WorkloadSpec workload;
  JsonObject object = section.object();
  workload.type = object.required("type").choice(std::vector<std::string>{
      "collective", "training", "llm_training", "iterative", "job_trace", "chakra"});
  if (workload.type == "job_trace") {
    workload.job_trace = parse_job_trace(object, cluster, base_dir);
    object.finish();
    return workload;
  }
  if (workload.type == "iterative") {
    workload.iterative = parse_iterative(object, base_dir);
    object.finish();
    return workload;
  }
  if (workload.type == "llm_training") {
    workload.llm = parse_llm(object, cluster, check_llm_memory);
    object.finish();
    return workload;
  }
  if (workload.type == "chakra") {
    workload.chakra = parse_chakra(object, cluster, base_dir);
    object.finish();
    return workload;
  }
  if (workload.type == "training") {
    workload.training = parse_training(object, cluster, base_dir);
    object.finish();
    return workload;
  }
  CollectiveWorkload& c = workload.collective;
  parse_collective_keys(object, c);
  if (auto v = object.optional("traffic")) {
    if (c.op != coll::Op::send_recv)
      v->fail("\"traffic\" describes point-to-point flows; it needs \"op\": \"send_recv\"");
    for (const char* key : {"sizes", "algorithm", "root", "params", "nccl"})
      if (object.has(key))
        v->fail(std::string("\"traffic\" gives the flows and their bytes; remove \"") + key +
                "\" from the workload");
    c.algorithm = "traffic";
    c.traffic = parse_traffic(*v, base_dir);
  } else {
    c.sizes = parse_sizes(object.required("sizes"));
  }
  object.finish();
  return workload;
}

EngineSpec parse_engine(const JsonValue& section) {
  EngineSpec engine;
  JsonObject object = section.object();
  const JsonValue type = object.required("type");
  const std::string name = type.choice(std::vector<std::string>{"analytic", "flow", "packet"});
  if (auto v = object.optional("per_step_overhead_ns"))
    engine.per_step_overhead = ns_to_ps(v->number(0, 1e9));
  if (auto v = object.optional("reduce_bandwidth_gbps"))
    engine.reduce_bytes_per_second = gbps_to_bytes_per_second(v->positive_number(1e6));
  if (auto v = object.optional("compute_slowdown")) engine.compute_slowdown = v->boolean();
  if (name == "flow") engine.kind = sim::flow::parse_flow_engine(object);
  if (name == "packet") engine.kind = sim::packet::parse_packet_engine_spec(object);
  object.finish();
  return engine;
}

} // namespace ddlsim::detail
