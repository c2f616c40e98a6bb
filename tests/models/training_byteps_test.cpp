// BytePS as a training framework ("framework": {"type": "byteps"}): gradients cut into
// BYTEPS_PARTITION_BYTES partitions, each pushed and pulled by the byteps generator (node-local
// reduce, summation servers on every node) as soon as its layer is ready; and its defining effect
// against a parameter server whose servers are GPUs and whose every GPU pushes through its NIC.
#include "ddlsim/collectives/reference.hpp"
#include "ddlsim/sim/engine.hpp"
#include "error_of.hpp"
#include "training_harness.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::models::test;

namespace {

JobIteration run_engine(const std::string& text) {
  const Scenario scenario = load_text(text);
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  return sim::simulate(sim::TrainingIteration{scenario.workload.training.jobs, 1}, topology, router,
                       scenario.engine, sim::CommonOptions{})
      .jobs.at(0);
}

const std::string kVgg = R"("model": "vgg16", "batch_per_gpu": 32, )";

} // namespace

TEST_CASE("byteps: partitions of BYTEPS_PARTITION_BYTES pushed with the byteps generator") {
  const Scenario s = load_text(cluster(2, 25, kVgg + R"("framework": {"type": "byteps"})", 4));
  const JobSpec& job = s.workload.training.jobs.at(0);
  CHECK(job.algorithm == "byteps"); // not NCCL's choice: BytePS's own push/pull
  CHECK(job.framework.partition_bytes == 4'096'000);
  const TrainingPlan plan = plan_training(s.workload.training.jobs);
  std::uint64_t parameters = 0;
  std::size_t expected = 0;
  for (const Layer& layer : job.model->layers)
    expected += (layer.parameters * 4 + 4'096'000 - 1) / 4'096'000; // fp32: 1,024,000 each
  for (const PlannedCollective& c : plan.jobs[0].collectives) {
    CHECK(c.call.algorithm == "byteps");
    CHECK(c.call.bytes <= 4'096'000);
    parameters += c.parameters;
  }
  CHECK(plan.jobs[0].collectives.size() == expected);
  CHECK(parameters == job.model->parameters());
  // No forward gates: the optimizer waits for every push/pull (a full barrier, as BytePS's
  // optimizer step synchronizes all handles).
  CHECK(plan.jobs[0].gate_collective.empty());
}

TEST_CASE("byteps: the iteration all-reduces the whole gradient buffer") {
  auto tiny = std::make_shared<Model>();
  tiny->name = "tiny";
  for (int l = 0; l < 5; ++l)
    tiny->layers.push_back(
        {"l" + std::to_string(l), LayerKind::linear, std::uint64_t(40 + 13 * l), 1e3, 2e3, 64});
  tiny->total_parameters = tiny->parameters();
  JobSpec job;
  job.model = tiny;
  job.gpus = {0, 1, 2, 3, 4, 5};
  job.node_of_gpu = {0, 0, 1, 1, 2, 2};
  job.gpu.assign(6, find_gpu("V100", "x"));
  job.speed.assign(6, 1.0);
  job.batch.assign(6, 4);
  job.framework.type = Framework::byteps;
  job.framework.partition_bytes = 120; // 30 fp32 parameters: every layer cut in 2 or more
  job.algorithm = "byteps";
  auto plan = std::make_shared<const TrainingPlan>(plan_training({job}));
  REQUIRE(plan->jobs[0].collectives.size() > 5);
  const coll::ReferenceResult result = coll::run_reference(iteration_schedule(plan));
  INFO(result.error);
  CHECK(result.ok);
}

TEST_CASE("byteps: faster than a GPU parameter server when the NICs are the bottleneck") {
  // 4 nodes of 4 GPUs on 10 Gb/s: the GPU servers' NICs carry every worker's push and pull,
  // while BytePS reduces inside each node first and spreads its servers over the nodes.
  const JobIteration byteps =
      run_engine(cluster(4, 10, kVgg + R"("framework": {"type": "byteps"})", 4));
  const JobIteration ps = run_engine(
      cluster(4, 10, kVgg + R"("framework": {"type": "ddp"}, "parameter_servers": 4)", 4));
  CHECK(byteps.time < ps.time);
  CHECK(byteps.max_communication < ps.max_communication);
}

TEST_CASE("byteps: a conflicting algorithm and a misplaced partition size name the fix") {
  CHECK_THAT(test_support::error_of([] {
               (void)load_text(cluster(
                   2, 25, kVgg + R"("framework": {"type": "byteps"}, "algorithm": "ring")", 4));
             }),
             Catch::Contains("byteps") && Catch::Contains("remove \"algorithm\""));
  CHECK_THAT(test_support::error_of([] {
               (void)load_text(cluster(
                   2, 25, kVgg + R"("framework": {"type": "ddp", "partition_bytes": 1000})", 4));
             }),
             Catch::Contains("partition_bytes") && Catch::Contains("\"byteps\""));
}
