#include "error_of.hpp"
#include "training_harness.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::models::test;

namespace {

// The InputError that loading `workload` (training keys) raises.
std::string error_of(const std::string& workload) {
  return test_support::error_of([&] { (void)load_text(cluster(4, 25, workload)); });
}

} // namespace

TEST_CASE("a training workload loads with its defaults") {
  const Scenario s = load_text(cluster(4, 25, R"("model": "bert_base", "batch_per_gpu": 16)"));
  REQUIRE(s.workload.type == "training");
  const models::JobSpec& job = s.workload.training.jobs.at(0);
  CHECK(job.gpus == std::vector<int>{0, 1, 2, 3});
  CHECK(job.gpu.at(0).name == "V100");
  CHECK(job.framework.type == models::Framework::ddp);
  CHECK(job.framework.bucket_cap_bytes == 25ull << 20);
  CHECK(job.framework.first_bucket_bytes == 1ull << 20);
  CHECK(job.algorithm == "nccl"); // NCCL's own choice on NVIDIA GPUs
  CHECK(job.precision == models::Precision::fp32);
}

TEST_CASE("training workload errors name the key and what was expected and the fix") {
  CHECK_THAT(error_of(R"("model": "resnet50", "batch_per_gpu": 16, "bach": 1)"),
             Catch::Contains("/workload") && Catch::Contains("batch"));
  CHECK_THAT(error_of(R"("model": "resnet05", "batch_per_gpu": 16)"),
             Catch::Contains("/workload/model") && Catch::Contains("resnet50"));
  CHECK_THAT(error_of(R"("model": "resnet50")"), Catch::Contains("batch_per_gpu"));
  CHECK_THAT(error_of(R"("model": "resnet50", "batch_per_gpu": [1, 2])"),
             Catch::Contains("/workload/batch_per_gpu") && Catch::Contains("one per GPU"));
  CHECK_THAT(error_of(R"("model": "resnet50", "batch_per_gpu": 8, "gpus": 9)"),
             Catch::Contains("/workload/gpus"));
  CHECK_THAT(error_of(R"("model": "resnet50", "batch_per_gpu": 8, "precision": "fp8")"),
             Catch::Contains("/workload/precision"));
  CHECK_THAT(error_of(R"("model": "resnet50", "batch_per_gpu": 8,
                         "framework": {"type": "horovod", "bucket_cap": "1MiB"})"),
             Catch::Contains("/workload/framework/bucket_cap") && Catch::Contains("ddp"));
  CHECK_THAT(error_of(R"("model": "resnet50", "batch_per_gpu": 8, "algorithm": "ring",
                         "compression": {"type": "topk", "density": 0.01})"),
             Catch::Contains("/workload/algorithm") && Catch::Contains("topk"));
  // Adasum needs a power-of-two rank count: found when the scenario loads, not mid-run.
  CHECK_THAT(error_of(R"("model": "resnet50", "batch_per_gpu": 8, "gpus": 3, "adasum": true)"),
             Catch::Contains("/workload") && Catch::Contains("power"));
  CHECK_THAT(error_of(R"("model": "resnet50", "batch_per_gpu": 8, "gpu": "Z80")"),
             Catch::Contains("/workload/gpu"));
  CHECK_THAT(error_of(R"("jobs": [{"model": "resnet50", "batch_per_gpu": 8, "gpus": [0, 1]},
                                   {"model": "resnet50", "batch_per_gpu": 8, "gpus": [1, 2]}])"),
             Catch::Contains("/workload/jobs/1/gpus/0") && Catch::Contains("already used"));
  CHECK_THAT(error_of(R"("model": "resnet50", "batch_per_gpu": 8, "jobs": [])"),
             Catch::Contains("inside a job"));
}

TEST_CASE("compression and adasum and parameter servers pick their algorithms") {
  auto job = [](const std::string& extra) {
    return load_text(cluster(4, 25, R"("model": "resnet50", "batch_per_gpu": 8, )" + extra))
        .workload.training.jobs.at(0);
  };
  CHECK(job(R"("compression": {"type": "topk", "density": 0.01})").algorithm == "topk");
  CHECK(job(R"("compression": {"type": "coarse", "density": 0.1})").algorithm == "coarse_sparse");
  CHECK(job(R"("adasum": true)").algorithm == "recursive_doubling");
  const models::JobSpec ps = job(R"("parameter_servers": 2)");
  CHECK(ps.algorithm == "parameter_server");
  CHECK(ps.params.servers == 2);
  // Every one of them runs.
  for (const char* extra :
       {R"("compression": {"type": "topk", "density": 0.01})",
        R"("compression": {"type": "coarse", "density": 0.1})", R"("adasum": true)",
        R"("parameter_servers": 2)", R"("framework": {"type": "horovod"})",
        R"("framework": {"type": "gradientflow", "lazy_threshold": "8MiB"})",
        R"("framework": {"type": "ddp", "accumulation_steps": 2})"}) {
    const TrainingRun run = run_training(
        cluster(4, 25, R"("model": "resnet50", "batch_per_gpu": 8, )" + std::string(extra)));
    INFO(extra);
    CHECK(run.jobs[0].time > 0);
    CHECK(run.jobs[0].collectives > 0);
    CHECK(run.jobs[0].scaling_efficiency > 0);
    CHECK(run.jobs[0].scaling_efficiency <= 1.0);
  }
}

TEST_CASE("a training workload loads on every engine, the packet engine included") {
  std::string text = cluster(4, 25, R"("model": "resnet50", "batch_per_gpu": 8)");
  text.insert(text.size() - 1, R"(, "engine": {"type": "packet"})");
  CHECK(sim::engine_name(load_text(text).engine) == "packet");
}

TEST_CASE("precision tf32 loads on an A100 and is an error on a GPU without TF32") {
  CHECK_THAT(error_of(R"("model": "bert_base", "batch_per_gpu": 16, "precision": "tf32")"),
             Catch::Contains("/workload/precision") && Catch::Contains("V100") &&
                 Catch::Contains("TF32"));
  const Scenario s = load_text(cluster(4, 25,
                                       R"("model": "bert_base", "batch_per_gpu": 16,
                                          "gpu": "A100", "precision": "tf32")"));
  CHECK(s.workload.training.jobs.at(0).precision == models::Precision::tf32);
}
