#include "ddlsim/models/training.hpp"

#include "gradient_groups.hpp"

#include "ddlsim/collectives/algorithm.hpp"
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/core/input_error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <tuple>

namespace ddlsim::models {
namespace {

using detail::Group;

std::uint64_t element_bytes(Precision precision) {
  return precision == Precision::fp16 ? 2 : 4;
}

// Layers with gradients to all-reduce, in backward (reverse registration) order.
std::vector<int> dense_layers_backward(const Model& model) {
  std::vector<int> layers;
  for (int l = static_cast<int>(model.layers.size()) - 1; l >= 0; --l) {
    const Layer& layer = model.layers[static_cast<std::size_t>(l)];
    if (layer.parameters > 0 && !layer.model_parallel) layers.push_back(l);
  }
  return layers;
}

// Collective i on stream i mod `streams`; each stream gets as many channels as the job's widest
// collective, after the streams before it (channel 0 is the compute program).
void assign_streams(JobPlan& job, int streams) {
  int width = 1;
  for (const PlannedCollective& c : job.collectives)
    if (const coll::Algorithm* a = coll::find_algorithm(c.call.op, c.call.algorithm))
      width = std::max(width, a->channels(c.call));
  for (std::size_t i = 0; i < job.collectives.size(); ++i)
    job.collectives[i].first_channel =
        1 + static_cast<int>(i % static_cast<std::size_t>(std::max(1, streams))) * width;
}

// ByteScheduler's per-layer updates: each layer's forward pass waits for its last partition, and
// the optimizer step is split over the layers by their parameters (the updates ByteScheduler
// runs as each layer's all-reduce ends).
void add_gates(JobPlan& job, const Model& model) {
  job.gate_collective.assign(model.layers.size(), -1);
  std::uint64_t total = 0;
  for (std::size_t c = 0; c < job.collectives.size(); ++c) {
    job.gate_collective[static_cast<std::size_t>(job.collectives[c].first_layer)] =
        static_cast<int>(c);
    total += job.collectives[c].parameters;
  }
  for (ComputeProfile& profile : job.profiles) {
    const Picoseconds optimizer = profile.steps.back().duration;
    profile.layer_update.assign(model.layers.size(), 0);
    Picoseconds given = 0;
    int last = -1;
    for (std::size_t l = 0; l < model.layers.size(); ++l) {
      if (job.gate_collective[l] < 0) continue;
      const double share = static_cast<double>(model.layers[l].parameters) / total;
      profile.layer_update[l] = static_cast<Picoseconds>(std::llround(optimizer * share));
      given += profile.layer_update[l];
      last = static_cast<int>(l);
    }
    if (last >= 0) profile.layer_update[static_cast<std::size_t>(last)] += optimizer - given;
    profile.steps.back().duration = 0;
  }
}

// The consecutive model-parallel layers [first, last], or {-1, -1}.
std::pair<int, int> model_parallel_range(const Model& model, const std::string& where) {
  int first = -1, last = -1;
  for (int l = 0; l < static_cast<int>(model.layers.size()); ++l) {
    if (!model.layers[static_cast<std::size_t>(l)].model_parallel) continue;
    if (first >= 0 && l != last + 1)
      throw InputError(where, "model " + model.name +
                                  ": the model-parallel layers must be "
                                  "consecutive (layer " +
                                  model.layers[static_cast<std::size_t>(l)].name + ")");
    if (first < 0) first = l;
    last = l;
  }
  if (last >= 0 && last + 1 >= static_cast<int>(model.layers.size()))
    throw InputError(where, "model " + model.name +
                                ": a data-parallel layer must follow the model-parallel ones");
  return {first, last};
}

// The layer times of one GPU from the job's compute source (measured_compute.hpp); a measured
// throughput is applied by scale_to_throughput once the whole program is known.
std::vector<LayerTimes> layer_times_of(const Model& model, const GpuSpec& gpu, Precision precision,
                                       int batch, double speed, const MeasuredCompute& compute) {
  std::vector<LayerTimes> times;
  for (std::size_t l = 0; l < model.layers.size(); ++l) {
    const LayerProfile* profile = compute.profile.get();
    if (compute.source == ComputeSource::layer_profile && profile->layers[l]) {
      // Profiled at profile->batch samples: linear in the batch, slowed by 1/speed.
      const double factor = static_cast<double>(batch) / profile->batch / speed;
      const LayerTimes measured = *profile->layers[l];
      times.push_back({static_cast<Picoseconds>(std::llround(measured.forward * factor)),
                       static_cast<Picoseconds>(std::llround(measured.backward * factor))});
    } else {
      times.push_back(layer_times(model.layers[l], gpu, precision, batch, speed));
    }
  }
  return times;
}

// Scales every step so that one GPU's program takes samples / throughput (slowed by 1/speed)
// when it runs `measured_accumulation` passes: the roofline's proportions between layers and
// between the passes and the optimizer stay, its absolute speed is the measurement's. The job's
// own program has `accumulation` passes and the optimizer step last.
void scale_to_throughput(ComputeProfile& profile, int accumulation, int measured_accumulation,
                         double samples_per_second) {
  const double target = static_cast<double>(profile.batch) * measured_accumulation /
                        (samples_per_second * profile.speed) * static_cast<double>(kPsPerSecond);
  Picoseconds passes = 0;
  for (std::size_t i = 0; i + 1 < profile.steps.size(); ++i) passes += profile.steps[i].duration;
  const Picoseconds optimizer = profile.steps.back().duration;
  const double measured_program =
      measured_accumulation == accumulation
          ? static_cast<double>(passes + optimizer)
          : static_cast<double>(passes) / accumulation * measured_accumulation +
                static_cast<double>(optimizer);
  if (measured_program <= 0) return;
  const double factor = target / measured_program;
  for (ComputeStep& step : profile.steps)
    step.duration = static_cast<Picoseconds>(std::llround(step.duration * factor));
}

// A layer's memory-bound share (ComputeStep::memory_bound_share): norms, embedding lookups,
// pooling and elementwise layers stream memory; convolutions, linear layers and attention run
// on the tensor cores, and were measured slowed like GEMMs beside NCCL-like blocks (a 3x3
// convolution and causal attention: tests/data/gpu-overlap/h200-overlap-shapes.tsv).
double memory_bound_share(LayerKind kind) {
  switch (kind) {
  case LayerKind::conv:
  case LayerKind::linear:
  case LayerKind::attention:
    return 0;
  case LayerKind::norm:
  case LayerKind::embedding:
  case LayerKind::pool:
  case LayerKind::elementwise:
    return 1;
  }
  return 0;
}

ComputeProfile make_profile(const Model& model, const GpuSpec& gpu, Precision precision, int batch,
                            double speed, int accumulation, std::pair<int, int> model_parallel,
                            const MeasuredCompute& compute, double samples_per_second,
                            Optimizer optimizer_kind) {
  ComputeProfile profile;
  profile.batch = batch;
  profile.speed = speed;
  const std::vector<LayerTimes> times =
      layer_times_of(model, gpu, precision, batch, speed, compute);
  const int layers = static_cast<int>(model.layers.size());
  const int mp_last = model_parallel.second;
  for (int a = 0; a < accumulation; ++a) {
    for (int l = 0; l < layers; ++l) {
      if (mp_last >= 0 && l == mp_last + 1) profile.steps.push_back({0, -1, false, a, 2 * a});
      profile.steps.push_back({times[static_cast<std::size_t>(l)].forward, l, false, a, -1,
                               memory_bound_share(model.layers[std::size_t(l)].kind)});
    }
    for (int l = layers - 1; l >= 0; --l) {
      if (l == mp_last) profile.steps.push_back({0, -1, true, a, 2 * a + 1});
      profile.steps.push_back({times[static_cast<std::size_t>(l)].backward, l, true, a, -1,
                               memory_bound_share(model.layers[std::size_t(l)].kind)});
    }
  }
  // Model-parallel tables are updated sparsely: only the rows the batch touched.
  std::uint64_t updated = model.dense_parameters();
  for (const Layer& layer : model.layers)
    if (layer.model_parallel)
      updated +=
          std::min<std::uint64_t>(layer.parameters, static_cast<std::uint64_t>(batch) *
                                                        accumulation * layer.activation_bytes / 4);
  Picoseconds optimizer = optimizer_time(updated, gpu, precision, speed, optimizer_kind);
  if (compute.source == ComputeSource::layer_profile && compute.profile->optimizer)
    optimizer = static_cast<Picoseconds>(std::llround(*compute.profile->optimizer / speed));
  profile.steps.push_back({optimizer, -1, false, accumulation - 1, -1, 1.0}); // streams its state
  if (compute.source == ComputeSource::measured_throughput)
    scale_to_throughput(profile, accumulation,
                        compute.accumulation_steps > 0 ? compute.accumulation_steps : accumulation,
                        samples_per_second);
  for (const ComputeStep& step : profile.steps) profile.compute += step.duration;
  return profile;
}

// Cuts the profile's compute step that spans `tick` in two (same layer), so that a wait can name
// the instant, and returns the index of the step that ends at the tick. A tick after the last
// backward step of this profile (a faster GPU) returns that step. Ticks come in increasing order,
// so a cut never moves a step an earlier tick returned.
std::uint32_t cut_at(ComputeProfile& profile, Picoseconds tick) {
  Picoseconds t = 0;
  const std::size_t last_backward = profile.steps.size() - 2; // the optimizer is last
  for (std::size_t i = 0; i < last_backward; ++i) {
    ComputeStep& step = profile.steps[i];
    if (t + step.duration == tick) return static_cast<std::uint32_t>(i);
    if (t < tick && tick < t + step.duration) {
      ComputeStep rest = step;
      rest.duration = t + step.duration - tick;
      step.duration = tick - t;
      profile.steps.insert(profile.steps.begin() + static_cast<std::ptrdiff_t>(i) + 1, rest);
      return static_cast<std::uint32_t>(i);
    }
    t += step.duration;
  }
  return static_cast<std::uint32_t>(last_backward);
}

// The index of the (last piece of the) step of `layer` in pass `pass`.
std::uint32_t find_step(const ComputeProfile& profile, int layer, bool backward, int pass) {
  std::uint32_t found = 0;
  for (std::size_t i = 0; i < profile.steps.size(); ++i) {
    const ComputeStep& step = profile.steps[i];
    if (step.layer == layer && step.backward == backward && step.pass == pass &&
        step.wait_exchange < 0)
      found = static_cast<std::uint32_t>(i);
  }
  return found;
}

// The all-to-alls of the model-parallel layers, then every collective in stream order (by the
// compute step each waits for).
void add_exchanges(JobPlan& job, const JobSpec& spec, std::pair<int, int> model_parallel,
                   const coll::CollectiveCall& base, int accumulation) {
  const Model& model = *spec.model;
  const int n = static_cast<int>(spec.gpus.size());
  std::uint64_t activation = 0;
  for (int l = model_parallel.first; l <= model_parallel.second; ++l)
    activation += model.layers[static_cast<std::size_t>(l)].activation_bytes;
  const std::uint64_t e = element_bytes(spec.precision);
  const int batch = *std::max_element(spec.batch.begin(), spec.batch.end());
  std::uint64_t elements = static_cast<std::uint64_t>(batch) * activation / 4;
  elements = (elements + std::uint64_t(n) - 1) / std::uint64_t(n) * std::uint64_t(n);
  std::vector<PlannedCollective> all = std::move(job.collectives);
  const std::size_t buckets = all.size();
  for (int a = 0; a < accumulation; ++a)
    for (int direction = 0; direction < 2; ++direction) {
      PlannedCollective c;
      c.call.op = coll::Op::all_to_all;
      c.call.ranks = n;
      c.call.dtype = base.dtype;
      c.call.algorithm = "pairwise";
      c.call.bytes = elements * e;
      c.first_layer = model_parallel.first;
      c.last_layer = model_parallel.second;
      for (const ComputeProfile& profile : job.profiles)
        c.ready_step.push_back(direction == 0
                                   ? find_step(profile, model_parallel.second, false, a)
                                   : find_step(profile, model_parallel.second + 1, true, a));
      all.push_back(std::move(c));
    }
  std::vector<std::size_t> order(all.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&all](std::size_t x, std::size_t y) {
    return all[x].ready_step[0] < all[y].ready_step[0];
  });
  job.exchange_collective.assign(std::size_t(2 * accumulation), -1);
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (order[i] >= buckets) job.exchange_collective[order[i] - buckets] = static_cast<int>(i);
    job.collectives.push_back(std::move(all[order[i]]));
  }
}

