#include "ddlsim/collectives/algorithm.hpp"
#include "ddlsim/collectives/reference.hpp"
#include "ddlsim/core/input_error.hpp"
#include "training_harness.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::models::test;

namespace {

const std::string kResnet = R"("model": "resnet50", "batch_per_gpu": 32)";

std::string with(const std::string& framework) {
  return kResnet + R"(, "framework": )" + framework;
}

} // namespace

TEST_CASE("with communication off the iteration is exactly the sum of the compute steps") {
  for (int nodes : {1, 4}) {
    const TrainingRun run = run_training(cluster(nodes, 25, kResnet + R"(, "communicate": false)"));
    REQUIRE(run.jobs.size() == 1);
    const JobIteration& it = run.jobs.front();
    const ComputeProfile& profile = run.plan->jobs[0].profiles[0];
    Picoseconds sum = 0;
    for (const ComputeStep& step : profile.steps) sum += step.duration;
    CHECK(it.time == sum);
    CHECK(it.collectives == 0);
    CHECK(it.max_exposed == 0);
    CHECK(it.max_idle == 0);
    CHECK(it.scaling_efficiency == Approx(1.0).epsilon(1e-12));
  }
}

TEST_CASE("overlap: exposed communication is never negative and never above no-overlap") {
  // The ring: a bucket's join takes the last receive in program order as its last to end, which
  // NCCL's pipelined chunks can break by a fraction of a microsecond.
  const std::string ring = R"(, "algorithm": "ring")";
  for (double nic : {1.0, 10.0, 100.0}) {
    const JobIteration ddp =
        run_training(cluster(8, nic, with(R"({"type": "ddp"})") + ring)).jobs[0];
    const JobIteration none =
        run_training(cluster(8, nic, with(R"({"type": "none"})") + ring)).jobs[0];
    INFO("NIC " << nic << " Gb/s");
    for (const GpuIteration& g : ddp.gpus) {
      CHECK(g.exposed >= 0);
      CHECK(g.idle >= 0);
      CHECK(g.exposed <= g.communication);
      CHECK(g.compute + g.exposed + g.idle == ddp.time);
    }
    CHECK(ddp.max_exposed <= none.max_exposed);
    CHECK(ddp.time <= none.time);
    // Without overlap nothing hides: exposed is all the communication.
    CHECK(none.max_exposed == none.max_communication);
  }
}

TEST_CASE("DDP bucket cap: the number of collectives follows PyTorch's bucket assignment") {
  auto collectives = [](const std::string& framework) {
    return run_training(cluster(2, 25, with(framework))).jobs[0].collectives;
  };
  // ResNet-50 fp32 = 97.5 MiB of gradients. Everything in the first bucket: one collective.
  CHECK(collectives(R"({"type": "ddp", "first_bucket": "1GiB"})") == 1);
  // 1 MiB first bucket, then one bucket holding the rest.
  CHECK(collectives(R"({"type": "ddp", "bucket_cap": "1GiB"})") == 2);
  CHECK(collectives(R"({"type": "none"})") == 1);
  // Monotonic: a bigger cap never makes more collectives.
  int previous = 1 << 30;
  for (const char* cap : {"1MiB", "4MiB", "25MiB", "50MiB", "100MiB"}) {
    const int count = collectives(std::string(R"({"type": "ddp", "bucket_cap": ")") + cap + "\"}");
    CHECK(count <= previous);
    previous = count;
  }
  // With a 1 MiB cap every bucket is closed once it reaches 1 MiB; count them independently.
  const Model model = load_model("resnet50", ".", "x");
  int expected = 0;
  std::uint64_t open = 0;
  for (auto it = model.layers.rbegin(); it != model.layers.rend(); ++it) {
    if (it->parameters == 0) continue;
    open += it->parameters * 4;
    if (open >= (1u << 20)) ++expected, open = 0;
  }
  if (open > 0) ++expected;
  CHECK(collectives(R"({"type": "ddp", "bucket_cap": "1MiB"})") == expected);
}

