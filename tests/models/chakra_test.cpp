// Chakra execution traces as a workload (models/chakra.hpp): traces written with ddlsim's own
// protobuf writer, loaded through a scenario and run on the analytic engine. The time of a chain
// is its compute plus what the collective workload gives the same collective; dependencies
// serialise collectives that otherwise overlap; every bad trace names its file and node.
#include "ddlsim/models/chakra.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/sim/engine.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "error_of.hpp"

#include <catch2/catch.hpp>

#include <fstream>

using namespace ddlsim;
using namespace ddlsim::models;
using Catch::Matchers::Contains;
using test_support::error_of;

namespace {

// Node types and comm types as Chakra's schema numbers them (schema/protobuf/et_def.proto).
constexpr int kComp = 4, kSend = 5, kRecv = 6, kColl = 7;
constexpr std::int64_t kAllReduce = 0, kAllGather = 2;

ChakraNodeOut compute(std::uint64_t id, std::uint64_t micros,
                      std::vector<std::uint64_t> deps = {}) {
  ChakraNodeOut n;
  n.id = id;
  n.name = "kernel" + std::to_string(id);
  n.type = kComp;
  n.duration_micros = micros;
  n.data_deps = std::move(deps);
  n.attrs.push_back({"is_cpu_op", false});
  return n;
}

ChakraNodeOut collective(std::uint64_t id, std::int64_t type, std::uint64_t bytes,
                         std::vector<std::uint64_t> deps = {}, const std::string& group = "") {
  ChakraNodeOut n;
  n.id = id;
  n.name = "coll" + std::to_string(id);
  n.type = kColl;
  n.data_deps = std::move(deps);
  n.attrs.push_back({"comm_type", type});
  n.attrs.push_back({"comm_size", bytes}); // uint64_val, as Chakra's tutorials write it
  if (!group.empty()) n.attrs.push_back({"pg_name", group});
  return n;
}

ChakraNodeOut message(std::uint64_t id, bool send, int peer, std::uint64_t bytes, std::int32_t tag,
                      std::vector<std::uint64_t> deps = {}) {
  ChakraNodeOut n;
  n.id = id;
  n.type = send ? kSend : kRecv;
  n.data_deps = std::move(deps);
  n.attrs.push_back({send ? "comm_dst" : "comm_src", std::int32_t{peer}});
  n.attrs.push_back({"comm_size", static_cast<std::int64_t>(bytes)});
  n.attrs.push_back({"comm_tag", tag});
  return n;
}

// A fresh folder for one test's trace files.
std::filesystem::path folder(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("ddlsim-chakra-test-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void write(const std::filesystem::path& file, const std::string& bytes) {
  std::ofstream(file, std::ios::binary) << bytes;
}

// Writes t.<rank>.et for every rank in `dir`.
void write_ranks(const std::filesystem::path& dir,
                 const std::vector<std::vector<ChakraNodeOut>>& ranks) {
  for (std::size_t r = 0; r < ranks.size(); ++r)
    write(dir / ("t." + std::to_string(r) + ".et"), encode_chakra_rank(ranks[r]));
}

// One DGX H100 (8 GPUs on NVLink) on `engine`; the workload reads the traces t.*.et of `dir`.
Scenario load(const std::filesystem::path& dir, const std::string& extra = "",
              const std::string& engine = "analytic") {
  Json json = Json::parse(R"({"topology": {"nodes": [{"preset": "dgx-h100", "count": 1}]}})");
  json["engine"] = {{"type", engine}};
  json["workload"] = Json::parse(R"({"type": "chakra", "traces": "t")" + extra + "}");
  return load_scenario(json, "s.json", dir);
}

sim::EngineResult run(const Scenario& scenario) {
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  return sim::simulate(sim::ChakraTrace{scenario.workload.chakra.plan}, topology, router,
                       scenario.engine, {});
}

Picoseconds run_time(const std::filesystem::path& dir, const std::string& extra = "") {
  return run(load(dir, extra)).time;
}

// The collective workload's time for the same call, on the same cluster.
Picoseconds collective_time(const Scenario& scenario, coll::Op op, int ranks, std::uint64_t bytes,
                            const std::string& algorithm, int root = 0) {
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  coll::CollectiveCall call;
  call.op = op;
  call.ranks = ranks;
  call.bytes = bytes;
  call.dtype = coll::DataType::bf16;
  call.algorithm = algorithm;
  call.root = root;
  return sim::simulate(call, topology, router, scenario.engine, {}).time;
}

std::string load_error(const std::filesystem::path& dir, const std::string& extra = "") {
  return error_of([&] { load(dir, extra); });
}

} // namespace

TEST_CASE("chakra: a compute, all-reduce, compute chain takes the compute plus the all-reduce") {
  const auto dir = folder("chain");
  const std::vector<ChakraNodeOut> rank = {compute(1, 10), collective(2, kAllReduce, 1 << 20, {1}),
                                           compute(3, 20, {2})};
  write_ranks(dir, {rank, rank});
  const Scenario scenario = load(dir);
  const sim::EngineResult result = run(scenario);
  const Picoseconds all_reduce =
      collective_time(scenario, coll::Op::all_reduce, 2, 1 << 20, "ring");
  CHECK(all_reduce > 0);
  CHECK(result.time == 30 * kPsPerUs + all_reduce);
  CHECK(result.chakra.compute == 30 * kPsPerUs);
  CHECK(result.chakra.exposed == all_reduce);
  REQUIRE(result.chakra.kinds.size() == 1);
  CHECK(result.chakra.kinds[0].what.name == "all_reduce");
  CHECK(result.chakra.kinds[0].what.calls == 1);
  CHECK(result.chakra.kinds[0].what.bytes == 1 << 20);

  // More bytes take longer.
  const std::vector<ChakraNodeOut> larger = {
      compute(1, 10), collective(2, kAllReduce, 16 << 20, {1}), compute(3, 20, {2})};
  write_ranks(dir, {larger, larger});
  CHECK(run_time(dir) > result.time);
}

TEST_CASE("chakra: a send and its receive take what the point-to-point collective takes") {
  const auto dir = folder("p2p");
  write_ranks(dir, {{compute(1, 5), message(2, true, 1, 4 << 20, 7, {1})},
                    {message(1, false, 0, 4 << 20, 7), compute(2, 5, {1})}});
  const Scenario scenario = load(dir);
  const sim::EngineResult result = run(scenario);
  const Picoseconds p2p = collective_time(scenario, coll::Op::send_recv, 2, 4 << 20, "direct", 1);
  CHECK(result.time == 10 * kPsPerUs + p2p);
  REQUIRE(result.chakra.kinds.size() == 1);
  CHECK(result.chakra.kinds[0].what.name == "send_recv");
  CHECK(result.chakra.kinds[0].what.calls == 1);
}

TEST_CASE("chakra: a data dependency serialises two collectives that otherwise overlap") {
  const auto dir = folder("overlap");
  const std::string groups = R"(, "process_groups": {"a": [0, 1, 2, 3], "b": [0, 1, 2, 3]})";
  const std::uint64_t bytes = 8 << 20;
  auto ranks = [&](std::vector<ChakraNodeOut> nodes) {
    return std::vector<std::vector<ChakraNodeOut>>(4, nodes);
  };
  write_ranks(dir, ranks({collective(1, kAllReduce, bytes, {}, "a")}));
  const Picoseconds one = run_time(dir, groups);
  // Independent, on two process groups (two communicators): they share the links.
  write_ranks(dir, ranks({collective(1, kAllReduce, bytes, {}, "a"),
                          collective(2, kAllReduce, bytes, {}, "b")}));
  const Picoseconds independent = run_time(dir, groups);
  // The second waits for the first.
  write_ranks(dir, ranks({collective(1, kAllReduce, bytes, {}, "a"),
                          collective(2, kAllReduce, bytes, {1}, "b")}));
  const Picoseconds dependent = run_time(dir, groups);
  // Independent, on one process group: its stream runs them one after the other.
  write_ranks(dir, ranks({collective(1, kAllReduce, bytes, {}, "a"),
                          collective(2, kAllReduce, bytes, {}, "a")}));
  const Picoseconds one_stream = run_time(dir, groups);
  CHECK(dependent == 2 * one);
  CHECK(one_stream == dependent);
  CHECK(independent < dependent);
  CHECK(independent > one);
}

TEST_CASE("chakra: compute overlaps an independent collective, and exposes less of it") {
  const auto dir = folder("hide");
  write_ranks(dir, std::vector<std::vector<ChakraNodeOut>>(
                       2, {compute(1, 1000), collective(2, kAllGather, 1 << 20)}));
  const sim::EngineResult hidden = run(load(dir));
  CHECK(hidden.time == 1000 * kPsPerUs);
  CHECK(hidden.chakra.exposed == 0);
  CHECK(hidden.chakra.communication > 0);
  write_ranks(dir, std::vector<std::vector<ChakraNodeOut>>(
                       2, {compute(1, 1000), collective(2, kAllGather, 1 << 20, {1})}));
  const sim::EngineResult exposed = run(load(dir));
  CHECK(exposed.time > hidden.time);
  CHECK(exposed.chakra.exposed == exposed.time - 1000 * kPsPerUs);
}

TEST_CASE("chakra: skipped nodes pass dependencies on and num_ops runs on the roofline") {
  const auto dir = folder("roofline");
  ChakraNodeOut metadata;
  metadata.id = 2;
  metadata.type = 1; // METADATA_NODE
  metadata.data_deps = {1};
  ChakraNodeOut flops;
  flops.id = 3;
  flops.type = kComp;
  flops.data_deps = {2};
  flops.attrs = {{"num_ops", std::int64_t{1'000'000'000'000}}};
  write_ranks(dir, {{compute(1, 10), metadata, flops}});
  const Scenario scenario = load(dir);
  const GpuSpec gpu = find_gpu("H100", "test");
  const double seconds = 1e12 / gpu.fp16_flops;
  const sim::EngineResult result = run(scenario);
  CHECK(result.time == 10 * kPsPerUs + static_cast<Picoseconds>(std::llround(seconds * 1e12)));
  CHECK(scenario.workload.chakra.plan->skipped == 1);
  CHECK(scenario.workload.chakra.plan->roofline_nodes == 1);
}

TEST_CASE("chakra: a CPU operator of any type runs on the CPU for its duration") {
  // PyTorch's c10d wrapper around a collective: a COMM_COLL_NODE on the CPU without comm_type.
  const auto dir = folder("cpu");
  ChakraNodeOut wrapper;
  wrapper.id = 1;
  wrapper.type = kColl;
  wrapper.duration_micros = 7;
  wrapper.attrs = {{"is_cpu_op", true}};
  write_ranks(dir, {{wrapper, compute(2, 4), compute(3, 3, {1})}});
  const sim::EngineResult result = run(load(dir));
  CHECK(result.time == 10 * kPsPerUs); // the GPU's first 4 us run beside the CPU's 7 us
  CHECK(result.chakra.compute == 7 * kPsPerUs);
}

TEST_CASE("chakra: every engine runs the trace's one schedule, the same way twice") {
  const auto dir = folder("engines");
  const std::vector<ChakraNodeOut> rank = {compute(1, 10), collective(2, kAllReduce, 1 << 20, {1}),
                                           compute(3, 20, {2})};
  write_ranks(dir, {rank, rank});
  for (const char* engine : {"analytic", "flow", "packet"}) {
    const Scenario scenario = load(dir, "", engine);
    const sim::EngineResult first = run(scenario);
    INFO(engine);
    CHECK(first.time > 30 * kPsPerUs);
    CHECK(first.chakra.compute == 30 * kPsPerUs);
    CHECK(first.chakra.exposed == first.time - 30 * kPsPerUs);
    CHECK(run(scenario).time == first.time);
  }
}

TEST_CASE("chakra: bad traces name the file, the node and the fix") {
  const auto dir = folder("errors");
  CHECK_THAT(load_error(dir), Contains("no trace file") && Contains("t.0.et"));

  write_ranks(dir, {{compute(1, 1, {99})}});
  CHECK_THAT(load_error(dir), Contains("t.0.et: node 1") && Contains("depends on node 99"));

  CHECK(run_time(dir, R"(, "ignore_unknown_dependencies": true)") == kPsPerUs);
  CHECK(load(dir, R"(, "ignore_unknown_dependencies": true)")
            .workload.chakra.plan->dropped_dependencies == 1);
  write_ranks(dir, {{compute(1, 1, {1})}}); // a node after itself, as PyTorch's converter writes
  CHECK(run_time(dir) == kPsPerUs);

  write_ranks(dir, {{compute(1, 1, {2}), compute(2, 1, {1})}});
  CHECK_THAT(load_error(dir), Contains("node 1") && Contains("dependency cycle"));
  // A cycle through a control dependency: data dependencies alone (ASTRA-sim's) have none.
  ChakraNodeOut before = compute(1, 1);
  before.ctrl_deps = {2};
  write_ranks(dir, {{before, compute(2, 1, {1})}});
  CHECK_THAT(load_error(dir), Contains("dependency cycle") && Contains("/workload/dependencies"));
  CHECK(run_time(dir, R"(, "dependencies": "data")") == 2 * kPsPerUs);

  write_ranks(dir, {{collective(1, kAllReduce, 1024)}, {collective(1, kAllReduce, 2048)}});
  CHECK_THAT(load_error(dir),
             Contains("t.1.et: node 1") && Contains("2048 bytes") && Contains("1024 bytes"));

  const std::string groups = R"(, "process_groups": {"a": [0, 1], "b": [0, 1]})";
  write_ranks(dir, {{collective(1, kAllReduce, 1024, {}, "a")},
                    {collective(1, kAllReduce, 1024, {}, "b")}});
  CHECK_THAT(load_error(dir, groups),
             Contains("process group \"a\"") && Contains("no counterpart on rank 1"));
  CHECK_THAT(load_error(dir), Contains("pg_name \"a\" names no process group"));
  CHECK_THAT(load_error(dir, R"(, "process_groups": {"a": [0, 5], "b": [0, 1]})"),
             Contains("/workload/process_groups/a") && Contains("rank 5"));

  write_ranks(dir, {{message(1, true, 1, 1024, 3)}, {compute(1, 1)}});
  CHECK_THAT(load_error(dir),
             Contains("t.0.et: node 1") && Contains("no matching COMM_RECV_NODE on rank 1"));
  write_ranks(dir, {{message(1, true, 1, 1024, 3)}, {message(1, false, 0, 1024, 4)}});
  CHECK_THAT(load_error(dir), Contains("tag 3") && Contains("tag 4"));

  // Both ranks receive before they send: the run cannot finish, which is the trace's fault.
  write_ranks(dir, {{message(1, false, 1, 1024, 0), message(2, true, 1, 1024, 0, {1})},
                    {message(1, false, 0, 1024, 0), message(2, true, 0, 1024, 0, {1})}});
  CHECK_THAT(error_of([&] { run(load(dir)); }),
             Contains("wait on each other forever") && Contains("t.0.et: node 2"));

  ChakraNodeOut odd = compute(1, 1);
  odd.type = 42;
  write_ranks(dir, {{odd}});
  CHECK_THAT(load_error(dir), Contains("t.0.et: node 1") && Contains("node type 42"));
  write_ranks(dir, {{collective(1, 77, 1024)}});
  CHECK_THAT(load_error(dir), Contains("comm_type 77"));
  write_ranks(dir, {{collective(1, 9, 1024)}}); // BARRIER
  CHECK_THAT(load_error(dir), Contains("BARRIER") && Contains("not simulated"));

  const std::string whole = encode_chakra_rank({compute(1, 1), compute(2, 1, {1})});
  write(dir / "t.0.et", whole.substr(0, whole.size() - 3));
  CHECK_THAT(load_error(dir), Contains("t.0.et") && Contains("truncated"));

  write_ranks(dir, {{collective(1, kAllReduce, 1024)}, {collective(1, kAllReduce, 1024)}});
  CHECK_THAT(load_error(dir, R"(, "algorithms": {"all_reduce": "rang"})"),
             Contains("/workload/algorithms/all_reduce") && Contains("rang"));
}