// NCCL's choice for one gradient bucket (as ncclAllReduce makes it per call): the generator that
// runs its algorithm, its channels, pipeline chunks and protocol, and its per-call overhead.
void resolve_nccl(PlannedCollective& c, const JobSpec& spec, const PlanOptions& options,
                  const std::string& where) {
  if (!spec.nccl)
    throw InputError(where + "/algorithm", "\"nccl\" needs NCCL's description of the job's GPUs, "
                                           "which this caller does not give; name a ddlsim "
                                           "algorithm (e.g. \"nccl_ring\")");
  const NcclTuner& tuner = *spec.nccl;
  const NcclChoice choice =
      tuner.choose(c.call.op, c.call.bytes, [&](NcclAlgorithm a, NcclProtocol) {
        if (nccl_generator(c.call.op, a).empty()) return false;
        return options.switch_steps || (a != NcclAlgorithm::nvls && a != NcclAlgorithm::nvls_tree);
      });
  if (choice.generator.empty())
    throw InputError(where + "/algorithm", "NCCL's choice for a bucket of " +
                                               format_bytes(c.call.bytes) + " (" +
                                               choice.describe() + ") has no ddlsim generator");
  c.call.algorithm = choice.generator;
  c.call.params.channels = choice.channels;
  c.call.params.chunks = nccl_pipeline_chunks(tuner.system(), choice, c.call.bytes);
  c.call.protocol = nccl_protocol(tuner.system(), choice.algorithm, choice.protocol);
  // NCCL's kernel holds one thread block per channel, spread over the generator's programs.
  if (const coll::Algorithm* algorithm = coll::find_algorithm(c.call.op, c.call.algorithm))
    c.call.protocol.blocks_per_program =
        static_cast<double>(choice.channels) / static_cast<double>(algorithm->channels(c.call));
  c.call_overhead = nccl_call_overhead(choice.algorithm, choice.protocol);
  c.nccl_choice = choice.describe();
}

