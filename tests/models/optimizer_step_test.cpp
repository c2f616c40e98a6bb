// The optimizer step (models/gpu.hpp optimizer_time): its memory traffic per parameter by
// optimizer, and how a measured 1-GPU throughput taken at other accumulation steps than the job's
// charges it (models/measured_compute.hpp).
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/models/gpu.hpp"
#include "training_harness.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::models::test;

namespace {

// The optimizer step of the job's first GPU and the sum of its forward and backward passes.
struct ProgramParts {
  double passes_ps = 0;
  double optimizer_ps = 0;
};
ProgramParts parts_of(const TrainingRun& run) {
  const models::ComputeProfile& profile = run.plan->jobs.at(0).profiles.at(0);
  ProgramParts parts;
  for (std::size_t i = 0; i + 1 < profile.steps.size(); ++i)
    parts.passes_ps += static_cast<double>(profile.steps[i].duration);
  parts.optimizer_ps = static_cast<double>(profile.steps.back().duration);
  return parts;
}

} // namespace

TEST_CASE("the optimizer step moves its kernels' bytes per parameter: LAMB 52, Adam 28, SGD 16") {
  const models::GpuSpec gpu = models::find_gpu("V100", "test");
  const double rate = gpu.memory_bytes_per_second * gpu.memory_efficiency;
  const std::uint64_t parameters = 1'000'000'000;
  auto seconds = [&](models::Precision precision, models::Optimizer optimizer) {
    return ps_to_seconds(models::optimizer_time(parameters, gpu, precision, 1.0, optimizer) -
                         gpu.kernel_overhead);
  };
  using models::Optimizer;
  using models::Precision;
  CHECK(seconds(Precision::fp32, Optimizer::sgd) == Approx(16e9 / rate).epsilon(1e-9));
  CHECK(seconds(Precision::fp32, Optimizer::adam) == Approx(28e9 / rate).epsilon(1e-9));
  CHECK(seconds(Precision::fp32, Optimizer::lamb) == Approx(52e9 / rate).epsilon(1e-9));
  // fp16 master weights add the fp16 gradient read and the fp16 weight copy: 4 bytes each.
  CHECK(seconds(Precision::fp16, Optimizer::lamb) == Approx(56e9 / rate).epsilon(1e-9));
  // The default is SGD with momentum, as before optimizers were named.
  CHECK(models::optimizer_time(parameters, gpu, Precision::fp32, 1.0) ==
        models::optimizer_time(parameters, gpu, Precision::fp32, 1.0, Optimizer::sgd));
}

TEST_CASE("a job's optimizer lengthens its compute by the step's extra bytes, once per iteration") {
  const std::string base = R"("model": "bert_large", "batch_per_gpu": 8)";
  const TrainingRun sgd = run_training(cluster(1, 25, base));
  const TrainingRun lamb = run_training(cluster(1, 25, base + R"(, "optimizer": "lamb")"));
  const models::GpuSpec gpu = models::find_gpu("V100-SXM2-16GB", "test"); // cluster()'s GPU
  const std::uint64_t parameters = 335'141'888;                           // bert_large, all dense
  const Picoseconds extra =
      models::optimizer_time(parameters, gpu, models::Precision::fp32, 1.0,
                             models::Optimizer::lamb) -
      models::optimizer_time(parameters, gpu, models::Precision::fp32, 1.0, models::Optimizer::sgd);
  CHECK(lamb.jobs.at(0).max_compute - sgd.jobs.at(0).max_compute == extra);
  CHECK(lamb.jobs.at(0).samples_per_second < sgd.jobs.at(0).samples_per_second);
  // With 4 accumulation steps the same step is paid once per 4 passes.
  const std::string accumulated =
      base + R"(, "framework": {"type": "ddp", "accumulation_steps": 4})";
  const TrainingRun sgd4 = run_training(cluster(1, 25, accumulated));
  const TrainingRun lamb4 = run_training(cluster(1, 25, accumulated + R"(, "optimizer": "lamb")"));
  CHECK(lamb4.jobs.at(0).max_compute - sgd4.jobs.at(0).max_compute == extra);
  const double loss1 = 1 - lamb.jobs.at(0).samples_per_second / sgd.jobs.at(0).samples_per_second;
  const double loss4 = 1 - lamb4.jobs.at(0).samples_per_second / sgd4.jobs.at(0).samples_per_second;
  CHECK(loss4 < loss1 / 2);
}

TEST_CASE("a 1-GPU throughput measured at more accumulation steps charges the optimizer per step") {
  // One GPU, one pass per iteration; the 1-GPU measurement of 50 samples/s at `measured` steps.
  auto run = [](int measured) {
    return run_training(cluster(1, 25,
                                R"("model": "bert_large", "batch_per_gpu": 8,
        "optimizer": "lamb", "compute": {"single_gpu_samples_per_second": 50,
        "accumulation_steps": )" + std::to_string(measured) +
                                    "}"));
  };
  // Measured at the job's own steps: exactly the measurement.
  const TrainingRun same = run(1);
  CHECK(same.jobs.at(0).samples_per_second == Approx(50).epsilon(1e-6));
  // Measured at 8 and 32 steps: the passes are solved from 8 (32) passes and one optimizer step
  // taking 8 x 8 (32 x 8) samples / 50 samples/s, so the job, which steps the optimizer after
  // every pass, is slower, and the more so the more the measurement amortized it.
  for (int measured : {8, 32}) {
    const TrainingRun r = run(measured);
    const ProgramParts parts = parts_of(r);
    CHECK(parts.passes_ps * measured + parts.optimizer_ps ==
          Approx(8.0 * measured / 50 * static_cast<double>(kPsPerSecond)).epsilon(1e-9));
    // The roofline's proportion between a pass and the optimizer step stays.
    const ProgramParts roofline = parts_of(same);
    CHECK(parts.optimizer_ps / parts.passes_ps ==
          Approx(roofline.optimizer_ps / roofline.passes_ps).epsilon(1e-6));
  }
  const double at8 = run(8).jobs.at(0).samples_per_second;
  const double at32 = run(32).jobs.at(0).samples_per_second;
  CHECK(at32 < at8);
  CHECK(at8 < 50);
  // A job accumulating as many steps as the measurement gets the measurement back.
  const TrainingRun accumulated = run_training(cluster(1, 25, R"("model": "bert_large",
      "batch_per_gpu": 8, "optimizer": "lamb", "framework": {"type": "ddp", "accumulation_steps": 32},
      "compute": {"single_gpu_samples_per_second": 50, "accumulation_steps": 32})"));
  CHECK(accumulated.jobs.at(0).samples_per_second == Approx(50).epsilon(1e-6));
}

TEST_CASE("optimizer and measured accumulation errors name the key and the choices") {
  const std::string base = R"("model": "resnet50", "batch_per_gpu": 64)";
  CHECK_THAT(load_error_of(cluster(2, 25, base + R"(, "optimizer": "adamw")")),
             Catch::Contains("/workload/optimizer") && Catch::Contains("lamb"));
  CHECK_THAT(
      load_error_of(cluster(2, 25, base + R"(, "compute": {"single_gpu_samples_per_second": 300,
                 "accumulation_steps": 0})")),
      Catch::Contains("/workload/compute/accumulation_steps"));
  CHECK_THAT(load_error_of(cluster(2, 25, base + R"(, "compute": {"layer_times": "x.csv",
                 "accumulation_steps": 4})")),
             Catch::Contains("/workload/compute/accumulation_steps") &&
                 Catch::Contains("single_gpu_samples_per_second"));
}
