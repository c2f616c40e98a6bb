// Transformers of the data-parallel zoo as shapes (models/transformer_shape.hpp): the bundled
// JSON and the shape agree layer by layer, a sequence length changes what it should, and a job's
// "seq_len" or inline shape loads (or fails with the key and the fix).
#include "ddlsim/models/transformer_shape.hpp"
#include "error_of.hpp"
#include "training_harness.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::models;
using namespace ddlsim::models::test;

namespace {

std::string error_of(const std::string& workload) {
  return test_support::error_of([&] { (void)load_text(cluster(4, 25, workload)); });
}

Model job_model(const std::string& workload) {
  return *load_text(cluster(4, 25, workload)).workload.training.jobs.at(0).model;
}

} // namespace

TEST_CASE("a bundled transformer is its shape at the zoo's sequence length, layer by layer") {
  for (const char* name : {"bert_base", "bert_large", "gpt2_medium"}) {
    INFO(name);
    const Model zoo = load_model(name, ".", "test");
    const std::optional<TransformerShape> shape = zoo_transformer_shape(name);
    REQUIRE(shape);
    const Model built = transformer_model(*shape, name);
    REQUIRE(built.layers.size() == zoo.layers.size());
    for (std::size_t i = 0; i < zoo.layers.size(); ++i) {
      INFO(zoo.layers[i].name);
      CHECK(built.layers[i].name == zoo.layers[i].name);
      CHECK(built.layers[i].kind == zoo.layers[i].kind);
      CHECK(built.layers[i].parameters == zoo.layers[i].parameters);
      CHECK(built.layers[i].forward_flops == zoo.layers[i].forward_flops);
      CHECK(built.layers[i].backward_flops == zoo.layers[i].backward_flops);
      CHECK(built.layers[i].activation_bytes == zoo.layers[i].activation_bytes);
    }
    CHECK(built.total_parameters == zoo.total_parameters);
  }
  CHECK_FALSE(zoo_transformer_shape("resnet50"));
}

TEST_CASE("a longer sequence keeps the parameters and grows attention faster than the rest") {
  TransformerShape s128 = *zoo_transformer_shape("bert_large"), s512 = s128;
  s512.seq_len = 512;
  const Model a = transformer_model(s128, "a"), b = transformer_model(s512, "b");
  CHECK(a.parameters() == b.parameters());
  double attention_a = 0, attention_b = 0, linear_a = 0, linear_b = 0;
  for (std::size_t i = 0; i < a.layers.size(); ++i) {
    if (a.layers[i].kind == LayerKind::attention) {
      attention_a += a.layers[i].forward_flops;
      attention_b += b.layers[i].forward_flops;
    } else if (a.layers[i].name.find("encoder") == 0) {
      linear_a += a.layers[i].forward_flops;
      linear_b += b.layers[i].forward_flops;
    }
  }
  CHECK(linear_b == Approx(4 * linear_a));        // per token
  CHECK(attention_b == Approx(16 * attention_a)); // per pair of tokens
  CHECK(b.sample == "one sequence of 512 tokens");
}

TEST_CASE("a training job takes seq_len for a bundled transformer, or a shape of its own") {
  const Model bert512 = job_model(R"("model": "bert_large", "seq_len": 512, "batch_per_gpu": 4)");
  CHECK(bert512.name == "bert_large");
  CHECK(bert512.sample == "one sequence of 512 tokens");
  CHECK(bert512.total_parameters == 335141888);

  const Model own = job_model(R"("model": {"architecture": "gpt2", "name": "gpt2-small",
      "layers": 12, "hidden": 768, "heads": 12, "seq_len": 1024, "vocab": 50257},
      "batch_per_gpu": 4)");
  CHECK(own.name == "gpt2-small");
  CHECK(own.total_parameters == 124439808); // Hugging Face gpt2 (Radford et al. 2019): 124.4 M

  CHECK_THAT(error_of(R"("model": "resnet50", "seq_len": 512, "batch_per_gpu": 4)"),
             Catch::Contains("/workload/seq_len") && Catch::Contains("bert_large"));
  CHECK_THAT(error_of(R"("model": "bert_large", "seq_len": 1024, "batch_per_gpu": 4)"),
             Catch::Contains("/workload/seq_len") && Catch::Contains("512 position"));
  CHECK_THAT(error_of(R"("model": {"architecture": "bert", "layers": 2, "hidden": 100,
                          "heads": 3, "seq_len": 8, "vocab": 10}, "batch_per_gpu": 4)"),
             Catch::Contains("/workload/model") && Catch::Contains("divide"));
  CHECK_THAT(error_of(R"("model": {"architecture": "t5", "layers": 2, "hidden": 96,
                          "heads": 3, "seq_len": 8, "vocab": 10}, "batch_per_gpu": 4)"),
             Catch::Contains("/workload/model/architecture"));
}