// Gives every collective the index of its protocol in the plan's list.
void index_protocols(TrainingPlan& plan) {
  for (JobPlan& job : plan.jobs)
    for (PlannedCollective& c : job.collectives) {
      auto it = std::find(plan.protocols.begin(), plan.protocols.end(), c.call.protocol);
      if (it == plan.protocols.end()) {
        if (plan.protocols.size() >= 256)
          throw std::logic_error("training plan: more than 256 protocols");
        it = plan.protocols.insert(plan.protocols.end(), c.call.protocol);
      }
      c.protocol = static_cast<std::uint8_t>(it - plan.protocols.begin());
    }
}

void check_job(const JobSpec& job, const std::string& where) {
  const std::size_t n = job.gpus.size();
  if (!job.model) throw InputError(where, "the job has no model");
  if (n == 0) throw InputError(where, "the job has no GPUs");
  if (job.gpu.size() != n || job.speed.size() != n || job.batch.size() != n ||
      job.node_of_gpu.size() != n)
    throw InputError(where, "per-GPU lists (gpu model, speed, batch, node) must have one entry "
                            "per GPU of the job (" +
                                std::to_string(n) + ")");
  for (std::size_t i = 0; i < n; ++i) {
    if (job.batch[i] < 1) throw InputError(where, "every GPU needs a batch of at least 1");
    if (!(job.speed[i] > 0)) throw InputError(where, "every GPU speed must be positive");
  }
  if (job.framework.accumulation_steps < 1)
    throw InputError(where, "accumulation_steps must be at least 1");
  const MeasuredCompute& compute = job.compute;
  if (compute.source == ComputeSource::measured_throughput) {
    if (compute.samples_per_second.size() != n)
      throw InputError(where, "the measured 1-GPU throughput needs one entry per GPU of the job (" +
                                  std::to_string(n) + ")");
    for (double x : compute.samples_per_second)
      if (!(x > 0) || !std::isfinite(x))
        throw InputError(where, "every measured 1-GPU throughput must be a positive number");
  }
  if (job.framework.streams < 1)
    throw InputError(where + "/framework", "streams must be at least 1");
  if (job.framework.type == Framework::bytescheduler) {
    for (const Layer& layer : job.model->layers)
      if (layer.model_parallel)
        throw InputError(where + "/framework", "bytescheduler with model-parallel layers (" +
                                                   layer.name + ") is not modelled; use ddp");
    if (job.framework.partition_parameters < 1 || job.framework.credit_parameters < 1)
      throw InputError(where + "/framework", "partition and credit must be at least 1 parameter");
  }
  if (compute.source == ComputeSource::layer_profile &&
      (!compute.profile || compute.profile->layers.size() != job.model->layers.size() ||
       compute.profile->batch < 1))
    throw InputError(where, "the layer profile does not match model " + job.model->name);
}

} // namespace

