// workload.type = "llm_training": the model (a bundled name or an inline shape), the layout, the
// batch, precision and recomputation, resolved against the cluster (GPU model, nodes, NCCL's view
// of each parallel group), then validated: layout, memory, and a plan of the iteration.
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/topologies/cluster_spec.hpp"
#include "workload_parser.hpp"

#include <map>

namespace ddlsim::detail {
namespace {

models::LlmShape parse_shape(const JsonValue& value) {
  if (value.raw().is_string())
    return models::find_llm_shape(value.non_empty_string(), value.path());
  JsonObject o = value.object();
  models::LlmShape s;
  if (auto v = o.optional("name")) s.name = v->non_empty_string();
  s.source = "inline";
  s.layers = static_cast<int>(o.required("layers").integer(1, 100'000));
  const JsonValue hidden = o.required("hidden");
  s.hidden = hidden.integer(1, 1 << 24);
  const JsonValue heads = o.required("heads");
  s.heads = static_cast<int>(heads.integer(1, 1 << 16));
  s.kv_heads = s.heads;
  if (auto v = o.optional("kv_heads")) {
    s.kv_heads = static_cast<int>(v->integer(1, s.heads));
    if (s.heads % s.kv_heads != 0)
      v->fail("the " + std::to_string(s.heads) + " heads must split evenly into " +
              std::to_string(s.kv_heads) + " KV groups; use a divisor of heads");
  }
  if (s.hidden % s.heads != 0)
    hidden.fail("hidden " + std::to_string(s.hidden) + " is not a multiple of the " +
                std::to_string(s.heads) + " heads; every head needs the same size");
  s.ffn = o.required("ffn").integer(1, 1 << 26);
  s.seq_len = static_cast<int>(o.required("seq_len").integer(1, 1 << 24));
  s.vocab = o.required("vocab").integer(1, 1 << 26);
  if (auto v = o.optional("ffn_type"))
    s.gated_ffn = v->choice(std::vector<std::string>{"swiglu", "gelu"}) == "swiglu";
  if (auto v = o.optional("tied_embeddings")) s.tied_embeddings = v->boolean();
  if (auto v = o.optional("moe")) {
    JsonObject m = v->object();
    models::MoeShape moe;
    moe.experts = static_cast<int>(m.required("experts").integer(1, 1 << 16));
    const JsonValue top_k = m.required("top_k");
    moe.top_k = static_cast<int>(top_k.integer(1, 1 << 16));
    if (moe.top_k > moe.experts)
      top_k.fail("top_k " + std::to_string(moe.top_k) + " exceeds the " +
                 std::to_string(moe.experts) + " experts");
    if (auto c = m.optional("capacity_factor")) moe.capacity_factor = c->number(1, 64);
    moe.expert_ffn = s.ffn;
    if (auto f = m.optional("expert_ffn")) moe.expert_ffn = f->integer(1, 1 << 26);
    if (auto e = m.optional("shared_experts"))
      moe.shared_experts = static_cast<int>(e->integer(0, 1 << 10));
    if (auto d = m.optional("dense_layers"))
      moe.dense_layers = static_cast<int>(d->integer(0, s.layers - 1));
    m.finish();
    s.moe = moe;
  }
  o.finish();
  return s;
}

// NCCL's view of a communicator of the job's ranks `members` (its nodes and GPUs per node), or
// null where NCCL's model cannot describe it (the collectives then run ddlsim's ring).
std::shared_ptr<const models::NcclTuner> nccl_of_group(const topo::ClusterSpec& cluster,
                                                       const std::vector<int>& node_of_gpu,
                                                       const std::vector<int>& members) {
  if (members.size() < 2) return nullptr;
  std::map<int, int> per_node;
  for (int r : members) ++per_node[node_of_gpu[static_cast<std::size_t>(r)]];
  int local = 0;
  for (const auto& [node, count] : per_node) local = std::max(local, count);
  topo::ClusterSpec view = cluster;
  view.node_groups.resize(1);
  view.node_groups.front().count = static_cast<int>(per_node.size());
  view.node_groups.front().spec.gpus = local;
  try {
    return std::make_shared<const models::NcclTuner>(
        models::describe_nccl(view, static_cast<int>(members.size())));
  } catch (const InputError&) {
    return nullptr;
  }
}

} // namespace

models::LlmSpec parse_llm(JsonObject& workload, const topo::ClusterSpec& cluster,
                          bool check_memory) {
  models::LlmSpec spec;
  const std::string where = workload.path();
  spec.shape = parse_shape(workload.required("model"));
  if (auto v = workload.optional("seq_len"))
    spec.shape.seq_len = static_cast<int>(v->integer(1, 1 << 24));
  std::vector<std::string> gpu_models;
  for (const topo::NodeGroup& group : cluster.node_groups)
    for (int i = 0; i < group.count; ++i)
      for (int g = 0; g < group.spec.gpus; ++g) gpu_models.push_back(group.spec.gpu_model);
  const int total = static_cast<int>(gpu_models.size());
  for (const std::string& model : gpu_models)
    if (model != gpu_models.front())
      throw InputError(where, "large-model training runs on one GPU model; the cluster mixes \"" +
                                  gpu_models.front() + "\" and \"" + model + "\"");
  spec.gpu = models::find_gpu(gpu_models.front(),
                              cluster.json_path + "/nodes/0/gpu_model (large-model training needs "
                                                  "a GPU preset)");

  const JsonValue parallel = workload.required("parallel");
  JsonObject p = parallel.object();
  models::LlmParallel& layout = spec.parallel;
  auto degree = [&](const char* key, int& out) {
    if (auto v = p.optional(key)) out = static_cast<int>(v->integer(1, 1 << 20));
  };
  degree("tp", layout.tp);
  degree("pp", layout.pp);
  degree("vpp", layout.vpp);
  degree("ep", layout.ep);
  if (auto v = p.optional("dp")) {
    layout.dp = static_cast<int>(v->integer(1, 1 << 20));
  } else {
    const std::int64_t tp_pp = std::int64_t{layout.tp} * layout.pp; // no int overflow
    if (total % tp_pp != 0)
      parallel.fail("tp x pp = " + std::to_string(tp_pp) + " does not divide the cluster's " +
                    std::to_string(total) +
                    " GPUs, so dp cannot be derived; change tp or pp, or give dp");
    layout.dp = static_cast<int>(total / tp_pp);
  }
  if (auto v = p.optional("zero")) layout.zero = static_cast<int>(v->integer(0, 3));
  if (auto v = p.optional("sequence_parallel")) layout.sequence_parallel = v->boolean();
  if (auto v = p.optional("overlap_param_gather")) {
    layout.overlap_param_gather = v->boolean();
    if (layout.overlap_param_gather && layout.zero != 1 && layout.zero != 2)
      v->fail("overlaps the all-gathers of ZeRO 1 and 2 (the distributed optimizer's updated "
              "weights); set \"zero\": 1 or 2, or leave it out");
  }
  if (auto v = p.optional("tp_comm_overlap")) {
    layout.tp_comm_overlap = v->boolean();
    if (layout.tp_comm_overlap && (layout.tp < 2 || !layout.sequence_parallel))
      v->fail("overlaps the TP all-gathers and reduce-scatters of sequence parallelism (Megatron "
              "asserts --sequence-parallel with --tp-comm-overlap); set \"tp\" > 1 and "
              "\"sequence_parallel\": true, or leave it out");
  }
  p.finish();

  spec.global_batch = static_cast<int>(workload.required("global_batch").integer(1, 1 << 24));
  if (auto v = workload.optional("micro_batch"))
    spec.micro_batch = static_cast<int>(v->integer(1, 1 << 16));
  if (auto v = workload.optional("precision")) {
    const std::string precision = v->choice(std::vector<std::string>{"bf16", "fp16", "fp8"});
    spec.precision = precision == "fp8"    ? models::LlmPrecision::fp8
                     : precision == "fp16" ? models::LlmPrecision::fp16
                                           : models::LlmPrecision::bf16;
    if (spec.precision == models::LlmPrecision::fp8 && spec.gpu.fp8_flops <= 0)
      v->fail("the " + spec.gpu.name + " has no FP8 tensor cores; use \"bf16\"");
  }
  if (auto v = workload.optional("grad_reduce_dtype")) {
    // Megatron's --grad-reduce-in-bf16 (Megatron-Bridge ddp.grad_reduce_in_fp32 = False), NeMo's
    // optim.grad_sync_dtype: the data-parallel gradients' dtype. The 16-bit choice must be the
    // model's own (its gradients are in that dtype).
    const std::string dtype = v->choice(std::vector<std::string>{"fp32", "bf16", "fp16"});
    const bool fp16_model = spec.precision == models::LlmPrecision::fp16;
    if (dtype != "fp32" && (dtype == "fp16") != fp16_model)
      v->fail("the model's gradients are " + std::string(fp16_model ? "fp16" : "bf16") +
              ", so they are reduced in \"fp32\" or \"" + (fp16_model ? "fp16" : "bf16") +
              "\"; change \"grad_reduce_dtype\" or \"precision\"");
    spec.grad_reduce = dtype == "fp32" ? coll::DataType::fp32 : coll::DataType::fp16;
  }
  if (auto v = workload.optional("recompute")) {
    const std::string r = v->choice(std::vector<std::string>{"none", "selective", "full"});
    spec.recompute = r == "full"        ? models::Recompute::full
                     : r == "selective" ? models::Recompute::selective
                                        : models::Recompute::none;
  }
  models::validate_llm(spec, total, where);
  for (int r = 0; r < layout.gpus(); ++r) spec.gpus.push_back(r);
  spec.node_of_gpu = topo::algorithm_node_of_gpu(cluster);
  spec.node_of_gpu.resize(static_cast<std::size_t>(layout.gpus()));

  // NCCL's choice on NVIDIA GPUs unless an algorithm is named.
  const bool nvidia = models::compute_capability(gpu_models.front()) >= 60;
  spec.algorithm = nvidia ? "nccl" : "ring";
  if (auto v = workload.optional("algorithm"))
    spec.algorithm = v->choice(std::vector<std::string>{"nccl", "ring"});
  if (spec.algorithm == "nccl") {
    models::LlmPlan probe;
    probe.spec = spec;
    spec.tp_nccl =
        nccl_of_group(cluster, spec.node_of_gpu, probe.group_members(models::LlmGroup::tp, 0));
    spec.dp_nccl =
        nccl_of_group(cluster, spec.node_of_gpu, probe.group_members(models::LlmGroup::dp, 0));
    spec.ep_nccl =
        nccl_of_group(cluster, spec.node_of_gpu, probe.group_members(models::LlmGroup::ep, 0));
  }
  if (check_memory) models::check_llm_memory(spec, where);
  // Plan once so that what the collectives cannot do is an error at load time.
  (void)models::plan_llm(spec);
  return spec;
}

} // namespace ddlsim::detail
