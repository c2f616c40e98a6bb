// The data-parallel training iteration, planned: what each GPU computes (forward per layer,
// backward per layer in reverse order, the optimizer) and which collectives move the gradients
// (one per DDP bucket, Horovod fusion group or GradientFlow lazy group), in which order and
// after which compute step. iteration_schedule.hpp turns a plan into one coll::Schedule.
//
// Frameworks (gradient becomes ready when its layer's backward finishes; layers are the zoo's,
// so buckets are cut at layer granularity, not per parameter tensor):
//  ddp:          PyTorch DistributedDataParallel. Gradients packed into buckets in reverse
//                registration order; a bucket closes once it holds at least its cap (the first
//                bucket first_bucket_bytes, the others bucket_cap_bytes: PyTorch's defaults 1 MiB
//                and 25 MiB), and is all-reduced as soon as its last gradient is ready, on one
//                communication stream (buckets in order), overlapped with the rest of backward.
//  horovod:      tensor fusion. Every cycle_time from the start of backward, the gradients ready
//                on every rank and not yet sent are fused, in order, into all-reduces of at most
//                fusion_threshold_bytes (64 MiB; a bigger tensor goes alone); each starts at its
//                tick (the compute stream is cut there, so a wait can name the tick).
//  gradientflow: lazy all-reduce (Sun et al. 2019): ready gradients accumulate in a pool that is
//                all-reduced once it holds at least lazy_threshold_bytes.
//  none:         no overlap: one all-reduce of every gradient after the whole backward pass.
//  mgwfbp:       MG-WFBP (Shi, Chu and Li, INFOCOM 2019): layer by layer in backward order, a
//                layer's gradient is merged into the next layer's all-reduce when that layer's
//                gradient is ready before this one's all-reduce would end and either this
//                all-reduce could not have started yet or the wait for the next gradient is
//                shorter than the startup time a it saves (all-reduce time a + M / b); each
//                merged group is all-reduced once its last gradient is ready.
//  bytescheduler: ByteScheduler (Peng et al., SOSP 2019) over all-reduce: every gradient is cut
//                into partitions of at most partition_parameters; a partition is posted once its
//                layer's gradient is ready, the highest-priority ready one first (the layer
//                nearest the input), as long as the posted and unfinished partitions hold at most
//                credit_parameters (or none is posted); once a layer's partitions are all-reduced
//                its parameters are updated (the optimizer's share of that layer), and the next
//                iteration's forward pass of that layer waits for that alone, not for the whole
//                model (ByteScheduler's forward pre-hooks). The order is planned with the
//                all-reduce cost model (as MG-WFBP's); the engine times it.
// accumulation_steps k > 1 runs k forward+backward passes, communicating only in the last (DDP's
// no_sync for the first k-1), so the samples of one iteration are k x batch per GPU.
// Model-parallel layers (consecutive, followed by at least one data-parallel layer, as DLRM's
// embedding tables) are not all-reduced: with table-wise sharding each GPU looks its tables up
// for the whole global batch, so an all-to-all ("pairwise") of batch x their activation bytes per
// GPU delivers every GPU its samples' vectors after their forward pass, and one of the same size
// returns the gradients before their backward pass; the next layer (forward) and the tables'
// backward wait for them.
#pragma once

#include "ddlsim/collectives/call.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/models/gpu.hpp"
#include "ddlsim/models/measured_compute.hpp"
#include "ddlsim/models/nccl_model.hpp"
#include "ddlsim/models/zoo.hpp"

#include <memory>
#include <string>
#include <vector>

