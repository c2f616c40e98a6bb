// Large-model training (models/llm.hpp): the defining effects of each kind of parallelism, the
// pipeline bubble's closed form, memory per ZeRO stage, and the errors of bad layouts.
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/sim/engine.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "error_of.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace ddlsim;
using namespace ddlsim::models;
using ddlsim::test_support::error_of;

namespace {

// `nodes` DGX H100 on one switch and an llm_training workload: the model and the keys given.
std::string scenario_text(int nodes, const std::string& model, const std::string& keys) {
  return R"({"topology": {"nodes": [{"preset": "dgx-h100", "count": )" + std::to_string(nodes) +
         R"(}], "fabric": {"type": "single_switch"}},
             "workload": {"type": "llm_training", "model": )" +
         model + ", " + keys + "}}";
}

// A small dense transformer (GPT-like shape, 8 layers).
const std::string kSmall =
    R"({"layers": 8, "hidden": 4096, "heads": 32, "ffn": 16384, "seq_len": 2048,
        "vocab": 128, "ffn_type": "gelu"})";

std::string moe_model(int top_k) {
  return R"({"layers": 4, "hidden": 2048, "heads": 16, "ffn": 8192, "seq_len": 1024,
             "vocab": 128, "moe": {"experts": 8, "top_k": )" +
         std::to_string(top_k) + R"(, "expert_ffn": 4096}})";
}

Scenario load(const std::string& text) {
  return load_scenario(Json::parse(text), "test.json", ".");
}

struct Run {
  std::shared_ptr<const LlmPlan> plan;
  LlmIteration it;
  std::uint64_t bytes_sent = 0;
};

Run run(const std::string& text) {
  const Scenario scenario = load(text);
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  const sim::EngineResult result =
      sim::simulate(sim::LlmTraining{scenario.workload.llm}, topology, router, scenario.engine, {});
  REQUIRE(result.complete);
  return {result.llm_plan, result.llm, result.bytes_sent};
}

// Compute time of one micro-batch's forward and backward on a GPU of stage 0 (optimizer apart).
Picoseconds compute_per_micro_batch(const LlmPlan& plan) {
  Picoseconds total = 0;
  const std::vector<LlmOp>& ops = plan.stages.front();
  for (std::size_t i = 0; i + 2 < ops.size(); ++i)
    if (ops[i].kind == LlmOpKind::compute) total += ops[i].duration;
  return total / plan.spec.micro_batches();
}

int count_ops(const LlmPlan& plan, coll::Op op, LlmGroup group) {
  int n = 0;
  for (const LlmOp& o : plan.stages.front())
    if (o.collective >= 0 && o.kind != LlmOpKind::dp_wait) {
      const LlmCollective& c = plan.collectives[static_cast<std::size_t>(o.collective)];
      if (c.call.op == op && c.group == group) ++n;
    }
  return n;
}

} // namespace

TEST_CASE("llm: bundled shapes have their published parameter counts") {
  const std::vector<std::pair<std::string, double>> published{
      {"gpt3-175b", 175e9},     {"llama2-7b", 6.74e9},   {"llama2-70b", 68.98e9},
      {"llama3-8b", 8.03e9},    {"llama3-70b", 70.55e9}, {"llama3-405b", 405.8e9},
      {"mixtral-8x7b", 46.7e9}, {"deepseek-v3", 671e9}};
  for (const auto& [name, total] : published) {
    INFO(name);
    CHECK(static_cast<double>(find_llm_shape(name, "/m").parameters()) ==
          Approx(total).epsilon(0.02));
  }
  CHECK_THAT(error_of([] { find_llm_shape("llama2-71b", "/workload/model"); }),
             Catch::Contains("/workload/model") && Catch::Contains("llama2-70b"));
}