TEST_CASE("fp16 gradients halve the bytes all-reduced and sent") {
  const TrainingRun fp32 = run_training(cluster(4, 25, with(R"({"type": "ddp"})")));
  const TrainingRun fp16 =
      run_training(cluster(4, 25, with(R"({"type": "ddp"}, "precision": "fp16")")));
  CHECK(fp32.jobs[0].gradient_bytes == 25'557'032ull * 4);
  CHECK(fp16.jobs[0].gradient_bytes == 25'557'032ull * 2);
  // Same buckets by bytes would differ; compare with one bucket each for the wire bytes.
  const TrainingRun one32 = run_training(cluster(4, 25, with(R"({"type": "none"})")));
  const TrainingRun one16 =
      run_training(cluster(4, 25, with(R"({"type": "none"}, "precision": "fp16")")));
  CHECK(one16.timing.bytes_sent * 2 == one32.timing.bytes_sent);
  CHECK(one16.jobs[0].max_compute < one32.jobs[0].max_compute); // tensor cores
}

TEST_CASE("top-k at density d sends k (index and value) pairs per bucket to every other rank") {
  const int p = 4;
  for (double density : {0.001, 0.01, 0.1}) {
    const TrainingRun run = run_training(
        cluster(p, 25,
                with(R"({"type": "ddp"}, "compression": {"type": "topk", "density": )" +
                     std::to_string(density) + "}")));
    std::uint64_t expected = 0;
    for (const PlannedCollective& c : run.plan->jobs[0].collectives) {
      CHECK(c.call.algorithm == "topk");
      const std::uint64_t n = c.call.bytes / 4;
      const auto k = static_cast<std::uint64_t>(std::ceil(density * static_cast<double>(n)));
      expected += std::uint64_t(p) * (p - 1) * k * (4 + 4); // ring all-gather of the pairs
    }
    INFO("density " << density);
    CHECK(run.timing.bytes_sent == expected);
  }
}

TEST_CASE("scaling efficiency rises with NIC bandwidth and with the per-GPU batch") {
  double previous = 0;
  for (double nic : {1.0, 5.0, 25.0, 100.0}) {
    const double e =
        run_training(cluster(8, nic, with(R"({"type": "ddp"})"))).jobs[0].scaling_efficiency;
    INFO("NIC " << nic << " Gb/s: efficiency " << e);
    CHECK(e > previous);
    CHECK(e <= 1.0);
    previous = e;
  }
  previous = 0;
  for (int batch : {8, 16, 32, 64, 128}) {
    const double e =
        run_training(
            cluster(8, 5, R"("model": "resnet50", "batch_per_gpu": )" + std::to_string(batch)))
            .jobs[0]
            .scaling_efficiency;
    INFO("batch " << batch << ": efficiency " << e);
    CHECK(e > previous);
    previous = e;
  }
}

TEST_CASE(
    "heterogeneous: a slow GPU slows the synchronous step and speed-balanced batches recover") {
  const std::string base =
      R"("model": "resnet50", "batch_per_gpu": 64, "framework": {"type": "ddp"})";
  const JobIteration even = run_training(cluster(4, 100, base)).jobs[0];
  const std::string slow = base + R"(, "speed": [1, 1, 1, 0.5])";
  const JobIteration unbalanced = run_training(cluster(4, 100, slow)).jobs[0];
  const TrainingRun balanced_run = run_training(cluster(4, 100, slow + R"(, "balance": true)"));
  const JobIteration balanced = balanced_run.jobs[0];
  CHECK(unbalanced.time > even.time * 1.5); // the slow GPU needs twice as long
  // The fast GPUs wait for the slow one.
  CHECK(unbalanced.gpus[0].idle > unbalanced.gpus[3].idle);
  CHECK(balanced.time < unbalanced.time);
  CHECK(balanced.samples_per_second > unbalanced.samples_per_second * 1.2);
  CHECK(balanced.samples == unbalanced.samples); // same global batch
  const std::vector<int>& batch = balanced_run.plan->jobs[0].spec.batch;
  CHECK(batch[3] < batch[0]);
  CHECK(batch[0] + batch[1] + batch[2] + batch[3] == 256);
}

