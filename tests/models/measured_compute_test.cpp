// Measured compute (models/measured_compute.hpp): a measured 1-GPU throughput replaces the
// roofline's speed, and per-layer times from a CSV or a Chrome trace replace its layer times.
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/models/measured_compute.hpp"
#include "training_harness.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace ddlsim;
using namespace ddlsim::models::test;

namespace {

// A file in the test's temporary directory holding `text`; its absolute path.
std::string temp_file(const std::string& name, const std::string& text) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "ddlsim-measured-compute-test";
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

const models::Model& resnet50() {
  static const models::Model model = models::load_model("resnet50", ".", "test");
  return model;
}

} // namespace

TEST_CASE("given its measured 1-GPU throughput one GPU simulates exactly that throughput") {
  for (const char* precision : {"fp32", "fp16"})
    for (double measured : {367.0, 1200.0, 55.5}) {
      const TrainingRun run = run_training(cluster(
          1, 25,
          R"("model": "resnet50", "batch_per_gpu": 128, "precision": ")" + std::string(precision) +
              R"(", "compute": {"single_gpu_samples_per_second": )" + std::to_string(measured) +
              "}"));
      CHECK(run.jobs.at(0).samples_per_second == Approx(measured).epsilon(1e-6));
      CHECK(run.jobs.at(0).single_gpu_samples_per_second == Approx(measured).epsilon(1e-6));
    }
  // With accumulation steps the samples of one iteration are counted whole.
  const TrainingRun run = run_training(cluster(1, 25, R"("model": "bert_large", "batch_per_gpu": 8,
          "framework": {"type": "ddp", "accumulation_steps": 4},
          "compute": {"single_gpu_samples_per_second": 50})"));
  CHECK(run.jobs.at(0).samples_per_second == Approx(50).epsilon(1e-6));
}

TEST_CASE("a measured throughput keeps the roofline's proportions and sets the scaling baseline") {
  const std::string base = R"("model": "resnet50", "batch_per_gpu": 64)";
  const TrainingRun roofline = run_training(cluster(4, 25, base));
  const double alone = roofline.jobs.at(0).single_gpu_samples_per_second / 4;
  // Twice the roofline's speed: every compute step takes half as long.
  const TrainingRun fast =
      run_training(cluster(4, 25,
                           base + R"(, "compute": {"single_gpu_samples_per_second": )" +
                               std::to_string(2 * alone) + "}"));
  CHECK(fast.jobs.at(0).max_compute == Approx(roofline.jobs.at(0).max_compute / 2.0).epsilon(1e-6));
  CHECK(fast.jobs.at(0).single_gpu_samples_per_second == Approx(8 * alone).epsilon(1e-6));
  // Faster compute leaves less backward to hide communication behind: efficiency cannot rise.
  CHECK(fast.jobs.at(0).scaling_efficiency <= roofline.jobs.at(0).scaling_efficiency + 1e-12);
  // Per-GPU measurements: each GPU takes its own.
  const TrainingRun mixed = run_training(cluster(2, 25, R"("model": "resnet50", "batch_per_gpu": 64,
                "compute": {"single_gpu_samples_per_second": [100, 200]})"));
  CHECK(mixed.jobs.at(0).single_gpu_samples_per_second == Approx(300).epsilon(1e-6));
  CHECK(mixed.jobs.at(0).gpus.at(0).compute ==
        Approx(2.0 * mixed.jobs.at(0).gpus.at(1).compute).epsilon(1e-6));
}

TEST_CASE("a CSV of layer times puts each layer's measured time into the iteration") {
  const std::string csv = temp_file("resnet50.csv", "# measured on one V100\n"
                                                    "layer,forward_us,backward_us\n"
                                                    "conv1,1000,2500\n"
                                                    "fc,30,70\n"
                                                    "optimizer,0,4000\n");
  const std::string workload = R"("model": "resnet50", "batch_per_gpu": 64, "communicate": false)";
  const Scenario profiled =
      load_text(cluster(1, 25, workload + R"(, "compute": {"layer_times": ")" + csv + "\"}"));
  const models::TrainingPlan plan = models::plan_training(profiled.workload.training.jobs);
  const models::ComputeProfile& profile = plan.jobs.at(0).profiles.at(0);
  const models::TrainingPlan roofline =
      models::plan_training(load_text(cluster(1, 25, workload)).workload.training.jobs);
  const models::ComputeProfile& base = roofline.jobs.at(0).profiles.at(0);
  REQUIRE(profile.steps.size() == base.steps.size());
  for (std::size_t i = 0; i < profile.steps.size(); ++i) {
    const models::ComputeStep& step = profile.steps[i];
    const std::string name =
        step.layer >= 0 ? resnet50().layers[std::size_t(step.layer)].name : "optimizer";
    INFO(name << (step.backward ? " backward" : " forward"));
    if (name == "conv1")
      CHECK(step.duration == (step.backward ? 2500 : 1000) * kPsPerUs);
    else if (name == "fc")
      CHECK(step.duration == (step.backward ? 70 : 30) * kPsPerUs);
    else if (name == "optimizer")
      CHECK(step.duration == 4000 * kPsPerUs);
    else
      CHECK(step.duration == base.steps[i].duration); // not profiled: the roofline's
  }
  // Measured at batch 32, run at 64: twice the time.
  const Scenario half = load_text(
      cluster(1, 25, workload + R"(, "compute": {"layer_times": ")" + csv + R"(", "batch": 32})"));
  const models::TrainingPlan half_plan = models::plan_training(half.workload.training.jobs);
  CHECK(half_plan.jobs.at(0).profiles.at(0).steps.at(0).duration == 2000 * kPsPerUs);
  // The iteration's compute is the sum, and the report can say where it came from.
  const TrainingRun run = run_training(profiled);
  CHECK(run.jobs.at(0).max_compute == profile.compute);
  CHECK_THAT(models::describe(profiled.workload.training.jobs.at(0).compute, resnet50()),
             Catch::Contains("2 of 125 layers"));
}