TEST_CASE("llm: model FLOPs per token follow Narayanan et al.'s formula without recompute") {
  const LlmShape gpt3 = find_llm_shape("gpt3-175b", "/m");
  const double l = gpt3.layers, h = static_cast<double>(gpt3.hidden), s = gpt3.seq_len,
               v = static_cast<double>(gpt3.vocab);
  // 3/4 of eq. (3)'s layer terms (it counts a recomputed forward pass) plus the logits 6 h V.
  CHECK(gpt3.model_flops_per_token() == Approx(72 * l * h * h + 12 * l * s * h + 6 * h * v));
  // The dense approximation 6N is within a few percent.
  CHECK(gpt3.model_flops_per_token() ==
        Approx(6.0 * static_cast<double>(gpt3.parameters())).epsilon(0.05));
  // An MoE token uses top_k experts, not all of them.
  const LlmShape mixtral = find_llm_shape("mixtral-8x7b", "/m");
  CHECK(mixtral.model_flops_per_token() < 0.5 * 6.0 * static_cast<double>(mixtral.parameters()));
}

TEST_CASE("llm: more TP shrinks compute per GPU and adds TP collectives inside the NVLink domain") {
  Picoseconds previous = 0;
  for (int tp : {1, 2, 8}) {
    INFO("tp " << tp);
    const Run r = run(scenario_text(1, kSmall,
                                    R"("parallel": {"tp": )" + std::to_string(tp) +
                                        R"(}, "global_batch": 8, "algorithm": "ring")"));
    const Picoseconds compute = compute_per_micro_batch(*r.plan);
    if (previous > 0) CHECK(compute < previous);
    previous = compute;
    if (tp == 1) {
      CHECK(r.it.exposed_tp == 0);
      CHECK(count_ops(*r.plan, coll::Op::all_reduce, LlmGroup::tp) == 0);
    } else {
      CHECK(r.it.exposed_tp > 0);
      // 2 per layer forward and backward, and the embedding's, per micro-batch.
      CHECK(count_ops(*r.plan, coll::Op::all_reduce, LlmGroup::tp) ==
            (4 * 8 + 2) * r.plan->spec.micro_batches());
      for (const LlmCollective& c : r.plan->collectives)
        if (c.group == LlmGroup::tp)
          for (int node : c.call.node_of_rank) CHECK(node == c.call.node_of_rank.front());
    }
  }
}

TEST_CASE("llm: the 1F1B bubble is (p - 1) / (m + p - 1) with equal stages") {
  double previous = 1;
  for (int m : {4, 8, 16}) {
    INFO("micro-batches " << m);
    const Run r = run(scenario_text(1, kSmall,
                                    R"("parallel": {"tp": 2, "pp": 4}, "global_batch": )" +
                                        std::to_string(m) + R"(, "algorithm": "ring")"));
    REQUIRE(r.plan->spec.micro_batches() == m);
    const double expected = 3.0 / (m + 3.0);
    CHECK(r.it.bubble_fraction == Approx(expected).epsilon(0.05));
    CHECK(r.it.bubble_fraction < previous);
    previous = r.it.bubble_fraction;
    CHECK(r.it.exposed_pp > 0);
    CHECK(r.it.exposed_pp < r.it.bubble);
  }
}

TEST_CASE("llm: ZeRO-3 cuts memory per GPU and adds parameter all-gathers") {
  const auto text = [](int zero) {
    return scenario_text(1, kSmall,
                         R"("parallel": {"tp": 1, "zero": )" + std::to_string(zero) +
                             R"(}, "global_batch": 16, "algorithm": "ring")");
  };
  const Run zero0 = run(text(0));
  const Run zero1 = run(text(1));
  const Run zero3 = run(text(3));
  CHECK(zero1.plan->memory.total() < zero0.plan->memory.total());
  CHECK(zero3.plan->memory.total() < zero1.plan->memory.total());
  CHECK(zero3.plan->memory.parameters < zero0.plan->memory.parameters);
  CHECK(count_ops(*zero0.plan, coll::Op::all_gather, LlmGroup::dp) == 0);
  CHECK(count_ops(*zero0.plan, coll::Op::all_reduce, LlmGroup::dp) > 0);
  // Every layer is gathered before its forward and its backward pass in each micro-batch.
  CHECK(count_ops(*zero3.plan, coll::Op::all_gather, LlmGroup::dp) ==
        2 * 8 * zero3.plan->spec.micro_batches());
  CHECK(zero3.it.collectives > zero0.it.collectives);
  // More bytes move (each micro-batch gathers the 2-byte weights twice and scatters the 2-byte
  // gradients, where ZeRO-0 all-reduces FP32 gradients once), though the time need not grow:
  // the optimizer updates only its shard.
  CHECK(zero3.bytes_sent > zero0.bytes_sent);
}