std::string_view to_string(Framework framework) {
  switch (framework) {
  case Framework::ddp:
    return "ddp";
  case Framework::horovod:
    return "horovod";
  case Framework::gradientflow:
    return "gradientflow";
  case Framework::none:
    return "none";
  case Framework::mgwfbp:
    return "mgwfbp";
  case Framework::bytescheduler:
    return "bytescheduler";
  case Framework::byteps:
    return "byteps";
  }
  return "?";
}

std::string_view to_string(Compression compression) {
  switch (compression) {
  case Compression::none:
    return "none";
  case Compression::topk:
    return "topk";
  case Compression::coarse:
    return "coarse";
  }
  return "?";
}

int TrainingPlan::job_of_rank(int rank) const {
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const JobSpec& spec = jobs[j].spec;
    if (std::find(spec.gpus.begin(), spec.gpus.end(), rank) != spec.gpus.end() ||
        std::find(spec.server_gpus.begin(), spec.server_gpus.end(), rank) != spec.server_gpus.end())
      return static_cast<int>(j);
  }
  return -1;
}

int TrainingPlan::local_rank(int job, int rank) const {
  const JobSpec& spec = jobs[static_cast<std::size_t>(job)].spec;
  if (auto it = std::find(spec.gpus.begin(), spec.gpus.end(), rank); it != spec.gpus.end())
    return static_cast<int>(it - spec.gpus.begin());
  const auto it = std::find(spec.server_gpus.begin(), spec.server_gpus.end(), rank);
  return it == spec.server_gpus.end()
             ? -1
             : static_cast<int>(spec.gpus.size() + std::size_t(it - spec.server_gpus.begin()));
}