TEST_CASE("the composed iteration computes the all-reduce of the whole gradient buffer") {
  // A small user model so that the reference executor moves real numbers quickly; buckets of a
  // few hundred bytes, each a ring, hierarchical or tree all-reduce re-emitted at its offsets.
  auto tiny = std::make_shared<Model>();
  tiny->name = "tiny";
  for (int l = 0; l < 7; ++l)
    tiny->layers.push_back(
        {"l" + std::to_string(l), LayerKind::linear, std::uint64_t(37 + 11 * l), 1e3, 2e3, 64});
  tiny->total_parameters = tiny->parameters();
  for (const char* algorithm : {"ring", "hierarchical", "double_binary_tree", "rabenseifner"}) {
    for (int channels : {1, 2}) {
      if (channels == 2 && std::string(algorithm) == "rabenseifner") continue;
      JobSpec job;
      job.model = tiny;
      job.gpus = {0, 1, 2, 3, 4, 5};
      job.node_of_gpu = {0, 0, 0, 1, 1, 1};
      job.gpu.assign(6, find_gpu("V100", "x"));
      job.speed.assign(6, 1.0);
      job.batch.assign(6, 4);
      job.algorithm = algorithm;
      job.params.channels = channels;
      job.framework.first_bucket_bytes = 200;
      job.framework.bucket_cap_bytes = 300;
      auto plan = std::make_shared<const TrainingPlan>(plan_training({job}));
      REQUIRE(plan->jobs[0].collectives.size() > 2);
      const coll::Schedule schedule = iteration_schedule(plan);
      const coll::CollectiveCall& call = plan->jobs[0].collectives[0].call;
      CHECK(schedule.channels() ==
            1 + coll::find_algorithm(call.op, call.algorithm)->channels(call));
      const coll::ReferenceResult result = coll::run_reference(schedule);
      INFO(algorithm << " channels " << channels << ": " << result.error);
      CHECK(result.ok);
    }
  }
}

TEST_CASE("two jobs on disjoint GPUs run together and interfere only through the fabric") {
  // Two 4-GPU jobs; their nodes share one switch. Alone, job 0 has the fabric to itself.
  const std::string job = R"({"model": "resnet50", "batch_per_gpu": 32, "gpus": 4})";
  const JobIteration alone = run_training(cluster(8, 10, R"("jobs": [)" + job + "]")).jobs[0];
  const TrainingRun both = run_training(cluster(8, 10, R"("jobs": [)" + job + ", " + job + "]"));
  REQUIRE(both.jobs.size() == 2);
  CHECK(both.jobs[0].gpus.front().rank == 0);
  CHECK(both.jobs[1].gpus.front().rank == 4);
  // Each node has its own NIC on a non-blocking switch: no shared link, so no slowdown.
  CHECK(both.jobs[0].time == alone.time);
  CHECK(both.jobs[1].time == alone.time);
}

TEST_CASE("two jobs whose GPUs share NICs slow each other down") {
  // 4 nodes of 2 GPUs behind one NIC each: job 0 on the first GPU of every node, job 1 on the
  // second, so every NIC carries both jobs' all-reduces.
  const std::string a = R"({"model": "resnet50", "batch_per_gpu": 32, "gpus": [0, 2, 4, 6]})";
  const std::string b = R"({"model": "resnet50", "batch_per_gpu": 32, "gpus": [1, 3, 5, 7]})";
  const JobIteration alone = run_training(cluster(4, 10, R"("jobs": [)" + a + "]", 2)).jobs[0];
  const TrainingRun both = run_training(cluster(4, 10, R"("jobs": [)" + a + ", " + b + "]", 2));
  CHECK(both.jobs[0].time > alone.time);
  CHECK(both.jobs[0].max_communication > alone.max_communication);
  CHECK(both.jobs[1].time > alone.time);
}