TEST_CASE("llm: gradients are reduced in FP32 for BF16 and in FP16 for FP16 training") {
  // Megatron: --bf16 reduces FP32 main gradients, --fp16 the 16-bit ones; weights move in 16
  // bits either way. With ZeRO-3 (DeepSpeed) gradients move in 16 bits whatever the precision.
  const auto plan = [](const std::string& precision, int zero) {
    return run(scenario_text(1, kSmall,
                             R"("parallel": {"tp": 1, "zero": )" + std::to_string(zero) +
                                 R"(}, "global_batch": 16, "algorithm": "ring", "precision": ")" +
                                 precision + "\""))
        .plan;
  };
  const auto dp_bytes = [](const LlmPlan& p, coll::Op op) {
    std::uint64_t bytes = 0;
    for (const LlmCollective& c : p.collectives)
      if (c.group == LlmGroup::dp && c.call.op == op) bytes += c.call.bytes;
    return bytes;
  };
  const auto bf16 = plan("bf16", 1), fp16 = plan("fp16", 1);
  REQUIRE(dp_bytes(*fp16, coll::Op::reduce_scatter) > 0);
  CHECK(dp_bytes(*bf16, coll::Op::reduce_scatter) == 2 * dp_bytes(*fp16, coll::Op::reduce_scatter));
  CHECK(dp_bytes(*bf16, coll::Op::all_gather) == dp_bytes(*fp16, coll::Op::all_gather));
  for (const LlmCollective& c : bf16->collectives)
    if (c.group == LlmGroup::dp && c.call.op == coll::Op::reduce_scatter)
      CHECK(c.call.dtype == coll::DataType::fp32);
  const auto zero3 = plan("bf16", 3);
  for (const LlmCollective& c : zero3->collectives)
    if (c.group == LlmGroup::dp) CHECK(c.call.dtype == coll::DataType::fp16);
}

TEST_CASE("llm: grad_reduce_dtype bf16 halves the gradient bytes, other dtypes are errors") {
  // Megatron's --grad-reduce-in-bf16 / NeMo's grad_sync_dtype bf16: the reduce-scatters move the
  // 16-bit gradients; the weights' all-gathers are unchanged.
  const auto run_with = [](const std::string& extra) {
    return run(scenario_text(2, kSmall,
                             R"("parallel": {"tp": 1, "zero": 1}, "global_batch": 16,
                                 "algorithm": "ring")" +
                                 extra));
  };
  const auto dp_bytes = [](const LlmPlan& p, coll::Op op) {
    std::uint64_t bytes = 0;
    for (const LlmCollective& c : p.collectives)
      if (c.group == LlmGroup::dp && c.call.op == op) bytes += c.call.bytes;
    return bytes;
  };
  const Run fp32 = run_with(""), explicit_fp32 = run_with(R"(, "grad_reduce_dtype": "fp32")");
  const Run bf16 = run_with(R"(, "grad_reduce_dtype": "bf16")");
  REQUIRE(dp_bytes(*bf16.plan, coll::Op::reduce_scatter) > 0);
  CHECK(dp_bytes(*fp32.plan, coll::Op::reduce_scatter) ==
        2 * dp_bytes(*bf16.plan, coll::Op::reduce_scatter));
  CHECK(dp_bytes(*fp32.plan, coll::Op::all_gather) == dp_bytes(*bf16.plan, coll::Op::all_gather));
  CHECK(explicit_fp32.it.time == fp32.it.time); // fp32 is the default here
  CHECK(bf16.it.exposed_dp < fp32.it.exposed_dp);
  CHECK(bf16.it.time < fp32.it.time);
  CHECK(bf16.it.compute == fp32.it.compute);

  const auto error = [](const std::string& keys) {
    return error_of([&] { load(scenario_text(1, kSmall, keys)); });
  };
  CHECK_THAT(error(R"("parallel": {"tp": 8}, "global_batch": 8, "grad_reduce_dtype": "fp16")"),
             Catch::Contains("/workload/grad_reduce_dtype") && Catch::Contains("bf16"));
  CHECK_THAT(error(R"("parallel": {"tp": 8}, "global_batch": 8, "precision": "fp16",
                      "grad_reduce_dtype": "bf16")"),
             Catch::Contains("/workload/grad_reduce_dtype") && Catch::Contains("fp16"));
  CHECK_THAT(error(R"("parallel": {"tp": 8}, "global_batch": 8, "grad_reduce_dtype": "int8")"),
             Catch::Contains("/workload/grad_reduce_dtype"));
}