TrainingPlan plan_training(std::vector<JobSpec> jobs, const PlanOptions& options) {
  TrainingPlan plan;
  std::vector<int> owner;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const std::string where = "/workload" + (jobs.size() > 1 ? "/jobs/" + std::to_string(j) : "");
    JobSpec& spec = jobs[j];
    check_job(spec, where);
    JobPlan job;
    const Model& model = *spec.model;
    const int n = static_cast<int>(spec.gpus.size());
    const int accumulation = spec.framework.accumulation_steps;
    const std::pair<int, int> model_parallel = model_parallel_range(model, where);
    // Profiles: one per distinct (GPU model, speed, batch, measured throughput).
    std::map<std::tuple<std::string, double, int, double>, int> index;
    for (int i = 0; i < n; ++i) {
      const double measured = spec.compute.source == ComputeSource::measured_throughput
                                  ? spec.compute.samples_per_second[std::size_t(i)]
                                  : 0.0;
      const auto key = std::make_tuple(spec.gpu[std::size_t(i)].name, spec.speed[std::size_t(i)],
                                       spec.batch[std::size_t(i)], measured);
      auto [it, added] = index.emplace(key, static_cast<int>(job.profiles.size()));
      if (added)
        job.profiles.push_back(make_profile(model, spec.gpu[std::size_t(i)], spec.precision,
                                            spec.batch[std::size_t(i)], spec.speed[std::size_t(i)],
                                            accumulation, model_parallel, spec.compute, measured,
                                            spec.optimizer));
      job.profile_of_gpu.push_back(it->second);
      job.samples_per_iteration += spec.batch[std::size_t(i)] * accumulation;
      const int g = spec.gpus[std::size_t(i)];
      if (g < 0) throw InputError(where, "GPU rank " + std::to_string(g) + " is negative");
      if (std::size_t(g) >= owner.size()) owner.resize(std::size_t(g) + 1, -1);
      if (owner[std::size_t(g)] >= 0)
        throw InputError(where, "GPU " + std::to_string(g) + " is already used by job " +
                                    std::to_string(owner[std::size_t(g)]) +
                                    "; jobs need disjoint GPUs");
      owner[std::size_t(g)] = static_cast<int>(j);
    }
    for (int g : spec.server_gpus) {
      if (g < 0) throw InputError(where, "server GPU rank " + std::to_string(g) + " is negative");
      if (std::size_t(g) >= owner.size()) owner.resize(std::size_t(g) + 1, -1);
      if (owner[std::size_t(g)] >= 0)
        throw InputError(where, "server GPU " + std::to_string(g) + " is already used by job " +
                                    std::to_string(owner[std::size_t(g)]));
      owner[std::size_t(g)] = static_cast<int>(j);
    }
    const std::uint64_t e = element_bytes(spec.precision);
    const std::vector<int> order = dense_layers_backward(model);
    std::vector<Group> groups;
    if (spec.communicate && n > 1 && !order.empty()) {
      const FrameworkSpec& fw = spec.framework;
      switch (fw.type) {
      case Framework::ddp:
        groups = detail::by_size(model, order, e, fw.first_bucket_bytes, fw.bucket_cap_bytes);
        break;
      case Framework::gradientflow:
        groups = detail::by_size(model, order, e, fw.lazy_threshold_bytes, fw.lazy_threshold_bytes);
        break;
      case Framework::horovod:
        groups = detail::by_cycle(
            model, order, e, detail::ready_times(order, job.profiles, fw.accumulation_steps), fw);
        break;
      case Framework::mgwfbp:
        groups = detail::by_merge(model, order, e,
                                  detail::ready_times(order, job.profiles, fw.accumulation_steps),
                                  detail::planning_cost(spec, where));
        break;
      case Framework::bytescheduler:
        groups = detail::by_priority(
            model, order, e, detail::ready_times(order, job.profiles, fw.accumulation_steps), fw,
            detail::planning_cost(spec, where));
        break;
      case Framework::byteps: {
        // BytePS: every gradient is cut into partitions of at most BYTEPS_PARTITION_BYTES, each
        // pushed as soon as its layer's backward is done, the front layers first among those
        // ready (its tensors' priority); no credit (its queues' credit control is off but in the
        // node-local reduce), so the planning cost does not matter.
        FrameworkSpec partitions = fw;
        partitions.partition_parameters = std::max<std::uint64_t>(1, fw.partition_bytes / e);
        partitions.credit_parameters = ~0ull;
        groups = detail::by_priority(
            model, order, e, detail::ready_times(order, job.profiles, fw.accumulation_steps),
            partitions, [](std::uint64_t) { return Picoseconds{0}; });
        break;
      }
      case Framework::none:
        groups = detail::by_size(model, order, e, ~0ull, ~0ull);
        break;
      }
    }
    coll::CollectiveCall base;
    base.op = coll::Op::all_reduce;
    base.ranks = n;
    base.dtype = spec.precision == Precision::fp16 ? coll::DataType::fp16 : coll::DataType::fp32;
    base.reduction = spec.adasum ? coll::Reduction::adasum : coll::Reduction::sum;
    base.algorithm = spec.algorithm;
    base.params = spec.params;
    // Nodes relabelled 0.. in order of first appearance, as the hierarchical generators expect.
    std::map<int, int> node_index;
    for (int node : spec.node_of_gpu) {
      node_index.emplace(node, static_cast<int>(node_index.size()));
      base.node_of_rank.push_back(node_index[node]);
    }
    std::uint64_t offset = 0;
    for (const Group& group : groups) {
      PlannedCollective c;
      c.call = base;
      c.call.bytes = group.parameters * e;
      c.gradient_offset = offset;
      c.parameters = group.parameters;
      c.first_layer = group.first;
      c.last_layer = group.last;
      for (ComputeProfile& profile : job.profiles)
        c.ready_step.push_back(group.tick >= 0
                                   ? cut_at(profile, group.tick)
                                   : find_step(profile, group.first, true, accumulation - 1));
      offset += c.call.bytes;
      job.collectives.push_back(std::move(c));
    }
    job.gradient_bytes = offset;
    if (spec.framework.type == Framework::bytescheduler && !groups.empty()) add_gates(job, model);
    if (model_parallel.first >= 0 && spec.communicate && n > 1)
      add_exchanges(job, spec, model_parallel, base, accumulation);
    for (PlannedCollective& c : job.collectives)
      if (c.call.algorithm == "nccl") resolve_nccl(c, spec, options, where);
    assign_streams(job, spec.framework.streams);
    for (const PlannedCollective& c : job.collectives) {
      try {
        coll::check_call(c.call);
        const coll::Algorithm* algorithm = coll::find_algorithm(c.call.op, c.call.algorithm);
        if (!algorithm)
          throw InputError("algorithm", "unknown " + std::string(coll::to_string(c.call.op)) +
                                            " algorithm \"" + c.call.algorithm + "\"");
        algorithm->check(c.call);
        const int extra = algorithm->total_ranks(c.call) - n;
        if (extra != static_cast<int>(spec.server_gpus.size()))
          throw InputError("algorithm", "needs " + std::to_string(extra) +
                                            " dedicated server GPUs, the job has " +
                                            std::to_string(spec.server_gpus.size()));
      } catch (const InputError& error) {
        throw InputError(where, "the " + std::string(coll::to_string(c.call.op)) + " of " +
                                    format_bytes(c.call.bytes) + " cannot run: " + error.what());
      }
    }
    job.spec = std::move(spec);
    plan.jobs.push_back(std::move(job));
  }
  plan.ranks = static_cast<int>(owner.size());
  index_protocols(plan);
  return plan;
}

} // namespace ddlsim::models

