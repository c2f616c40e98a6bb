// A shared cluster over time (jobs/): placement, queueing, contention and bad traces.
#include "ddlsim/jobs/placement.hpp"
#include "ddlsim/jobs/shared_cluster.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "error_of.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

using namespace ddlsim;
using ddlsim::test_support::error_of;

namespace {

const std::filesystem::path kScenarios = DDLSIM_SCENARIO_DIR;

// `nodes` cloud V100 nodes (8 GPUs, one 25 Gb/s NIC) under 4 leaves with 2:1 oversubscription;
// `workload` is the job_trace workload's members after "type".
std::string cluster(int nodes, const std::string& workload) {
  return R"({"topology": {"nodes": [{"preset": "cloud-8xv100-25g", "count": )" +
         std::to_string(nodes) +
         R"(}], "fabric": {"type": "leaf_spine", "leaves": 4, "spines": 2, "oversubscription": 2}},
    "workload": {"type": "job_trace", "workloads": {"vgg": {"model": "vgg16", "batch_per_gpu": 32},
      "resnet": {"model": "resnet50", "batch_per_gpu": 32}}, )" +
         workload + "}}";
}

Scenario load(const std::string& text) {
  return load_scenario(Json::parse(text), "test.json", ".");
}

jobs::SharedClusterResult run(const Scenario& scenario) {
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  return jobs::simulate_shared_cluster(scenario, topology, router);
}

Scenario with_policy(Scenario scenario, const std::string& queue, const std::string& placement) {
  scenario.workload.job_trace.queue = queue;
  scenario.workload.job_trace.placement = placement;
  return scenario;
}

} // namespace

TEST_CASE("spread placement on a 2:1 oversubscribed fabric slows a communication-bound job") {
  const Scenario s = load(cluster(16, R"("jobs": [{"id": "a", "arrival_s": 0, "workload": "vgg",
                                           "gpus": 16, "iterations": 100}])"));
  const jobs::SharedClusterResult packed = run(with_policy(s, "fifo", "packed"));
  const jobs::SharedClusterResult spread = run(with_policy(s, "fifo", "spread"));
  CHECK(packed.jobs[0].nodes == 2);
  CHECK(packed.jobs[0].leaves == 1);
  CHECK(spread.jobs[0].nodes == 16);
  CHECK(spread.jobs[0].leaves == 4);
  CHECK(spread.jobs[0].run_s() > 1.5 * packed.jobs[0].run_s());
  // Alone on the cluster, a job runs at its alone rate: no slowdown.
  CHECK(packed.jobs[0].slowdown() == Approx(1));
  CHECK(packed.jobs[0].run_s() == Approx(100 * packed.jobs[0].alone_iteration_s));
}

TEST_CASE("jobs that share oversubscribed uplinks slow each other and recover when one ends") {
  // Two spread jobs cross every leaf; the short one ends first and the long one speeds up.
  const Scenario s = with_policy(
      load(cluster(16, R"("jobs": [{"id": "long", "arrival_s": 0, "workload": "vgg", "gpus": 16,
                                     "iterations": 400},
                                    {"id": "short", "arrival_s": 0, "workload": "vgg", "gpus": 16,
                                     "iterations": 50}])")),
      "fifo", "spread");
  const jobs::SharedClusterResult r = run(s);
  CHECK(std::max(r.jobs[0].slowdown(), r.jobs[1].slowdown()) > 1.05);
  // The long job's iteration time: slower while the short one runs, its alone time after.
  std::vector<double> long_rates;
  for (const jobs::RateSegment& seg : r.segments)
    if (seg.job == 0) long_rates.push_back(seg.iteration_s);
  REQUIRE(long_rates.size() == 2);
  CHECK(long_rates[0] > 1.05 * long_rates[1]);
  CHECK(long_rates[1] == r.jobs[0].alone_iteration_s);
  CHECK(r.jobs[0].iterations == Approx(400));
}

TEST_CASE("network-aware placement is never worse than packed on the bundled traces") {
  for (const char* file : {"jobs/shared-cluster-leaf-spine.json", "jobs/backfill-easy.json",
                           "jobs/placement-packed-vs-spread.json"}) {
    const Scenario s = load_scenario_file(kScenarios / file);
    for (const char* queue : {"fifo", "easy"}) {
      const jobs::SharedClusterResult packed = run(with_policy(s, queue, "packed"));
      const jobs::SharedClusterResult aware = run(with_policy(s, queue, "network_aware"));
      INFO(file << " " << queue);
      CHECK(aware.mean_completion_s <= packed.mean_completion_s * (1 + 1e-9));
      CHECK(aware.makespan_s <= packed.makespan_s * (1 + 1e-9));
    }
  }
}