namespace ddlsim::models {

enum class Framework : std::uint8_t {
  ddp,
  horovod,
  gradientflow,
  none,
  mgwfbp,
  bytescheduler,
  byteps
};
enum class Compression : std::uint8_t { none, topk, coarse };
std::string_view to_string(Framework framework);
std::string_view to_string(Compression compression);

struct FrameworkSpec {
  Framework type = Framework::ddp;
  std::uint64_t bucket_cap_bytes = 25ull << 20;       // ddp
  std::uint64_t first_bucket_bytes = 1ull << 20;      // ddp
  std::uint64_t fusion_threshold_bytes = 64ull << 20; // horovod (HOROVOD_FUSION_THRESHOLD)
  Picoseconds cycle_time = 1 * 1'000'000'000;         // horovod: 1 ms (HOROVOD_CYCLE_TIME default)
  std::uint64_t lazy_threshold_bytes = 32ull << 20;   // gradientflow
  // mgwfbp, bytescheduler: the all-reduce cost a + M / b that the merge rule and the priority
  // queue plan with (MG-WFBP fits it by benchmarking the cluster); 0 = NCCL's own model of the
  // job's all-reduce (algorithm "nccl").
  Picoseconds startup = 0;
  double bytes_per_second = 0;
  // bytescheduler: partition size and credit in parameters (BYTESCHEDULER_PARTITION and
  // BYTESCHEDULER_CREDIT, defaults of ByteCore in bytescheduler/common/bytecore.py: 1,000,000 and
  // 4,000,000).
  std::uint64_t partition_parameters = 1'000'000;
  std::uint64_t credit_parameters = 4'000'000;
  // byteps: the partition size in bytes (BYTEPS_PARTITION_BYTES; its default and recommended
  // value 4096000, bytedance/byteps docs/env.md).
  std::uint64_t partition_bytes = 4'096'000;
  int accumulation_steps = 1;
  // Communication streams: collective i runs on stream i mod streams, each stream runs its
  // collectives one after another, and the streams run at the same time. 1 (the default) is one
  // NCCL stream, as DDP, Horovod and ByteScheduler over NCCL use; more put several layers'
  // collectives in the network together, where the switches' priorities order their packets
  // (DLCP's packet-level layer priority, Wang et al., arXiv 2008.08445).
  int streams = 1;
};

// One training job: a model data-parallel over `gpus` (global ranks of the cluster, in rank
// order of the job). Per-GPU vectors have one entry per GPU of the job.
struct JobSpec {
  std::string name;
  std::shared_ptr<const Model> model;
  std::vector<int> gpus; // global ranks (Topology::gpus() indices)
  // Dedicated parameter servers (params.dedicated_servers): the GPUs they run on, after the
  // workers' in the collectives' rank order; they only communicate.
  std::vector<int> server_gpus;
  std::vector<int> node_of_gpu; // the cluster node of each, for hierarchical algorithms
  std::vector<GpuSpec> gpu;     // the GPU model of each
  std::vector<double> speed;    // relative speed of each (1 = the model's figures)
  std::vector<int> batch;       // samples per iteration (per accumulation step) of each
  Precision precision = Precision::fp32;
  Optimizer optimizer = Optimizer::sgd; // its step's memory traffic (gpu.hpp optimizer_time)
  FrameworkSpec framework;
  // All-reduce generator for the gradients, or "nccl": NCCL's own choice per bucket (generator,
  // channels, pipeline chunks, protocol and per-call overhead) from `nccl`. The scenario loader
  // makes "nccl" the default on clusters of NVIDIA GPUs.
  std::string algorithm = "ring";
  std::shared_ptr<const NcclTuner> nccl; // NCCL's view of the job's GPUs (algorithm "nccl")
  coll::AlgorithmParams params;          // its params (channels, chunks, density, servers, ...)
  Compression compression = Compression::none; // selects topk / coarse_sparse when not "auto"
  bool adasum = false;                         // reduction = adasum (recursive doubling)
  bool communicate = true; // false: compute only (the no-communication baseline)
  // Where compute times come from (measured_compute.hpp): the roofline unless the user measured.
  MeasuredCompute compute;
};

// A collective of the iteration, on the job's communicator (local ranks 0..n-1).
struct PlannedCollective {
  coll::CollectiveCall call;         // bytes, dtype, algorithm, params of this bucket
  std::uint64_t gradient_offset = 0; // bytes into the job's gradient buffer
  std::uint64_t parameters = 0;
  int first_layer = 0; // layers [first_layer, last_layer] (registration order)
  int last_layer = 0;
  // The compute step (channel 0) after which every rank may start it: an index into the
  // compute program of the profile, see ComputeProfile::steps.
  std::vector<std::uint32_t> ready_step; // per profile
  // NCCL's choice for this bucket (algorithm "nccl"): the software cost of the call, paid as a
  // step before its first transfer when no calibrated launch overhead is given, and the
  // description ("ring/LL128, 8 channels") for reports. call.protocol is the choice's protocol.
  Picoseconds call_overhead = 0;
  std::string nccl_choice;
  std::uint8_t protocol = 0; // index of call.protocol in TrainingPlan::protocols
  // The first communication channel of its stream (FrameworkSpec::streams): it runs on channels
  // first_channel .. first_channel + its algorithm's channels - 1.
  int first_channel = 1;
};

// The compute program of GPUs with the same (GPU, speed, batch): its steps in order.
struct ComputeStep {
  Picoseconds duration = 0;
  int layer = -1; // -1: the optimizer (or a wait marker)
  bool backward = false;
  int pass = 0; // accumulation step
  // >= 0: a zero-duration marker that waits for the end of model-parallel exchange number
  // `wait_exchange` (JobPlan::exchange_collective) before the next layer may run.
  int wait_exchange = -1;
  // The share of its time in memory-bound kernels (coll::Step::memory_bound_share): 1 for
  // norms, embedding lookups, pooling, elementwise layers and the optimizer, 0 for
  // convolutions, linear layers and attention (tensor-core work).
  double memory_bound_share = 0;
};
struct ComputeProfile {
  std::vector<ComputeStep> steps; // all accumulation steps, then the optimizer is appended
  Picoseconds compute = 0;        // sum of the durations (optimizer included)
  int batch = 0;
  double speed = 1;
  // bytescheduler: the optimizer's update of each layer, run before that layer's next forward
  // pass (the optimizer step itself is then 0; `compute` still counts it).
  std::vector<Picoseconds> layer_update;
};

struct JobPlan {
  JobSpec spec;
  std::vector<PlannedCollective> collectives; // in stream order
  std::vector<ComputeProfile> profiles;
  std::vector<int> profile_of_gpu;  // per GPU of the job
  std::uint64_t gradient_bytes = 0; // all buckets together
  // Model-parallel layers (DLRM's embedding tables): their outputs are exchanged by an
  // all-to-all after their forward pass and their gradients by one before their backward pass,
  // in every accumulation step; exchange 2a is the forward one of step a, 2a+1 the backward one.
  std::vector<int> exchange_collective; // exchange -> index in collectives
  int samples_per_iteration = 0;        // sum of batches x accumulation steps
  // bytescheduler: per layer, the collective after which its parameters are updated and the next
  // iteration's forward pass of it may start (-1: none, the layer waits for nothing); empty for
  // the other frameworks, whose next iteration waits for the optimizer step.
  std::vector<int> gate_collective;
};

struct TrainingPlan {
  std::vector<JobPlan> jobs;
  int ranks = 0; // 1 + the largest global rank used
  // Software cost of launching each collective (a calibration's launch overhead): a compute
  // step of this length on each communication channel before the collective's first step.
  Picoseconds launch_overhead = 0;
  // Iterations simulated back to back (each after the previous one's optimizer step).
  int iterations = 1;
  // The protocols the collectives use (Step::protocol indexes it): the default first.
  std::vector<coll::Protocol> protocols{coll::Protocol{}};
  int job_of_rank(int rank) const;         // -1 when no job uses the rank
  int local_rank(int job, int rank) const; // the rank's index in the job (servers after GPUs)
};

// Plans every job. Throws InputError (where = "/workload...") when a job asks for what the
// collectives cannot do (e.g. adasum on 6 GPUs), naming the job.
struct PlanOptions {
  // Whether the engine runs switch steps (NVLS); without them NCCL's choice is made among the
  // algorithms that need none (the flow and packet engines do not model in-switch reduction).
  bool switch_steps = true;
};
TrainingPlan plan_training(std::vector<JobSpec> jobs, const PlanOptions& options = {});

} // namespace ddlsim::models

namespace ddlsim::models {

// HetSeq-style balancing: `total` samples split over the GPUs in proportion to each one's
// throughput (samples per second of forward + backward at the mean batch, on its GPU model at
// its speed), each at least 1, summing to `total` (remainders to the largest fractions, ties to
// the lower index).
std::vector<int> balanced_batches(const Model& model, const std::vector<GpuSpec>& gpus,
                                  const std::vector<double>& speed, Precision precision, int total);

} // namespace ddlsim::models