TEST_CASE("llm: expert-parallel all-to-all grows with top_k") {
  Picoseconds previous = -1;
  std::uint64_t previous_bytes = 0;
  for (int k : {1, 2, 4}) {
    INFO("top_k " << k);
    const Run r = run(scenario_text(1, moe_model(k),
                                    R"("parallel": {"tp": 1, "ep": 8}, "global_batch": 8,
                                        "algorithm": "ring")"));
    std::uint64_t bytes = 0;
    for (const LlmCollective& c : r.plan->collectives)
      if (c.group == LlmGroup::ep) bytes = c.call.bytes;
    CHECK(bytes > previous_bytes);
    CHECK(r.it.exposed_ep > previous);
    previous_bytes = bytes;
    previous = r.it.exposed_ep;
  }
}

TEST_CASE("llm: a layout over the GPU's memory is refused, saying by how much and what to change") {
  const std::string message = error_of([] {
    load(scenario_text(1, R"("llama2-70b")", R"("parallel": {"tp": 8}, "global_batch": 8)"));
  });
  CHECK_THAT(message, Catch::Contains("/workload/parallel") && Catch::Contains("over by") &&
                          Catch::Contains("GiB") && Catch::Contains("raise \"zero\""));
}

TEST_CASE("llm: bad layouts are errors naming the key and the fix") {
  const auto error = [](const std::string& model, const std::string& keys) {
    return error_of([&] { load(scenario_text(1, model, keys)); });
  };
  CHECK_THAT(error(kSmall, R"("parallel": {"tp": 2, "pp": 2, "dp": 4}, "global_batch": 8)"),
             Catch::Contains("/workload/parallel") && Catch::Contains("16 GPUs"));
  CHECK_THAT(error(R"({"layers": 8, "hidden": 1536, "heads": 12, "ffn": 4096, "seq_len": 512,
                      "vocab": 128})",
                   R"("parallel": {"tp": 8}, "global_batch": 8)"),
             Catch::Contains("/workload/parallel/tp") && Catch::Contains("12 attention heads"));
  CHECK_THAT(error(R"({"layers": 6, "hidden": 1024, "heads": 8, "ffn": 4096, "seq_len": 512,
                      "vocab": 128})",
                   R"("parallel": {"pp": 4, "tp": 2}, "global_batch": 8)"),
             Catch::Contains("/workload/parallel/pp") && Catch::Contains("6 layers"));
  CHECK_THAT(error(kSmall, R"("parallel": {"tp": 1}, "global_batch": 12)"),
             Catch::Contains("/workload/global_batch") && Catch::Contains("micro_batch x dp"));
  CHECK_THAT(error(kSmall, R"("parallel": {"ep": 2}, "global_batch": 8)"),
             Catch::Contains("/workload/parallel/ep") && Catch::Contains("MoE"));
  CHECK_THAT(error(kSmall, R"("parallel": {"tp": 3}, "global_batch": 8)"),
             Catch::Contains("/workload/parallel"));
  CHECK_THAT(error(kSmall, R"("parallel": {"tp": 8}, "global_batch": 16000000)"),
             Catch::Contains("/workload/global_batch") && Catch::Contains("million steps"));
  CHECK_THAT(error(kSmall, R"("parallel": {"tp": 8, "tpp": 1}, "global_batch": 8)"),
             Catch::Contains("tpp"));
  CHECK_THAT(error(kSmall, R"("parallel": {"tp": 8, "overlap_param_gather": true},
                              "global_batch": 8)"),
             Catch::Contains("/workload/parallel/overlap_param_gather") &&
                 Catch::Contains("\"zero\": 1 or 2"));
}