namespace ddlsim::models {

std::vector<int> balanced_batches(const Model& model, const std::vector<GpuSpec>& gpus,
                                  const std::vector<double>& speed, Precision precision,
                                  int total) {
  const std::size_t n = gpus.size();
  if (n == 0) return {};
  const int mean = std::max(1, total / static_cast<int>(n));
  std::vector<double> rate(n);
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    Picoseconds t = 0;
    for (const Layer& layer : model.layers) {
      const LayerTimes times = layer_times(layer, gpus[i], precision, mean, speed[i]);
      t += times.forward + times.backward;
    }
    rate[i] = mean / ps_to_seconds(std::max<Picoseconds>(t, 1));
    sum += rate[i];
  }
  std::vector<int> batch(n);
  std::vector<std::pair<double, std::size_t>> fraction;
  int given = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double share = total * rate[i] / sum;
    batch[i] = std::max(1, static_cast<int>(share));
    given += batch[i];
    fraction.emplace_back(-(share - std::floor(share)), i);
  }
  std::sort(fraction.begin(), fraction.end());
  for (std::size_t k = 0; given < total; k = (k + 1) % n, ++given) ++batch[fraction[k].second];
  for (std::size_t k = n; given > total && k-- > 0;) // only when many shares rounded up to 1
    if (batch[fraction[k].second] > 1) --batch[fraction[k].second], --given;
  return batch;
}

} // namespace ddlsim::models