TEST_CASE("a Chrome trace of torch.profiler's record_function ranges gives the layer times") {
  // GPU-side annotations win over the CPU-side ranges of the same names; two iterations average.
  const std::string trace = temp_file("trace.json", R"({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "forward:conv1", "ts": 0, "dur": 5},
    {"ph": "X", "cat": "gpu_user_annotation", "name": "forward:conv1", "ts": 0, "dur": 900},
    {"ph": "X", "cat": "gpu_user_annotation", "name": "forward:conv1", "ts": 5000, "dur": 1100},
    {"ph": "X", "cat": "gpu_user_annotation", "name": "backward:conv1", "ts": 2000, "dur": 2000},
    {"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "ts": 0, "dur": 7},
    {"ph": "i", "name": "forward:fc", "ts": 1}
  ]})");
  const models::LayerProfile profile =
      models::load_layer_profile(trace, ".", resnet50(), "/workload/compute/layer_times");
  CHECK(profile.measured_layers() == 1);
  REQUIRE(profile.layers.at(0).has_value());
  CHECK(profile.layers.at(0)->forward == 1000 * kPsPerUs);
  CHECK(profile.layers.at(0)->backward == 2000 * kPsPerUs);
  CHECK_FALSE(profile.optimizer.has_value());
}

TEST_CASE("measured compute errors name the key, the file and line, and the fix") {
  const std::string base = R"("model": "resnet50", "batch_per_gpu": 64)";
  CHECK_THAT(load_error_of(cluster(2, 25, base + R"(, "compute": {})")),
             Catch::Contains("/workload/compute") && Catch::Contains("exactly one"));
  CHECK_THAT(
      load_error_of(cluster(2, 25, base + R"(, "compute": {"single_gpu_samples_per_second": 0})")),
      Catch::Contains("/workload/compute/single_gpu_samples_per_second"));
  CHECK_THAT(load_error_of(cluster(
                 2, 25, base + R"(, "compute": {"single_gpu_samples_per_second": [1, 2, 3]})")),
             Catch::Contains("one per GPU"));
  CHECK_THAT(load_error_of(cluster(2, 25, base + R"(, "balance": true,
                                  "compute": {"single_gpu_samples_per_second": 300})")),
             Catch::Contains("/workload/balance"));
  const std::string typo = temp_file("typo.csv", "layer,forward_us,backward_us\nconv01,1,2\n");
  CHECK_THAT(
      load_error_of(cluster(2, 25, base + R"(, "compute": {"layer_times": ")" + typo + "\"}")),
      Catch::Contains("/workload/compute/layer_times") && Catch::Contains("typo.csv:2") &&
          Catch::Contains("conv1"));
  const std::string header = temp_file("header.csv", "name,fwd,bwd\nconv1,1,2\n");
  CHECK_THAT(
      load_error_of(cluster(2, 25, base + R"(, "compute": {"layer_times": ")" + header + "\"}")),
      Catch::Contains("layer,forward_us,backward_us"));
  const std::string bad = temp_file("bad.csv", "layer,forward_us,backward_us\nconv1,-1,2\n");
  CHECK_THAT(
      load_error_of(cluster(2, 25, base + R"(, "compute": {"layer_times": ")" + bad + "\"}")),
      Catch::Contains("microseconds"));
  const std::string empty = temp_file("empty.json", R"({"traceEvents": []})");
  CHECK_THAT(
      load_error_of(cluster(2, 25, base + R"(, "compute": {"layer_times": ")" + empty + "\"}")),
      Catch::Contains("record_function"));
  CHECK_THAT(load_error_of(cluster(2, 25, base + R"(, "compute": {"layer_times": "none.txt"})")),
             Catch::Contains(".csv"));
  CHECK_THAT(load_error_of(cluster(2, 25, base + R"(, "compute": {"layer_times": "missing.csv"})")),
             Catch::Contains("does not exist"));
}