TEST_CASE("llm: every engine runs the iteration's Schedule") {
  Picoseconds compute = 0;
  for (const char* engine : {"analytic", "flow", "packet"}) {
    INFO(engine);
    const std::string text =
        R"({"topology": {"nodes": [{"preset": "dgx-h100", "count": 2}],
                         "fabric": {"type": "single_switch"}},
            "workload": {"type": "llm_training",
                         "model": {"layers": 4, "hidden": 1024, "heads": 16, "ffn": 4096,
                                   "seq_len": 512, "vocab": 1024},
                         "parallel": {"tp": 4, "pp": 2, "dp": 2, "zero": 1,
                                      "sequence_parallel": true},
                         "global_batch": 8},
            "engine": {"type": ")" +
        std::string(engine) + R"("}})";
    const Run r = run(text);
    if (compute == 0) compute = r.it.compute;
    CHECK(r.it.compute == compute); // the same compute steps on every engine
    CHECK(r.it.time > r.it.compute);
    CHECK(r.it.exposed_tp > 0);
    CHECK(r.it.exposed_pp > 0);
  }
}

TEST_CASE("llm: interleaved 1F1B shrinks the bubble by vpp and sends more pipeline messages") {
  // Narayanan et al. 2021, section 2.2.2: with v model chunks per stage the bubble is
  // (p - 1) / (v m) of the ideal time instead of (p - 1) / m, and every micro-batch crosses
  // p v - 1 stage boundaries each way instead of p - 1.
  const int p = 4, m = 8;
  const auto text = [&](int vpp) {
    return scenario_text(1, kSmall,
                         R"("parallel": {"tp": 2, "pp": 4, "vpp": )" + std::to_string(vpp) +
                             R"(}, "global_batch": )" + std::to_string(m) +
                             R"(, "algorithm": "ring")");
  };
  const Run plain = run(text(1));
  const Run interleaved = run(text(2));
  const auto ideal = [](const Run& r) { return double(r.it.time - r.it.bubble); };
  CHECK(plain.it.bubble / ideal(plain) == Approx(double(p - 1) / m).epsilon(0.08));
  CHECK(interleaved.it.bubble / ideal(interleaved) == Approx(double(p - 1) / (2 * m)).epsilon(0.1));
  CHECK(double(interleaved.it.bubble) == Approx(plain.it.bubble / 2.0).epsilon(0.1));
  CHECK(interleaved.it.time < plain.it.time);
  // The same compute on every GPU; more pipeline messages and bytes.
  CHECK(interleaved.it.compute == plain.it.compute);
  const auto sends = [](const Run& r) {
    int n = 0;
    for (const auto& stage : r.plan->stages)
      for (const LlmOp& op : stage) n += op.kind == LlmOpKind::pp_send;
    return n;
  };
  CHECK(sends(plain) == 2 * (p - 1) * m);
  CHECK(sends(interleaved) == 2 * (p * 2 - 1) * m);
  CHECK(interleaved.bytes_sent > plain.bytes_sent);
}

TEST_CASE("llm: interleaving holds 1 + (p - 1) / (p v) times the activations on stage 0") {
  // Korthikanti et al. 2022, section 4.2.3: the first stage holds the activations of
  // p (1 + (p - 1) / (p v)) micro-batches' worth of its layers with the interleaved schedule.
  const auto memory = [](int vpp) {
    return load(scenario_text(1, kSmall,
                              R"("parallel": {"tp": 2, "pp": 4, "vpp": )" + std::to_string(vpp) +
                                  R"(}, "global_batch": 16, "algorithm": "ring")"))
        .workload.llm;
  };
  const LlmMemory plain = llm_memory(memory(1));
  const LlmMemory interleaved = llm_memory(memory(2));
  REQUIRE(plain.stage == 0);
  REQUIRE(interleaved.stage == 0);
  CHECK(interleaved.activations / plain.activations == Approx(1 + 3.0 / 8));
  CHECK(interleaved.parameters == Approx(plain.parameters));
}