TEST_CASE("backfilling shortens the mean wait of small jobs behind a large one") {
  const Scenario s = load_scenario_file(kScenarios / "jobs/backfill-easy.json");
  const jobs::SharedClusterResult fifo = run(with_policy(s, "fifo", "packed"));
  const jobs::SharedClusterResult easy = run(with_policy(s, "easy", "packed"));
  CHECK(easy.mean_queueing_s < 0.8 * fifo.mean_queueing_s);
  // EASY never delays the head (the 128-GPU job) past its reservation: it starts no later.
  const auto start = [](const jobs::SharedClusterResult& r, const std::string& id) {
    return std::find_if(r.jobs.begin(), r.jobs.end(), [&](auto& o) { return o.id == id; })->start_s;
  };
  CHECK(start(easy, "big-b") <= start(fifo, "big-b") * (1 + 1e-9));
  // The time-limited job runs exactly its limit.
  const auto capped =
      std::find_if(easy.jobs.begin(), easy.jobs.end(), [](auto& o) { return o.id == "capped"; });
  CHECK(capped->run_s() == Approx(600));
  CHECK(capped->iterations > 0);
}

TEST_CASE("a long trace costs one simulation per distinct group of co-running jobs") {
  std::string jobs = R"("jobs": [)";
  for (int i = 0; i < 40; ++i)
    jobs += std::string(i ? ", " : "") + R"({"id": "j)" + std::to_string(i) +
            R"(", "arrival_s": )" + std::to_string(i * 1000) +
            R"(, "workload": "resnet", "gpus": 8, "iterations": 100})";
  const jobs::SharedClusterResult r = run(load(cluster(4, jobs + "]")));
  CHECK(r.simulations == 1); // every job alone on the same node
  for (const jobs::JobOutcome& o : r.jobs) CHECK(o.queueing_s() == 0);
  // Utilisation: 8 of 32 GPUs busy while a job runs.
  CHECK(r.utilisation < 0.25);
}

TEST_CASE("a group's sets of jobs sharing no link or node are simulated apart, with the same "
          "figures") {
  // A 12-GPU job on two nodes, and 1-GPU and 2-GPU jobs arriving beside it on its second node
  // and on other nodes: they share its group (a node) but no link, and the 1-GPU ones no
  // transfer at all.
  std::string jobs = R"("jobs": [{"id": "big", "arrival_s": 0, "workload": "vgg", "gpus": 12,
                                  "iterations": 400})";
  for (int i = 0; i < 12; ++i)
    jobs += R"(, {"id": "s)" + std::to_string(i) + R"(", "arrival_s": )" +
            std::to_string(3 + 7 * i) + R"(, "workload": "resnet", "gpus": )" +
            std::to_string(i % 3 == 2 ? 2 : 1) + R"(, "iterations": )" +
            std::to_string(60 + 45 * (i % 4)) + "}";
  const Scenario s = load(cluster(8, jobs + "]"));
  const topo::Topology topology = topo::build_topology(s.topology);
  topo::Router router(topology);
  jobs::SharedClusterOptions whole;
  whole.split_by_links = false;
  const jobs::SharedClusterResult apart = jobs::simulate_shared_cluster(s, topology, router);
  const jobs::SharedClusterResult together =
      jobs::simulate_shared_cluster(s, topology, router, whole);
  REQUIRE(apart.jobs.size() == together.jobs.size());
  for (std::size_t j = 0; j < apart.jobs.size(); ++j) {
    const jobs::JobOutcome &a = apart.jobs[j], &b = together.jobs[j];
    INFO(a.id);
    CHECK(a.placement == b.placement);
    CHECK(a.start_s == b.start_s);
    CHECK(a.end_s == b.end_s);
    CHECK(a.mean_iteration_s == b.mean_iteration_s);
    CHECK(a.alone_iteration_s == b.alone_iteration_s);
  }
  REQUIRE(apart.segments.size() == together.segments.size());
  for (std::size_t k = 0; k < apart.segments.size(); ++k) {
    CHECK(apart.segments[k].job == together.segments[k].job);
    CHECK(apart.segments[k].from_s == together.segments[k].from_s);
    CHECK(apart.segments[k].iteration_s == together.segments[k].iteration_s);
  }
  CHECK(apart.makespan_s == together.makespan_s);
  // The big job's set is reused whichever small jobs run beside it.
  CHECK(apart.simulations < together.simulations);
}