TEST_CASE("DLRM: the embedding tables are exchanged by all-to-all and the MLPs all-reduced") {
  const int p = 4;
  const TrainingRun run = run_training(cluster(p, 25, R"("model": "dlrm", "batch_per_gpu": 256,
                                      "framework": {"type": "none"})"));
  const JobPlan& job = run.plan->jobs[0];
  // Stream order: forward all-to-all, backward all-to-all, then (no overlap) the all-reduce.
  REQUIRE(job.collectives.size() == 3);
  CHECK(job.collectives[0].call.op == coll::Op::all_to_all);
  CHECK(job.collectives[1].call.op == coll::Op::all_to_all);
  CHECK(job.collectives[2].call.op == coll::Op::all_reduce);
  CHECK(job.gradient_bytes == 475'985ull * 4); // the dense MLPs only
  // 256 samples x 26 tables x 16 floats per GPU, each GPU keeping its own quarter.
  const std::uint64_t exchange = 256ull * 26 * 16 * 4;
  CHECK(job.collectives[0].call.bytes == exchange);
  // Wire bytes: two all-to-alls ((p-1)/p of the buffer leaves each GPU) and one flat ring
  // (2(p-1)/p of the gradients per GPU).
  CHECK(run.timing.bytes_sent ==
        p * (2 * exchange * (p - 1) / p + 2 * (p - 1) * (475'985ull * 4 / p)));
  // The interaction layer waits for the forward exchange: communication is exposed.
  CHECK(run.jobs[0].max_exposed > 0);
}

TEST_CASE("Horovod fusion: a longer cycle or a bigger threshold fuses into fewer all-reduces") {
  auto collectives = [](const std::string& framework) {
    return run_training(cluster(4, 25, with(framework))).jobs[0].collectives;
  };
  const int fast = collectives(R"({"type": "horovod", "cycle_time_ms": 0.5})");
  const int slow = collectives(R"({"type": "horovod", "cycle_time_ms": 20})");
  CHECK(slow < fast);
  // One cycle longer than the whole backward pass: everything is ready at the first tick and
  // fused into groups of at most the threshold (97.5 MiB of ResNet-50 gradients).
  CHECK(collectives(R"({"type": "horovod", "cycle_time_ms": 1000})") == 2); // 64 MiB threshold
  CHECK(collectives(R"({"type": "horovod", "cycle_time_ms": 1000,
                        "fusion_threshold": "128MiB"})") == 1);
  const JobIteration h = run_training(cluster(4, 25, with(R"({"type": "horovod"})"))).jobs[0];
  CHECK(h.max_exposed >= 0);
  CHECK(h.max_exposed <=
        run_training(cluster(4, 25, with(R"({"type": "none"})"))).jobs[0].max_exposed);
}

TEST_CASE("accumulation steps repeat the compute and communicate once") {
  const TrainingRun one = run_training(cluster(4, 5, with(R"({"type": "ddp"})")));
  const TrainingRun two =
      run_training(cluster(4, 5, with(R"({"type": "ddp", "accumulation_steps": 2})")));
  CHECK(two.jobs[0].samples == 2 * one.jobs[0].samples);
  CHECK(two.jobs[0].collectives == one.jobs[0].collectives);
  CHECK(two.timing.bytes_sent == one.timing.bytes_sent);
  CHECK(two.jobs[0].max_compute > one.jobs[0].max_compute * 3 / 2);
  CHECK(two.jobs[0].scaling_efficiency > one.jobs[0].scaling_efficiency);
}

TEST_CASE("GradientFlow lazy all-reduce: a bigger threshold means fewer all-reduces") {
  int previous = 1 << 30;
  for (const char* threshold : {"2MiB", "8MiB", "32MiB", "128MiB"}) {
    const int count = run_training(cluster(4, 25,
                                           with(std::string(R"({"type": "gradientflow",
                                                   "lazy_threshold": ")") +
                                                threshold + "\"}")))
                          .jobs[0]
                          .collectives;
    INFO(threshold);
    CHECK(count < previous);
    previous = count;
  }
  CHECK(previous == 1); // 128 MiB holds all 97.5 MiB
}

TEST_CASE("dedicated parameter servers run on their own GPUs and the iteration stays correct") {
  auto tiny = std::make_shared<Model>();
  tiny->name = "tiny";
  for (int l = 0; l < 5; ++l)
    tiny->layers.push_back(
        {"l" + std::to_string(l), LayerKind::linear, std::uint64_t(40 + 8 * l), 1e3, 2e3, 64});
  tiny->total_parameters = tiny->parameters();
  JobSpec job;
  job.model = tiny;
  job.gpus = {0, 1, 2, 3};
  job.server_gpus = {4, 5};
  job.node_of_gpu = {0, 0, 1, 1};
  job.gpu.assign(4, find_gpu("V100", "x"));
  job.speed.assign(4, 1.0);
  job.batch.assign(4, 4);
  job.algorithm = "parameter_server";
  job.params.servers = 2;
  job.params.dedicated_servers = true;
  job.framework.first_bucket_bytes = 200;
  job.framework.bucket_cap_bytes = 300;
  auto plan = std::make_shared<const TrainingPlan>(plan_training({job}));
  REQUIRE(plan->jobs[0].collectives.size() > 2);
  CHECK(plan->ranks == 6);
  const coll::ReferenceResult result = coll::run_reference(iteration_schedule(plan));
  INFO(result.error);
  CHECK(result.ok);
  // From a scenario: the servers take the GPUs after the workers'.
  const TrainingRun run = run_training(cluster(6, 25, R"("model": "resnet50", "batch_per_gpu": 16,
      "gpus": 4, "parameter_servers": 2, "params": {"dedicated_servers": true})"));
  CHECK(run.plan->jobs[0].spec.server_gpus == std::vector<int>{4, 5});
  CHECK(run.jobs[0].gpus.size() == 4);
  CHECK(run.jobs[0].time > 0);
  // Without a free GPU for them: an error naming the key.
  CHECK_THROWS_WITH(load_text(cluster(4, 25, R"("model": "resnet50", "batch_per_gpu": 16,
      "parameter_servers": 2, "params": {"dedicated_servers": true})")),
                    Catch::Contains("/workload/params/dedicated_servers"));
}

TEST_CASE("Adasum adds its dot products to every reduction of recursive doubling") {
  const std::string base = with(R"({"type": "none"}, "algorithm": "recursive_doubling")");
  const TrainingRun sum = run_training(cluster(8, 25, base));
  const TrainingRun adasum = run_training(cluster(8, 25, base + R"(, "adasum": true)"));
  CHECK(adasum.timing.bytes_sent == sum.timing.bytes_sent);
  // One dot-product step per receive-reduce: log2(8) = 3 per GPU for the one bucket.
  CHECK(adasum.timing.steps == sum.timing.steps + 8 * 3);
  CHECK(adasum.jobs[0].max_communication > sum.jobs[0].max_communication);
  CHECK(adasum.jobs[0].time > sum.jobs[0].time);
}

TEST_CASE("a calibrated launch overhead delays each collective of the iteration by its length") {
  const Scenario scenario = load_text(cluster(4, 25, with(R"({"type": "none"})")));
  auto time_with = [&scenario](Picoseconds launch) {
    TrainingPlan plan = plan_training(scenario.workload.training.jobs);
    plan.launch_overhead = launch;
    const topo::Topology topology = topo::build_topology(scenario.topology);
    topo::Router router(topology);
    return sim::simulate_analytic(topology, router,
                                  iteration_schedule(std::make_shared<const TrainingPlan>(plan)),
                                  sim::AnalyticOptions{})
        .time;
  };
  const Picoseconds base = time_with(0);
  // One collective, fully exposed; the calibrated overhead replaces NCCL's own per-call one.
  const Picoseconds nccl =
      plan_training(scenario.workload.training.jobs).jobs[0].collectives[0].call_overhead;
  CHECK(nccl > 0);
  CHECK(time_with(30 * kPsPerUs) == base - nccl + 30 * kPsPerUs);
}

TEST_CASE("compute steps carry their layer's memory-bound share into the Schedule") {
  const Scenario scenario = load_text(cluster(2, 25, kResnet));
  const auto plan =
      std::make_shared<const TrainingPlan>(plan_training(scenario.workload.training.jobs));
  const JobPlan& job = plan->jobs[0];
  const Model& model = *job.spec.model;
  const ComputeProfile& profile = job.profiles[0];
  int memory_bound = 0, gemm = 0;
  for (const ComputeStep& step : profile.steps) {
    if (step.layer < 0) continue;
    const LayerKind kind = model.layers[std::size_t(step.layer)].kind;
    const bool tensor_cores =
        kind == LayerKind::conv || kind == LayerKind::linear || kind == LayerKind::attention;
    CHECK(step.memory_bound_share == (tensor_cores ? 0.0 : 1.0));
    (tensor_cores ? gemm : memory_bound) += 1;
  }
  CHECK(gemm > 0);
  CHECK(memory_bound > 0);                               // ResNet-50's batch norms and pooling
  CHECK(profile.steps.back().memory_bound_share == 1.0); // the optimizer
  // The Schedule's compute steps carry the shares: as many memory-bound ones per iteration.
  const coll::Schedule schedule = iteration_schedule(plan);
  int scheduled = 0;
  for (coll::StepStream stream = schedule.program(0, 0); const coll::Step* s = stream.next();)
    if (s->kind == coll::StepKind::compute && s->memory_bound_share == 1.0) ++scheduled;
  CHECK(scheduled > 0);
  CHECK(scheduled % (memory_bound + 1) == 0);
}