TEST_CASE("llm: the interleaved order is Megatron's") {
  LlmParallel layout;
  layout.pp = 4;
  layout.vpp = 2;
  // Stage 0, 8 micro-batches: warm-up (4 - 0 - 1) x 2 + (2 - 1) x 4 = 10 forward passes, micro-
  // batches 0-3 through chunk 0, then 0-3 through chunk 1, then 4-5 through chunk 0.
  const std::vector<LlmPass> order = llm_pipeline_order(layout, 8, 0);
  REQUIRE(order.size() == 32);
  for (int k = 0; k < 11; ++k) CHECK(order[std::size_t(k)].forward);
  CHECK(order[4].micro_batch == 0);
  CHECK(order[4].chunk == 1);
  CHECK(order[8].micro_batch == 4);
  CHECK(order[8].chunk == 0);
  // The first backward pass is micro-batch 0 through the last chunk.
  CHECK_FALSE(order[11].forward);
  CHECK(order[11].micro_batch == 0);
  CHECK(order[11].chunk == 1);
  // The last stage's forward transfers wrap to stage 0.
  CHECK(llm_pipeline_peer(layout, 3, true, true) == 0);
  CHECK(llm_pipeline_peer(layout, 0, true, false) == 3);
  CHECK(llm_pipeline_peer(layout, 0, false, true) == 3);
}

TEST_CASE("llm: interleaving needs pp > 2 and micro-batches in groups of pp") {
  const auto error = [](const std::string& keys) {
    return error_of([&] { load(scenario_text(1, kSmall, keys)); });
  };
  CHECK_THAT(error(R"("parallel": {"tp": 4, "pp": 2, "vpp": 2}, "global_batch": 8)"),
             Catch::Contains("/workload/parallel/vpp") && Catch::Contains("pp > 2"));
  CHECK_THAT(error(R"("parallel": {"tp": 2, "pp": 4, "vpp": 2}, "global_batch": 6)"),
             Catch::Contains("/workload/global_batch") && Catch::Contains("groups of pp"));
  CHECK_THAT(error(R"("parallel": {"tp": 2, "pp": 4, "vpp": 4}, "global_batch": 8)"),
             Catch::Contains("/workload/parallel/pp") && Catch::Contains("8 layers"));
}

TEST_CASE("llm: a DP group with several GPUs per node runs NCCL's channels over every NIC") {
  // TP 2 on 2 DGX H100: each DP group has 4 GPUs per node, whose rings NCCL spreads over the
  // four GPUs' NICs (one lane per GPU). With one NIC per node the same bytes share one NIC.
  auto text = [](int nics) {
    return R"({"topology": {"nodes": [{"preset": "dgx-h100", "count": 2, "nics": )" +
           std::to_string(nics) + R"(, "nic_bandwidth_gbps": 400}],
                         "fabric": {"type": "single_switch"}},
            "workload": {"type": "llm_training", "model": )" +
           kSmall + R"(, "parallel": {"tp": 2, "pp": 1, "dp": 8}, "global_batch": 8}})";
  };
  const Run spread = run(text(8));
  const Run one = run(text(1));
  int dp_collectives = 0;
  for (const LlmCollective& c : spread.plan->collectives) {
    if (c.group != LlmGroup::dp) continue;
    ++dp_collectives;
    INFO(c.nccl_choice);
    // A ring needs one lane per GPU of a node, a double binary tree two.
    CHECK(c.lanes <= (c.call.algorithm == "nccl_ring" ? 4 : 8));
    CHECK(c.lanes > 1);
    // A lane per program channel: one per NCCL channel, four for NVLS-Tree's warp groups.
    CHECK(c.lanes == (c.call.algorithm == "nvls_tree" ? 4 : 1) * c.call.params.channels);
  }
  CHECK(dp_collectives > 0);
  for (const LlmCollective& c : spread.plan->collectives)
    if (c.group == LlmGroup::tp) CHECK(c.lanes == 1); // inside a node: one lane
  // Eight NICs carry the DP traffic faster than one.
  CHECK(spread.it.exposed_dp < one.it.exposed_dp);
  CHECK(spread.it.time < one.it.time);
}

