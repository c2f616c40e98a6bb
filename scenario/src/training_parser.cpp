// workload.type = "training": parses one job (inline in the workload) or a list of `jobs`, and
// resolves each against the cluster: which GPUs (global ranks), their GPU models and nodes.
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/suggest.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/models/transformer_shape.hpp"
#include "workload_parser.hpp"

#include <algorithm>
#include <array>
#include <optional>

namespace ddlsim::detail {
namespace {

// The keys of one job; a workload without "jobs" holds them itself.
constexpr std::array kJobKeys{"name",          "model",
                              "gpus",          "gpu",
                              "batch_per_gpu", "speed",
                              "balance",       "precision",
                              "framework",     "algorithm",
                              "params",        "compression",
                              "adasum",        "parameter_servers",
                              "communicate",   "compute",
                              "seq_len",       "optimizer"};

struct ClusterGpus {
  std::vector<std::string> model; // per global rank
  std::vector<int> node;
};

ClusterGpus cluster_gpus(const topo::ClusterSpec& cluster) {
  ClusterGpus out;
  for (const topo::NodeGroup& group : cluster.node_groups)
    for (int i = 0; i < group.count; ++i)
      for (int g = 0; g < group.spec.gpus; ++g) out.model.push_back(group.spec.gpu_model);
  out.node = topo::algorithm_node_of_gpu(cluster); // an NVLink domain is one node
  return out;
}

// A number or a list of one per GPU.
template <typename T, typename Read>
std::vector<T> per_gpu(const JsonValue& value, std::size_t n, Read read) {
  if (!value.raw().is_array()) return std::vector<T>(n, read(value));
  std::vector<T> out;
  const std::vector<JsonValue> items = value.array(1, 1 << 20);
  if (items.size() != n)
    value.fail("has " + std::to_string(items.size()) + " entries for " + std::to_string(n) +
               " GPUs; give one per GPU of the job, or a single value for all");
  for (const JsonValue& item : items) out.push_back(read(item));
  return out;
}

models::GpuSpec parse_gpu(const JsonValue& value) {
  if (value.raw().is_string()) return models::find_gpu(value.non_empty_string(), value.path());
  JsonObject object = value.object();
  const JsonValue preset = object.required("preset");
  models::GpuSpec gpu = models::find_gpu(preset.non_empty_string(), preset.path());
  if (auto v = object.optional("fp32_tflops")) gpu.fp32_flops = v->positive_number(1e6) * 1e12;
  if (auto v = object.optional("fp16_tflops")) gpu.fp16_flops = v->positive_number(1e6) * 1e12;
  if (auto v = object.optional("memory_gbytes_per_second"))
    gpu.memory_bytes_per_second = v->positive_number(1e6) * 1e9;
  if (auto v = object.optional("memory_efficiency")) gpu.memory_efficiency = v->positive_number(1);
  if (auto v = object.optional("kernel_overhead_us"))
    gpu.kernel_overhead = static_cast<Picoseconds>(v->number(0, 1e6) * kPsPerUs);
  for (const char* precision : {"fp32_efficiency", "fp16_efficiency"}) {
    auto v = object.optional(precision);
    if (!v) continue;
    auto& table =
        std::string(precision) == "fp32_efficiency" ? gpu.fp32_efficiency : gpu.fp16_efficiency;
    JsonObject kinds = v->object();
    for (std::size_t k = 0; k < models::kLayerKinds; ++k)
      if (auto e = kinds.optional(models::to_string(static_cast<models::LayerKind>(k))))
        table[k] = e->positive_number(1);
    kinds.finish();
  }
  object.finish();
  return gpu;
}

// "compute": where the job's compute times come from (models/measured_compute.hpp); without
// it, the roofline.
models::MeasuredCompute parse_compute(const JsonValue& value, const models::JobSpec& job,
                                      const std::filesystem::path& base_dir) {
  models::MeasuredCompute compute;
  JsonObject object = value.object();
  const std::optional<JsonValue> throughput = object.optional("single_gpu_samples_per_second");
  const std::optional<JsonValue> profile = object.optional("layer_times");
  if (throughput.has_value() == profile.has_value())
    value.fail("give exactly one of \"single_gpu_samples_per_second\" (the samples/s one GPU "
               "measured alone at this batch and precision) or \"layer_times\" (a .csv or "
               "Chrome-trace .json of per-layer times)");
  if (throughput) {
    compute.source = models::ComputeSource::measured_throughput;
    compute.samples_per_second = per_gpu<double>(
        *throughput, job.gpus.size(), [](const JsonValue& x) { return x.positive_number(1e9); });
    if (auto b = object.optional("batch"))
      b->fail("\"batch\" applies to \"layer_times\"; the measured throughput is at the job's "
              "batch_per_gpu");
    if (auto a = object.optional("accumulation_steps"))
      compute.accumulation_steps = static_cast<int>(a->integer(1, 1 << 20));
  } else {
    if (auto a = object.optional("accumulation_steps"))
      a->fail("\"accumulation_steps\" applies to \"single_gpu_samples_per_second\" (the steps "
              "of the 1-GPU run that measured it); layer times are per pass");
    compute.source = models::ComputeSource::layer_profile;
    auto loaded = std::make_shared<models::LayerProfile>(models::load_layer_profile(
        profile->non_empty_string(), base_dir, *job.model, profile->path()));
    if (auto b = object.optional("batch")) {
      loaded->batch = static_cast<int>(b->integer(1, 1 << 20));
    } else {
      for (int batch : job.batch)
        if (batch != job.batch.front())
          value.fail("the GPUs have different batches: give \"batch\", the samples per GPU "
                     "the layer times were measured at");
      loaded->batch = job.batch.front();
    }
    compute.profile = std::move(loaded);
  }
  object.finish();
  return compute;
}

models::FrameworkSpec parse_framework(const JsonValue& value) {
  models::FrameworkSpec fw;
  JsonObject object = value.object();
  const std::string type = object.required("type").choice(std::vector<std::string>{
      "ddp", "horovod", "gradientflow", "none", "mgwfbp", "bytescheduler", "byteps"});
  fw.type = type == "ddp"             ? models::Framework::ddp
            : type == "horovod"       ? models::Framework::horovod
            : type == "gradientflow"  ? models::Framework::gradientflow
            : type == "mgwfbp"        ? models::Framework::mgwfbp
            : type == "bytescheduler" ? models::Framework::bytescheduler
            : type == "byteps"        ? models::Framework::byteps
                                      : models::Framework::none;
  constexpr std::uint64_t kMax = 1ull << 40;
  auto only = [&](const char* key, models::Framework framework) {
    auto v = object.optional(key);
    if (v && fw.type != framework)
      v->fail(std::string(key) + " applies to framework \"" +
              std::string(models::to_string(framework)) + "\", not \"" + type + "\"");
    return v;
  };
  if (auto v = only("bucket_cap", models::Framework::ddp)) fw.bucket_cap_bytes = v->bytes(1, kMax);
  if (auto v = only("first_bucket", models::Framework::ddp))
    fw.first_bucket_bytes = v->bytes(1, kMax);
  if (auto v = only("fusion_threshold", models::Framework::horovod))
    fw.fusion_threshold_bytes = v->bytes(0, kMax); // 0: fusion off (per tensor)
  if (auto v = only("cycle_time_ms", models::Framework::horovod))
    fw.cycle_time = static_cast<Picoseconds>(v->positive_number(1e4) * 1e9);
  if (auto v = only("lazy_threshold", models::Framework::gradientflow))
    fw.lazy_threshold_bytes = v->bytes(1, kMax);
  // The all-reduce cost model that MG-WFBP and ByteScheduler plan with.
  auto planned = [&](const char* key) {
    auto v = object.optional(key);
    if (v && fw.type != models::Framework::mgwfbp && fw.type != models::Framework::bytescheduler)
      v->fail(std::string(key) + " applies to frameworks \"mgwfbp\" and \"bytescheduler\", not \"" +
              type + "\"");
    return v;
  };
  if (auto v = only("partition_parameters", models::Framework::bytescheduler))
    fw.partition_parameters = static_cast<std::uint64_t>(v->integer(1, INT64_MAX));
  if (auto v = only("credit_parameters", models::Framework::bytescheduler))
    fw.credit_parameters = static_cast<std::uint64_t>(v->integer(1, INT64_MAX));
  if (auto v = only("partition_bytes", models::Framework::byteps))
    fw.partition_bytes = v->bytes(1, kMax);
  auto startup = planned("startup_us");
  auto bandwidth = planned("bandwidth_gbps");
  if (startup.has_value() != bandwidth.has_value())
    (startup ? *startup : *bandwidth)
        .fail("give both \"startup_us\" and \"bandwidth_gbps\" (the all-reduce cost a + M/b), "
              "or neither (NCCL's model of the all-reduce)");
  if (startup) {
    fw.startup = static_cast<Picoseconds>(startup->number(0, 1e9) * kPsPerUs);
    fw.bytes_per_second = bandwidth->positive_number(1e6) * 1e9 / 8;
  }
  if (auto v = object.optional("accumulation_steps"))
    fw.accumulation_steps = static_cast<int>(v->integer(1, 1 << 16));
  if (auto v = object.optional("streams")) fw.streams = static_cast<int>(v->integer(1, 1 << 16));
  object.finish();
  return fw;
}

// NCCL's view of the job's GPUs, for algorithm "nccl" (the default on NVIDIA GPUs). The job is
// described as the first of the cluster's GPUs, as many as it has (NCCL sees one communicator of
// that size; jobs placed elsewhere on a mixed cluster are approximated).
std::shared_ptr<const models::NcclTuner> nccl_of_job(const topo::ClusterSpec& cluster,
                                                     const models::JobSpec& job) {
  return std::make_shared<const models::NcclTuner>(
      models::describe_nccl(cluster, static_cast<int>(job.gpus.size())));
}

// Whether NCCL would run this job's all-reduces: every GPU is an NVIDIA one NCCL supports
// (compute capability 6.0 or later, as the collective workload decides).
bool nccl_runs_on(const ClusterGpus& gpus, const models::JobSpec& job) {
  for (int r : job.gpus)
    if (models::compute_capability(gpus.model[std::size_t(r)]) < 60) return false;
  return true;
}

// {"architecture": "bert" | "gpt2", "layers", "hidden", "heads", "ffn" (4 x hidden), "seq_len",
// "vocab", "positions" (seq_len), "name"}: a transformer given by its shape.
models::Model parse_transformer(const JsonValue& value, std::optional<int> seq_len) {
  JsonObject object = value.object();
  models::TransformerShape shape;
  shape.kind =
      object.required("architecture").choice(std::vector<std::string>{"bert", "gpt2"}) == "gpt2"
          ? models::TransformerKind::gpt2
          : models::TransformerKind::bert;
  const auto size = [&](const char* key) {
    return static_cast<int>(object.required(key).integer(1, 1 << 20));
  };
  shape.layers = size("layers");
  shape.hidden = size("hidden");
  shape.heads = size("heads");
  shape.vocab = size("vocab");
  shape.ffn = 4 * shape.hidden;
  if (auto v = object.optional("ffn")) shape.ffn = static_cast<int>(v->integer(1, 1 << 22));
  if (seq_len) {
    if (object.has("seq_len"))
      object.required("seq_len").fail("the job's \"seq_len\" gives it too; keep one");
    shape.seq_len = *seq_len;
  } else {
    shape.seq_len = size("seq_len");
  }
  shape.positions = shape.seq_len;
  if (auto v = object.optional("positions"))
    shape.positions = static_cast<int>(v->integer(1, 1 << 20));
  std::string name = "transformer";
  if (auto v = object.optional("name")) name = v->non_empty_string();
  object.finish();
  if (const std::string why = models::transformer_shape_error(shape); !why.empty()) value.fail(why);
  return models::transformer_model(shape, name);
}

// "model": a zoo name, a model file or a transformer shape; the job's "seq_len" re-derives a
// bundled transformer (bert_base, bert_large, gpt2_medium) at that sequence length.
models::Model parse_job_model(JsonObject& object, const std::filesystem::path& base_dir) {
  const JsonValue model = object.required("model");
  std::optional<int> seq_len;
  std::optional<JsonValue> seq_value = object.optional("seq_len");
  if (seq_value) seq_len = static_cast<int>(seq_value->integer(1, 1 << 20));
  if (model.raw().is_object()) return parse_transformer(model, seq_len);
  const std::string name = model.non_empty_string();
  if (!seq_len) return models::load_model(name, base_dir, model.path());
  std::optional<models::TransformerShape> shape = models::zoo_transformer_shape(name);
  if (!shape)
    seq_value->fail("sets the sequence length of a bundled transformer (bert_base, bert_large, "
                    "gpt2_medium) or of a shape given as \"model\": {\"architecture\", ...}; \"" +
                    name + "\" is neither");
  shape->seq_len = *seq_len;
  if (const std::string why = models::transformer_shape_error(*shape); !why.empty())
    seq_value->fail(why + " (" + name + ")");
  return models::transformer_model(*shape, name);
}

models::JobSpec parse_job(JsonObject& object, const ClusterGpus& gpus,
                          const topo::ClusterSpec& cluster, std::vector<int>& used, int& next_free,
                          const std::filesystem::path& base_dir, const std::string& default_name) {
  models::JobSpec job;
  job.name = default_name;
  if (auto v = object.optional("name")) job.name = v->non_empty_string();
  job.model = std::make_shared<const models::Model>(parse_job_model(object, base_dir));
  // GPUs: a count (the next free GPUs in rank order) or a list of ranks.
  const int total = static_cast<int>(gpus.model.size());
  if (auto v = object.optional("gpus"); v && v->raw().is_array()) {
    for (const JsonValue& rank : v->array(1, 1 << 20)) {
      const int r = static_cast<int>(rank.integer(0, total - 1));
      if (used[std::size_t(r)])
        rank.fail("GPU " + std::to_string(r) + " is already used (by this job or another)");
      used[std::size_t(r)] = 1;
      job.gpus.push_back(r);
    }
  } else {
    const int count = v ? static_cast<int>(v->integer(1, total)) : total - next_free;
    if (next_free + count > total || count < 1) {
      const std::string what = "asks for " + std::to_string(count) + " GPUs but only " +
                               std::to_string(total - next_free) + " of the cluster's " +
                               std::to_string(total) + " are left";
      if (v) v->fail(what + "; lower it or add nodes");
      object.required("model").fail(what);
    }
    for (int r = next_free; r < next_free + count; ++r) {
      if (used[std::size_t(r)])
        throw InputError(object.path() + "/gpus", "GPU " + std::to_string(r) + " is already used");
      used[std::size_t(r)] = 1;
      job.gpus.push_back(r);
    }
  }
  for (int r : job.gpus) next_free = std::max(next_free, r + 1);
  const std::size_t n = job.gpus.size();
  for (int r : job.gpus) job.node_of_gpu.push_back(gpus.node[std::size_t(r)]);
  if (auto v = object.optional("gpu")) {
    job.gpu = per_gpu<models::GpuSpec>(*v, n, parse_gpu);
  } else {
    for (int r : job.gpus)
      job.gpu.push_back(models::find_gpu(gpus.model[std::size_t(r)],
                                         object.path() + " (set \"gpu\": the topology's GPU "
                                                         "model has no preset)"));
  }
  job.speed = std::vector<double>(n, 1.0);
  if (auto v = object.optional("speed"))
    job.speed = per_gpu<double>(*v, n, [](const JsonValue& x) { return x.positive_number(1e3); });
  const JsonValue batch = object.required("batch_per_gpu");
  job.batch = per_gpu<int>(
      batch, n, [](const JsonValue& x) { return static_cast<int>(x.integer(1, 1 << 20)); });
  if (auto v = object.optional("precision")) {
    const std::string precision = v->choice(std::vector<std::string>{"fp32", "fp16", "tf32"});
    job.precision = precision == "fp16"   ? models::Precision::fp16
                    : precision == "tf32" ? models::Precision::tf32
                                          : models::Precision::fp32;
    for (const models::GpuSpec& gpu : job.gpu)
      if (job.precision == models::Precision::tf32 && gpu.tf32_flops <= 0)
        v->fail("the " + gpu.name +
                " has no TF32 tensor cores (Ampere and later have); use "
                "\"fp32\" or \"fp16\"");
  }
  if (auto v = object.optional("balance"); v && v->boolean()) {
    if (object.has("compute"))
      v->fail("balancing splits the batch by the roofline's speeds; with a measured \"compute\" "
              "give batch_per_gpu per GPU instead");
    int sum = 0;
    for (int b : job.batch) sum += b;
    job.batch = models::balanced_batches(*job.model, job.gpu, job.speed, job.precision, sum);
  }
  if (auto v = object.optional("compute")) job.compute = parse_compute(*v, job, base_dir);
  if (auto v = object.optional("optimizer")) {
    const std::string optimizer = v->choice(std::vector<std::string>{"sgd", "adam", "lamb"});
    job.optimizer = optimizer == "lamb"   ? models::Optimizer::lamb
                    : optimizer == "adam" ? models::Optimizer::adam
                                          : models::Optimizer::sgd;
  }
  std::optional<JsonValue> framework = object.optional("framework");
  if (framework) job.framework = parse_framework(*framework);
  std::optional<JsonValue> algorithm = object.optional("algorithm");
  if (algorithm) job.algorithm = algorithm->non_empty_string();
  if (auto v = object.optional("params")) job.params = parse_params(*v);
  if (auto v = object.optional("communicate")) job.communicate = v->boolean();
  // Choices that imply an algorithm: named conflicts are errors, not silent overrides.
  auto implies = [&](const JsonValue& where, const std::vector<std::string>& allowed) {
    if (!algorithm) {
      job.algorithm = allowed.front();
      return;
    }
    if (std::find(allowed.begin(), allowed.end(), job.algorithm) == allowed.end())
      algorithm->fail("\"" + job.algorithm + "\" cannot do what " + where.path() + " asks; use " +
                      join_choices(allowed) + " or remove \"algorithm\"");
  };
  if (auto v = object.optional("compression")) {
    JsonObject c = v->object();
    const std::string type =
        c.required("type").choice(std::vector<std::string>{"none", "topk", "coarse"});
    if (type != "none") {
      job.params.density = c.required("density").positive_number(1);
      if (type == "topk") {
        job.compression = models::Compression::topk;
        implies(*v, {"topk", "hierarchical_topk"});
      } else {
        job.compression = models::Compression::coarse;
        if (auto b = c.optional("chunk_bytes")) job.params.chunk_bytes = b->bytes(4, 1ull << 40);
        implies(*v, {"coarse_sparse"});
      }
    }
    c.finish();
  }
  if (auto v = object.optional("adasum"); v && v->boolean()) {
    job.adasum = true;
    implies(*v, {"recursive_doubling"});
  }
  if (job.framework.type == models::Framework::byteps)
    implies(*framework, {"byteps"}); // its push/pull, not an all-reduce library's
  if (auto v = object.optional("parameter_servers")) {
    job.params.servers = static_cast<int>(v->integer(1, 1 << 20));
    implies(*v, {"parameter_server"});
  }
  // NCCL's own choice by default on NVIDIA GPUs, unless the job names an algorithm, its params
  // or a choice that implies one (then the job runs what it names).
  const bool named = algorithm || object.has("params") || job.algorithm != "ring";
  if (!named && job.communicate && job.gpus.size() > 1 && nccl_runs_on(gpus, job)) {
    try {
      job.nccl = nccl_of_job(cluster, job);
      job.algorithm = "nccl";
    } catch (const InputError&) {
      job.nccl = nullptr; // a cluster NCCL's model cannot describe keeps the ring
    }
  } else if (job.algorithm == "nccl") {
    job.nccl = nccl_of_job(cluster, job); // named: what NCCL's model rejects is an error
  }
  if (job.params.dedicated_servers) { // servers on the next free GPUs, after the workers
    const int servers = std::max(1, job.params.servers);
    for (int s = 0; s < servers; ++s) {
      while (next_free < total && used[std::size_t(next_free)]) ++next_free;
      if (next_free >= total)
        throw InputError(object.path() + "/params/dedicated_servers",
                         "the " + std::to_string(servers) +
                             " dedicated parameter servers need GPUs after the job's, and the "
                             "cluster has none left; add a node or use colocated servers");
      used[std::size_t(next_free)] = 1;
      job.server_gpus.push_back(next_free++);
    }
  }
  return job;
}

} // namespace

models::JobSpec parse_training_job(const JsonValue& value, const topo::ClusterSpec& cluster,
                                   const std::filesystem::path& base_dir, const std::string& name) {
  const ClusterGpus gpus = cluster_gpus(cluster);
  std::vector<int> used(gpus.model.size(), 0);
  int next_free = 0;
  JsonObject object = value.object();
  models::JobSpec job = parse_job(object, gpus, cluster, used, next_free, base_dir, name);
  object.finish();
  (void)models::plan_training({job}); // what the collectives cannot do is an error now
  return job;
}

TrainingWorkload parse_training(JsonObject& workload, const topo::ClusterSpec& cluster,
                                const std::filesystem::path& base_dir) {
  TrainingWorkload training;
  const ClusterGpus gpus = cluster_gpus(cluster);
  std::vector<int> used(gpus.model.size(), 0);
  int next_free = 0;
  if (auto v = workload.optional("epochs")) training.epochs = v->positive_number(1e6);
  if (auto v = workload.optional("iterations")) {
    if (v->raw().is_string()) {
      if (v->choice(std::vector<std::string>{"auto"}) == "auto") training.iterations = 0;
    } else {
      training.iterations = static_cast<int>(v->integer(1, 64));
    }
  }
  if (auto v = workload.optional("dataset_samples"))
    training.dataset_samples = static_cast<std::uint64_t>(v->integer(1, INT64_MAX));
  if (auto jobs = workload.optional("jobs")) {
    for (std::string_view key : kJobKeys)
      if (workload.has(key))
        workload.required(key).fail("with \"jobs\", every job key goes inside a job");
    const std::vector<JsonValue> list = jobs->array(1, 1024);
    for (std::size_t j = 0; j < list.size(); ++j) {
      JsonObject job = list[j].object();
      training.jobs.push_back(
          parse_job(job, gpus, cluster, used, next_free, base_dir, "job" + std::to_string(j)));
      job.finish();
    }
  } else {
    training.jobs.push_back(parse_job(workload, gpus, cluster, used, next_free, base_dir, "job0"));
  }
  // Plan once now so that what the collectives cannot do is an error at load time.
  (void)models::plan_training(training.jobs);
  return training;
}

} // namespace ddlsim::detail
