// The contention cache's relabelling under fabric symmetry (jobs/symmetry.hpp) is exact: a mix
// of jobs placed on relabelled nodes simulates to byte-identical times, and the cache only
// relabels where that holds.
#include "ddlsim/jobs/shared_cluster.hpp"
#include "ddlsim/jobs/symmetry.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/sim/engine.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "ddlsim/topologies/cluster_spec.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace ddlsim;

namespace {

// 16 cloud V100 nodes (8 GPUs, one 25 Gb/s NIC) under 4 leaves (4 nodes each), 2:1, 2 spines.
Scenario cluster(const std::string& engine, const std::string& jobs = R"("jobs": [
    {"id": "a", "arrival_s": 0, "workload": "vgg", "gpus": 8, "iterations": 10}])") {
  return load_scenario(
      Json::parse(R"({"topology": {"nodes": [{"preset": "cloud-8xv100-25g", "count": 16}],
        "fabric": {"type": "leaf_spine", "leaves": 4, "spines": 2, "oversubscription": 2}},
        "workload": {"type": "job_trace", "workloads": {
          "vgg": {"model": "vgg16", "batch_per_gpu": 32},
          "resnet": {"model": "resnet50", "batch_per_gpu": 32}}, )" +
                  jobs + R"(}, "engine": {"type": ")" + engine + R"("}})"),
      "test.json", ".");
}

// GPUs `first`.. of each node in `nodes`, `per_node` of them.
std::vector<int> on(const std::vector<int>& nodes, int per_node, int first = 0) {
  std::vector<int> out;
  for (int n : nodes)
    for (int g = 0; g < per_node; ++g) out.push_back(n * 8 + first + g);
  return out;
}

// The iteration times of the jobs (template workload names) on those GPUs, simulated together
// directly (no cache).
std::vector<Picoseconds>
simulate(const Scenario& s, const topo::Topology& topology, topo::Router& router,
         const std::vector<std::pair<std::string, std::vector<int>>>& jobs) {
  sim::TrainingIteration iteration;
  const std::vector<int> node_of_gpu = topo::algorithm_node_of_gpu(s.topology);
  for (const auto& [name, gpus] : jobs) {
    models::JobSpec job = [&] {
      const JobTraceWorkload& w = s.workload.job_trace;
      for (const JobTraceWorkload::Template& t : w.templates)
        if (w.workload_names[t.workload] == name) return t.job;
      FAIL("no template " << name);
      return models::JobSpec{};
    }();
    job.gpus = gpus;
    job.node_of_gpu.clear();
    for (int r : gpus) job.node_of_gpu.push_back(node_of_gpu[std::size_t(r)]);
    job.name = "job" + std::to_string(iteration.jobs.size());
    iteration.jobs.push_back(std::move(job));
  }
  sim::CommonOptions options;
  options.seed = s.seed;
  const sim::EngineResult r = sim::simulate(iteration, topology, router, s.engine, options);
  std::vector<Picoseconds> out;
  for (const models::JobIteration& j : r.jobs) out.push_back(j.time);
  return out;
}

} // namespace

TEST_CASE("the same mix placed on relabelled nodes gives byte-identical job times") {
  // 8-GPU templates only: every job below has 8 GPUs. Two ResNet-50s (a quarter of VGG-16's
  // gradient bytes: the same placements, a quarter of the flows and packets to simulate).
  for (const char* engine : {"analytic", "flow", "packet"}) {
    INFO(engine);
    const std::string big = "resnet";
    const Scenario s = cluster(engine, R"("jobs": [
        {"id": "a", "arrival_s": 0, "workload": "vgg", "gpus": 8, "iterations": 10},
        {"id": "b", "arrival_s": 0, "workload": "resnet", "gpus": 8, "iterations": 10}])");
    const topo::Topology topology = topo::build_topology(s.topology);
    topo::Router router(topology);
    jobs::FabricSymmetry symmetry(topology, router, topo::algorithm_node_of_gpu(s.topology));
    // VGG over two nodes (4 GPUs each) beside ResNet-50 on 4 GPUs of each of two nodes, sharing
    // the second node: under leaf 0, then relabelled within leaf 2 (nodes 8..11) and onto
    // other nodes of leaf 1 in the same order.
    const std::vector<std::vector<int>> node_sets = {{0, 1, 2}, {8, 10, 11}, {5, 6, 7}};
    std::vector<std::vector<Picoseconds>> times;
    std::vector<std::vector<std::vector<int>>> canonical;
    for (const std::vector<int>& n : node_sets) {
      const std::vector<int> vgg = on({n[0], n[1]}, 4);
      std::vector<int> resnet = on({n[1]}, 4, 4);
      for (int r : on({n[2]}, 4)) resnet.push_back(r);
      times.push_back(simulate(s, topology, router, {{big, vgg}, {"resnet", resnet}}));
      const auto c = symmetry.canonical({&vgg, &resnet});
      REQUIRE(c);
      canonical.push_back(*c);
    }
    CHECK(canonical[1] == canonical[0]);
    CHECK(canonical[2] == canonical[0]);
    CHECK(canonical[0][0] == on({0, 1}, 4)); // onto leaf 0's first nodes
    CHECK(times[1] == times[0]);
    CHECK(times[2] == times[0]);
  }
}

TEST_CASE("a job whose flows ECMP spreads over spines is not relabelled") {
  const Scenario s = cluster("analytic");
  const topo::Topology topology = topo::build_topology(s.topology);
  topo::Router router(topology);
  jobs::FabricSymmetry symmetry(topology, router, topo::algorithm_node_of_gpu(s.topology));
  // Nodes 3 and 4 hang off leaves 0 and 1: their flows take one of 2 spines by a hash of the
  // global ranks, so moving them could change which flows meet.
  const std::vector<int> crossing = on({3, 4}, 8);
  CHECK_FALSE(symmetry.canonical({&crossing}));
  // Already canonical placements stay as they are.
  const std::vector<int> first = on({0}, 8);
  CHECK(symmetry.canonical({&first}) == std::vector<std::vector<int>>{first});
  // Leaves in order onto the first leaves, nodes in order onto their leaf's first nodes: the
  // order of the group's nodes is kept (node 1 of leaf 0 to node 0, node 9 of leaf 2 to node 4).
  const std::vector<int> high = on({9}, 4), low = on({1}, 4);
  CHECK(symmetry.canonical({&high, &low}) == std::vector<std::vector<int>>{on({4}, 4), on({0}, 4)});
}

TEST_CASE("jobs alone on interchangeable nodes cost one simulation") {
  // Eight 8-GPU jobs at once on 8 free nodes of 2 leaves: each alone on its node (no link in
  // common), every placement the same up to relabelling.
  std::string jobs = R"("jobs": [)";
  for (int i = 0; i < 8; ++i)
    jobs += std::string(i ? ", " : "") + R"({"id": "j)" + std::to_string(i) +
            R"(", "arrival_s": 0, "workload": "resnet", "gpus": 8, "iterations": 100})";
  const Scenario s = cluster("analytic", jobs + "]");
  const topo::Topology topology = topo::build_topology(s.topology);
  topo::Router router(topology);
  const jobs::SharedClusterResult r = jobs::simulate_shared_cluster(s, topology, router);
  CHECK(r.simulations == 1);
  for (const jobs::JobOutcome& o : r.jobs) {
    CHECK(o.alone_iteration_s == r.jobs[0].alone_iteration_s);
    CHECK(o.end_s == r.jobs[0].end_s);
  }
}