TEST_CASE("llm: overlapped parameter all-gathers run in the next forward pass, not after the "
          "optimizer") {
  auto text = [](bool overlap) {
    return scenario_text(2, kSmall,
                         R"("parallel": {"tp": 2, "dp": 8, "zero": 1, "overlap_param_gather": )" +
                             std::string(overlap ? "true" : "false") +
                             R"(}, "global_batch": 16, "micro_batch": 1)");
  };
  const Run after = run(text(false));
  const Run overlapped = run(text(true));
  // The same weights are gathered (in buckets of whole layers instead of equal parts: the bytes
  // agree to rounding); the compute does not change.
  CHECK(count_ops(*overlapped.plan, coll::Op::all_gather, LlmGroup::dp) > 1);
  CHECK(static_cast<double>(overlapped.bytes_sent) ==
        Approx(static_cast<double>(after.bytes_sent)).epsilon(1e-6));
  CHECK(overlapped.it.compute == after.it.compute);
  // After the optimizer nothing hides them; in the forward pass only the first bucket is exposed.
  CHECK(overlapped.it.exposed_dp < after.it.exposed_dp);
  CHECK(overlapped.it.time < after.it.time);
  // The forward pass of stage 0 waits for its weights: the first all-gather comes before any
  // compute, and no all-gather follows the optimizer.
  const std::vector<LlmOp>& ops = overlapped.plan->stages.front();
  CHECK(ops.front().kind == LlmOpKind::dp);
  const auto optimizer = std::find_if(
      ops.begin(), ops.end(), [](const LlmOp& op) { return op.kind == LlmOpKind::optimizer; });
  CHECK(
      std::none_of(optimizer, ops.end(), [](const LlmOp& op) { return op.kind == LlmOpKind::dp; }));
}

namespace {

// One DGX H100, tp 8 with sequence parallelism, ring collectives (so that the bytes of the
// overlapped and the blocking collectives compare: both are rings), with or without TP
// communication overlap.
std::string tp_overlap_text(bool overlap, const std::string& engine = "analytic",
                            const std::string& model = kSmall) {
  return R"({"topology": {"nodes": [{"preset": "dgx-h100", "count": 1}],
                          "fabric": {"type": "single_switch"}},
             "engine": {"type": ")" +
         engine + R"("},
             "workload": {"type": "llm_training", "model": )" +
         model + R"(, "algorithm": "ring",
                          "parallel": {"tp": 8, "sequence_parallel": true, "tp_comm_overlap": )" +
         (overlap ? "true" : "false") + R"(}, "global_batch": 4}})";
}

} // namespace

TEST_CASE("llm: TP communication overlap hides the TP collectives behind their GEMMs") {
  const Run blocking = run(tp_overlap_text(false));
  const Run overlapped = run(tp_overlap_text(true));
  // The same activations move (the ring exchange is a ring all-gather's steps; the reduce-scatter
  // runs as 4 chunks of a quarter each).
  CHECK(overlapped.bytes_sent == blocking.bytes_sent);
  // Most of the TP time hides behind the GEMMs: what stays exposed is the last reduce-scatter
  // chunk of each block and whatever a chunk's transfer takes beyond its GEMM chunk.
  CHECK(blocking.it.exposed_tp > 0);
  CHECK(overlapped.it.exposed_tp > 0);
  CHECK(overlapped.it.exposed_tp < blocking.it.exposed_tp / 2);
  CHECK(overlapped.it.time < blocking.it.time);
  // The GEMMs beside an SM-based reduce-scatter run on 116 of the H100's 132 SMs (Transformer
  // Engine's 16-SM margin): compute grows, by less than 132/116 of it.
  CHECK(overlapped.it.compute > blocking.it.compute);
  CHECK(static_cast<double>(overlapped.it.compute) <
        static_cast<double>(blocking.it.compute) * 132.0 / 116.0);
  // The plan: every all-gather of a layer is a ring exchange whose receives the GEMM chunks wait
  // for (7 per exchange on tp 8), and the forward reduce-scatters run in 4 chunks.
  int exchanges = 0, receive_waits = 0, chunked = 0;
  const std::vector<LlmOp>& ops = overlapped.plan->stages.front();
  for (const LlmOp& op : ops) {
    if (op.kind == LlmOpKind::tp_wait && op.part >= 0) ++receive_waits;
    if (op.kind != LlmOpKind::tp_launch) continue;
    const LlmCollective& c = overlapped.plan->collectives[static_cast<std::size_t>(op.collective)];
    if (c.exchange) {
      ++exchanges;
      CHECK(c.receives.size() == 8u * 7u);
    }
    if (c.call.op == coll::Op::reduce_scatter && c.call.bytes * 4 == 2ull * 2048 * 4096) ++chunked;
  }
  const int blocks = 8 * 2 * 4;   // layers x (attention, FFN) x micro-batches
  CHECK(exchanges == 2 * blocks); // forward and backward
  CHECK(receive_waits == 7 * exchanges);
  CHECK(chunked == 4 * blocks);
  // The default is off: no overlap ops.
  CHECK(std::none_of(blocking.plan->stages.front().begin(), blocking.plan->stages.front().end(),
                     [](const LlmOp& op) { return op.kind == LlmOpKind::tp_launch; }));
}

