#include "ddlsim/core/input_error.hpp"
#include "ddlsim/models/gpu.hpp"
#include "ddlsim/models/zoo.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace ddlsim;
using namespace ddlsim::models;

TEST_CASE("every bundled model's layers add up to the published parameter count") {
  // torchvision for the CNNs; Hugging Face BertModel (with pooler) and GPT2Model (lm_head tied);
  // Transformer base and DLRM derived in scripts/gen_zoo.py (see their "convention").
  const std::vector<std::pair<std::string, std::uint64_t>> published{
      {"alexnet", 61'100'840},     {"vgg16", 138'357'544},       {"resnet50", 25'557'032},
      {"resnet101", 44'549'160},   {"inception_v3", 27'161'264}, {"bert_base", 109'482'240},
      {"bert_large", 335'141'888}, {"gpt2_medium", 354'823'168}, {"transformer_base", 63'082'496},
      {"dlrm", 540'677'217}};
  CHECK(zoo_model_names().size() == published.size());
  for (const auto& [name, count] : published) {
    const Model model = load_model(name, ".", "/workload/model");
    INFO(name);
    CHECK(model.parameters() == count);
    CHECK(model.total_parameters == count);
    CHECK(model.forward_flops() >= 0);
  }
  // Forward FLOPs per image as commonly quoted (2 x multiply-adds): ResNet-50 4.1 GMAC.
  CHECK(load_model("resnet50", ".", "x").forward_flops() == Approx(8.2e9).epsilon(0.02));
  // DLRM's embedding tables are model parallel: only the MLPs are all-reduced.
  CHECK(load_model("dlrm", ".", "x").dense_parameters() == 475'985);
}

TEST_CASE("an unknown model name is an error that suggests the nearest") {
  try {
    (void)load_model("resnet5O", ".", "/workload/model");
    FAIL("accepted");
  } catch (const InputError& e) {
    CHECK(e.where() == "/workload/model");
    CHECK_THAT(e.what(), Catch::Contains("did you mean \"resnet50\""));
  }
}

TEST_CASE("a user model file loads and its errors name the file and the JSON pointer") {
  const auto dir = std::filesystem::temp_directory_path() / "ddlsim_zoo_test";
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "tiny.json") << R"({"name": "tiny", "source": "test",
      "total_parameters": 30, "layers": [
      {"name": "a", "kind": "linear", "parameters": 10, "forward_flops": 20,
       "backward_flops": 40, "activation_bytes": 16},
      {"name": "b", "kind": "conv", "parameters": 20, "forward_flops": 40,
       "backward_flops": 80, "activation_bytes": 16}]})";
    std::ofstream(dir / "bad.json") << R"({"name": "bad", "source": "test",
      "total_parameters": 31, "layers": [
      {"name": "a", "kind": "linear", "parameters": 30, "forward_flops": 20,
       "backward_flops": 40, "activation_bytes": 16}]})";
    std::ofstream(dir / "typo.json") << R"({"name": "t", "source": "test",
      "total_parameters": 30, "layers": [
      {"name": "a", "kind": "lineer", "parameters": 30, "forward_flops": 20,
       "backward_flops": 40, "activation_bytes": 16}]})";
  }
  const Model tiny = load_model("tiny.json", dir, "/workload/model");
  CHECK(tiny.layers.size() == 2);
  CHECK(tiny.parameters() == 30);
  CHECK_THROWS_WITH(load_model("bad.json", dir, "x"),
                    Catch::Contains("/total_parameters") && Catch::Contains("30 parameters"));
  CHECK_THROWS_WITH(load_model("typo.json", dir, "x"),
                    Catch::Contains("/layers/0/kind") && Catch::Contains("linear"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("GPU presets are found by a topology GPU model name and faster GPUs compute faster") {
  CHECK(find_gpu("V100-SXM2-32GB", "x").name == "V100");
  CHECK(find_gpu("A100-SXM4-80GB", "x").memory_bytes_per_second == 2039e9);
  CHECK(find_gpu("A100-SXM4-40GB", "x").memory_bytes_per_second == 1555e9);
  CHECK_THROWS_AS(find_gpu("TPUv4", "/workload/gpu"), InputError);
  const Model resnet = load_model("resnet50", ".", "x");
  auto total = [&](const std::string& gpu, Precision precision, int batch, double speed) {
    Picoseconds t = 0;
    for (const Layer& layer : resnet.layers) {
      const LayerTimes times = layer_times(layer, find_gpu(gpu, "x"), precision, batch, speed);
      t += times.forward + times.backward;
    }
    return t;
  };
  const Picoseconds v100 = total("V100", Precision::fp32, 64, 1);
  CHECK(total("P100", Precision::fp32, 64, 1) > v100);
  CHECK(total("A100", Precision::fp32, 64, 1) < v100);
  CHECK(total("H100", Precision::fp16, 64, 1) < total("A100", Precision::fp16, 64, 1));
  CHECK(total("V100", Precision::fp16, 64, 1) < v100 / 2); // tensor cores
  CHECK(total("V100", Precision::fp32, 128, 1) > v100);
  CHECK(total("V100", Precision::fp32, 64, 0.5) > v100);
  // About 370 images/s for ResNet-50 on one V100 in FP32 (forward + backward).
  const double images_per_second = 64 / ps_to_seconds(v100);
  CHECK(images_per_second > 300);
  CHECK(images_per_second < 420);
}

TEST_CASE("tf32 runs the matrix products on the TF32 tensor cores and the rest as fp32") {
  const GpuSpec a100 = find_gpu("A100-SXM4-80GB", "x");
  REQUIRE(a100.tf32_flops > a100.fp32_flops);
  const Model bert = load_model("bert_large", ".", "x");
  bool saw_linear = false, saw_norm = false;
  for (const Layer& layer : bert.layers) {
    const LayerTimes fp32 = layer_times(layer, a100, Precision::fp32, 32, 1);
    const LayerTimes tf32 = layer_times(layer, a100, Precision::tf32, 32, 1);
    INFO(layer.name);
    if (layer.kind == LayerKind::linear && layer.name.rfind("encoder.", 0) == 0) {
      // An encoder GEMM (128 tokens x 32 samples) is compute-bound: its FLOPs at the TF32 rate.
      const double rate = a100.tf32_flops * a100.fp16_efficiency[std::size_t(LayerKind::linear)];
      CHECK(ps_to_seconds(tf32.forward - a100.kernel_overhead) ==
            Approx(layer.forward_flops * 32 / rate).epsilon(1e-6));
      CHECK(tf32.forward < fp32.forward);
      saw_linear = true;
    }
    if (layer.kind == LayerKind::norm) {
      CHECK(tf32.forward == fp32.forward); // not a matrix product: CUDA cores, FP32
      CHECK(tf32.backward == fp32.backward);
      saw_norm = true;
    }
  }
  CHECK(saw_linear);
  CHECK(saw_norm);
}