TEST_CASE("placements give the GPU count asked, on free GPUs, in the policy's shape") {
  const Scenario s = load(cluster(16, R"("jobs": [{"id": "a", "arrival_s": 0, "workload": "vgg",
                                           "gpus": 8, "iterations": 1}])"));
  const topo::Topology topology = topo::build_topology(s.topology);
  const jobs::ClusterView view = jobs::view_of(topology);
  CHECK(view.leaves == 4);
  CHECK(std::all_of(view.oversubscribed.begin(), view.oversubscribed.end(),
                    [](char o) { return o == 1; }));
  jobs::ClusterState state{&view, std::vector<char>(128, 1), {}};
  for (int r = 0; r < 4; ++r) state.free[std::size_t(r)] = 0; // half of node 0 busy
  for (const char* name : {"packed", "spread", "rail_aligned", "network_aware"}) {
    const auto gpus = jobs::make_placement(name)->place(state, 12);
    REQUIRE(gpus);
    CHECK(gpus->size() == 12);
    for (int r : *gpus) CHECK(state.free[std::size_t(r)]);
  }
  // rail_aligned: 12 = 2 nodes x 6 GPUs on the same local indices (node 0, half busy, cannot).
  const auto rail = *jobs::RailAlignedPlacement().place(state, 12);
  std::map<int, std::vector<int>> locals;
  for (int r : rail)
    locals[view.node_of_gpu[std::size_t(r)]].push_back(view.local_of_gpu[std::size_t(r)]);
  CHECK(locals.size() == 2);
  CHECK(locals.count(0) == 0);
  for (const auto& [node, local] : locals) CHECK(local == locals.begin()->second);
  // packed: best fit, the half-free node 0 takes a 4-GPU job.
  const auto small = *jobs::PackedPlacement().place(state, 4);
  CHECK(small == std::vector<int>{4, 5, 6, 7});
}

TEST_CASE("bad traces are errors that name the place and the fix") {
  auto error = [](const std::string& jobs) {
    return error_of([&] { (void)load(cluster(4, jobs)); });
  };
  const std::string one = R"({"id": "a", "arrival_s": 0, "workload": "vgg", "gpus": 8,
                              "iterations": 10})";
  CHECK_THAT(error(R"("jobs": [)" + one + ", " + one + "]"),
             Catch::Contains("/workload/jobs/1/id") && Catch::Contains("already used") &&
                 Catch::Contains("/workload/jobs/0"));
  CHECK_THAT(error(R"("jobs": [{"id": "a", "arrival_s": 0, "workload": "vgg", "gpus": 64,
                                "iterations": 10}])"),
             Catch::Contains("/workload/jobs/0/gpus") && Catch::Contains("cluster has 32") &&
                 Catch::Contains("add nodes"));
  CHECK_THAT(error(R"("jobs": [{"id": "a", "arrival_s": -5, "workload": "vgg", "gpus": 8,
                                "iterations": 10}])"),
             Catch::Contains("/workload/jobs/0/arrival_s") && Catch::Contains("negative"));
  CHECK_THAT(error(R"("jobs": [{"id": "a", "arrival_s": 0, "workload": "vgg", "gpus": 8,
                                "time_limit_s": -60}])"),
             Catch::Contains("/workload/jobs/0/time_limit_s") && Catch::Contains("negative"));
  CHECK_THAT(error(R"("jobs": [{"id": "a", "arrival_s": 0, "workload": "vggg", "gpus": 8,
                                "iterations": 10}])"),
             Catch::Contains("/workload/jobs/0/workload") && Catch::Contains("vgg"));
  // An llm_training workload lays itself out over the whole cluster: not placeable in a trace.
  CHECK_THAT(error(R"("jobs": [{"id": "a", "arrival_s": 0, "gpus": 8, "iterations": 10,
                                "workload": {"type": "llm_training", "model": "llama2-70b"}}])"),
             Catch::Contains("/workload/jobs/0/workload/type") &&
                 Catch::Contains("llm_training workload cannot be placed"));
  CHECK_THAT(error(R"("jobs": [{"id": "a", "arrival_s": 0, "workload": "vgg", "gpus": 8}])"),
             Catch::Contains("/workload/jobs/0") && Catch::Contains("iterations"));
  CHECK_THAT(error(R"("jobs": [{"id": "a", "arrival_s": 0, "workload": "vgg", "gpus": 8,
                                "iterations": 10, "priority": 3}])"),
             Catch::Contains("priority"));
}

TEST_CASE("a CSV trace loads like the same jobs inline, and its errors name file and line") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "ddlsim_jobs_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "t.csv") << "id,arrival_s,workload,gpus,iterations\na,0,vgg,8,10\n"
                                  "b,5,resnet,16,20\n";
  std::ofstream(dir / "dup.csv") << "id,arrival_s,workload,gpus,iterations\na,0,vgg,8,10\n"
                                    "a,5,resnet,16,20\n";
  auto with_trace = [&](const std::string& file) {
    return load_scenario(Json::parse(cluster(4, R"("trace": ")" + file + R"(")")), "test.json",
                         dir);
  };
  const Scenario csv = with_trace("t.csv");
  const Scenario inline_jobs = load(cluster(4, R"("jobs": [
      {"id": "a", "arrival_s": 0, "workload": "vgg", "gpus": 8, "iterations": 10},
      {"id": "b", "arrival_s": 5, "workload": "resnet", "gpus": 16, "iterations": 20}])"));
  const jobs::SharedClusterResult a = run(csv);
  const jobs::SharedClusterResult b = run(inline_jobs);
  REQUIRE(a.jobs.size() == 2);
  CHECK(a.makespan_s == b.makespan_s);
  CHECK(a.jobs[1].end_s == b.jobs[1].end_s);
  CHECK_THAT(error_of([&] { (void)with_trace("dup.csv"); }),
             Catch::Contains("dup.csv:3") && Catch::Contains("already used"));
}