TEST_CASE("llm: the flow and packet engines run the TP-overlapped Schedule") {
  for (const char* engine : {"flow", "packet"}) {
    INFO(engine);
    const std::string model = R"({"layers": 2, "hidden": 1024, "heads": 16, "ffn": 4096,
                                  "seq_len": 512, "vocab": 1024})";
    const Run blocking = run(tp_overlap_text(false, engine, model));
    const Run overlapped = run(tp_overlap_text(true, engine, model));
    // The same bytes and compute; whether the overlap pays depends on the engine's per-message
    // cost: the chunks of this small model's 1 MiB collectives are latency-bound.
    CHECK(overlapped.bytes_sent == blocking.bytes_sent);
    CHECK(overlapped.it.compute >= blocking.it.compute);
    CHECK(overlapped.it.time >= overlapped.it.compute);
    CHECK(overlapped.it.exposed_tp > 0);
  }
}

TEST_CASE("llm: TP communication overlap needs tp > 1, sequence parallelism and TP in a node") {
  auto error = [](int nodes, const std::string& parallel) {
    return error_of([&] {
      load(scenario_text(nodes, kSmall, R"("parallel": )" + parallel + R"(, "global_batch": 8)"));
    });
  };
  CHECK_THAT(error(1, R"({"tp": 1, "tp_comm_overlap": true})"),
             Catch::Contains("/workload/parallel/tp_comm_overlap") &&
                 Catch::Contains("\"sequence_parallel\": true"));
  CHECK_THAT(error(1, R"({"tp": 8, "tp_comm_overlap": true})"),
             Catch::Contains("/workload/parallel/tp_comm_overlap") &&
                 Catch::Contains("\"tp\" > 1"));
  CHECK_THAT(error(2, R"({"tp": 16, "sequence_parallel": true, "tp_comm_overlap": true})"),
             Catch::Contains("/workload/parallel/tp_comm_overlap") &&
                 Catch::Contains("inside one node"));
  // The API's validation says the same.
  LlmSpec spec =
      load(scenario_text(1, kSmall, R"("parallel": {"tp": 8}, "global_batch": 8)")).workload.llm;
  spec.parallel.tp_comm_overlap = true;
  CHECK_THAT(error_of([&] { validate_llm(spec, 8, "/workload"); }),
             Catch::Contains("/workload/parallel/tp_comm_overlap"));
}

TEST_CASE("llm: compute ops carry their memory-bound share for the compute slowdown") {
  const Run r = run(scenario_text(1, kSmall, R"("parallel": {"tp": 2}, "global_batch": 8)"));
  const std::vector<LlmOp>& ops = r.plan->stages.front();
  int layers = 0;
  const LlmOp* last = nullptr;
  for (const LlmOp& op : ops) {
    if (op.kind != LlmOpKind::compute || op.duration == 0) continue;
    CHECK(op.memory_bound_share >= 0);
    CHECK(op.memory_bound_share <= 1);
    if (op.memory_bound_share > 0 && op.memory_bound_share < 0.5) ++layers; // mostly GEMMs
    last = &op;
  }
  CHECK(layers >= 4 * 8); // every block's attention and FFN, forward and backward
  REQUIRE(last != nullptr);
  CHECK(last->memory_bound_share == 1.0); // the optimizer streams its state
}
