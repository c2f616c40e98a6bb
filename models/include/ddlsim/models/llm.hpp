// Large-model (LLM) training: a decoder-only transformer trained with tensor (TP), pipeline (PP),
// data (DP, with ZeRO stages) and expert (EP) parallelism, lowered to one coll::Schedule like the
// data-parallel iteration (iteration_schedule.hpp), so every engine runs it.
//
// The pieces (docs/large-model-training.md has the formulas and their sources):
//  - LlmShape: the transformer's sizes, inline or by name from a bundled zoo (llm_zoo.cpp);
//    parameters and model FLOPs per token from them (Narayanan et al., SC'21, section 5.1).
//  - LlmParallel: the layout, validated against the shape, the batch and the cluster; ranks are
//    placed the way Megatron-LM's parallel_state.py orders them by default ("tp-cp-ep-dp-pp"):
//    TP innermost (consecutive GPUs: inside the NVLink domain), then DP, then PP.
//  - LlmMemory: parameters, gradients and optimizer states per ZeRO stage (Rajbhandari et al.
//    2020) and activations per micro-batch (Korthikanti et al. 2022), per GPU (llm_memory.cpp).
//  - LlmPlan: per pipeline stage, the ordered work of one iteration (1F1B or interleaved 1F1B)
//    with its collectives
//    (llm_plan.cpp); llm_schedule() turns it into a Schedule (llm_schedule.cpp) and
//    summarize_llm() the executed steps into the metrics (llm_metrics.cpp).
#pragma once

#include "ddlsim/collectives/call.hpp"
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/models/gpu.hpp"
#include "ddlsim/models/nccl_model.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ddlsim::models {

struct MoeShape {
  int experts = 0;              // routed experts per MoE layer
  int top_k = 1;                // experts each token is routed to
  double capacity_factor = 1.0; // tokens an expert takes, over an even share (GShard)
  std::int64_t expert_ffn = 0;  // FFN size of one expert
  int shared_experts = 0;       // experts every token goes through (DeepSeek)
  int dense_layers = 0;         // leading layers with a dense FFN instead of experts
};

struct LlmShape {
  std::string name = "custom";
  std::string source; // where the sizes come from
  int layers = 0;
  std::int64_t hidden = 0;
  int heads = 0;
  int kv_heads = 0; // grouped-query attention; = heads for multi-head attention
  std::int64_t ffn = 0;
  int seq_len = 0;
  std::int64_t vocab = 0;
  bool gated_ffn = true;        // SwiGLU (three matrices, Llama) or GELU (two, GPT-3)
  bool tied_embeddings = false; // the output layer shares the input embedding (GPT-3)
  std::optional<MoeShape> moe;

  std::int64_t head_dim() const { return hidden / heads; }
  std::int64_t kv_dim() const { return head_dim() * kv_heads; }
  bool is_moe_layer(int layer) const { return moe && layer >= moe->dense_layers; }
  // Weights of one layer's attention (Q, K, V, O projections) and of its FFN (every expert of
  // an MoE layer, the router and the shared experts), norms included.
  std::int64_t attention_parameters() const;
  std::int64_t ffn_parameters(int layer) const;
  std::int64_t expert_parameters(int layer) const; // the routed experts' part of ffn_parameters
  std::int64_t embedding_parameters() const;       // input embedding (+ untied output layer)
  std::int64_t parameters() const;                 // all of them
  // FLOPs of one token's forward pass through layer `layer`, counting a multiply-add as 2: the
  // matrix multiplies with the weights a token uses (top_k experts + shared ones) and attention's
  // QK^T and softmax x V over the whole sequence (4 s h: Narayanan et al. 2021, eq. 3, which does
  // not halve for the causal mask).
  double layer_forward_flops_per_token(int layer) const;
  // Model FLOPs per token of one training step: 3 x the forward pass of every layer plus the
  // logits (2 h V); no recomputation (what MFU counts: Chowdhery et al. 2022, appendix B).
  double model_flops_per_token() const;
};

// The bundled shapes by name (ignoring case): gpt3-175b, llama2-7b, llama2-70b, llama3-8b,
// llama3-70b, llama3-405b, mixtral-8x7b, deepseek-v3. Throws InputError at `where` otherwise.
LlmShape find_llm_shape(const std::string& name, const std::string& where);
std::vector<std::string> llm_shape_names();

enum class Recompute : std::uint8_t { none, selective, full };
// bf16: BF16 mixed precision (Megatron's --bf16: FP32 gradient reduction); fp16: FP16 mixed
// precision (--fp16: the same tensor-core rate, gradients reduced in FP16); fp8: Transformer
// Engine's FP8 GEMMs with BF16 elsewhere.
enum class LlmPrecision : std::uint8_t { bf16, fp8, fp16 };
std::string_view to_string(Recompute recompute);
std::string_view to_string(LlmPrecision precision);

struct LlmParallel {
  int tp = 1, pp = 1, dp = 1;
  int vpp = 1; // virtual stages per GPU (interleaved 1F1B); 1 = plain 1F1B
  int ep = 1;  // expert parallel: splits each DP group's ranks (ep divides dp)
  int zero = 0;
  bool sequence_parallel = false;
  // ZeRO 1/2: the updated weights' all-gathers run during the next iteration's forward pass, each
  // bucket's before its first layer (Megatron's --overlap-param-gather, NeMo's
  // overlap_param_sync), instead of after the optimizer step.
  bool overlap_param_gather = false;
  // TP communication overlap (Megatron's --tp-comm-overlap, NeMo's ub_tp_comm_overlap: Transformer
  // Engine's userbuffers): each TP all-gather and reduce-scatter of a layer's attention and dense
  // FFN blocks runs beside the GEMM it feeds or follows, split into chunks (llm_plan.cpp).
  // Needs tp > 1, sequence parallelism and a TP group inside one node.
  bool tp_comm_overlap = false;
  int gpus() const { return tp * pp * dp; }
};

// The rank of a GPU in the job at (tp, dp, pp) coordinates, Megatron's default order (TP
// fastest, then DP, then PP: megatron/core/parallel_state.py, order "tp-cp-ep-dp-pp").
struct LlmCoords {
  int tp = 0, dp = 0, pp = 0;
};
int llm_rank(const LlmParallel& layout, LlmCoords c);
LlmCoords llm_coords(const LlmParallel& layout, int rank);

// One pass of a stage's compute stream: the forward or backward pass of a micro-batch through
// one of the stage's model chunks (chunk c of stage i is virtual stage c x pp + i).
struct LlmPass {
  bool forward = true;
  int micro_batch = 0;
  int chunk = 0;
};
// The passes of pipeline stage `stage` in order, as Megatron-LM runs them (megatron/core/
// pipeline_parallel/schedules.py). vpp = 1, 1F1B (Narayanan et al. 2021, section 2.2.1):
// min(pp - stage - 1, m) forward passes, then one forward and one backward alternating, then the
// remaining backward passes. vpp > 1, interleaved 1F1B (section 2.2.2;
// forward_backward_pipelining_with_interleaving): m x vpp chunk passes; pass k of either
// direction is micro-batch (k / (pp vpp)) pp + k % pp on chunk (k % (pp vpp)) / pp (backward:
// vpp - 1 - that), i.e. micro-batches go through the chunks in groups of pp; the warm-up runs
// (pp - stage - 1) x 2 + (vpp - 1) x pp forward passes (all of them when m = pp).
std::vector<LlmPass> llm_pipeline_order(const LlmParallel& layout, int micro_batches, int stage);
// The stage a pipeline transfer of `stage` goes to (send) or comes from (receive): forward
// activations go to the next stage, gradients to the previous; with vpp > 1 the last stage's
// next is the first (virtual stage i x pp + pp - 1 feeds (i + 1) x pp).
int llm_pipeline_peer(const LlmParallel& layout, int stage, bool forward_dir, bool send);

struct LlmSpec {
  LlmShape shape;
  LlmParallel parallel;
  int global_batch = 1; // sequences per iteration
  int micro_batch = 1;  // sequences per micro-batch per DP rank
  LlmPrecision precision = LlmPrecision::bf16;
  Recompute recompute = Recompute::none;
  GpuSpec gpu;           // every GPU of the job has this model
  std::vector<int> gpus; // global ranks of the job (the cluster's first tp*pp*dp GPUs)
  std::vector<int> node_of_gpu;
  // Collectives: "nccl" (NCCL's choice per call on the group's view of the cluster) or a ddlsim
  // all-reduce/reduce-scatter/all-gather generator family ("ring").
  std::string algorithm = "ring";
  std::shared_ptr<const NcclTuner> tp_nccl, dp_nccl, ep_nccl; // with algorithm "nccl"
  // The dtype data-parallel gradients are reduced in (fp32, or 16 bits: fp16 stands for BF16 and
  // FP16 alike, which move and reduce the same); unset = the frameworks' default,
  // grad_reduce_dtype() says which.
  std::optional<coll::DataType> grad_reduce = std::nullopt;
  coll::DataType grad_reduce_dtype() const;
  // Megatron's DDP bucket (megatron/core/distributed/distributed_data_parallel.py: bucket_size
  // = max(40,000,000, 1,000,000 x DP size) parameters).
  std::int64_t bucket_parameters() const;
  int micro_batches() const {
    return static_cast<int>(global_batch / (std::int64_t{micro_batch} * parallel.dp));
  }
};

// A bound on one stage's planned work (LlmOp entries), so that a typo cannot ask for a plan
// larger than memory: not a model constant.
inline constexpr double kMaxLlmStageEntries = 20'000'000;

// Throws InputError naming `where` + the key ("/parallel/tp", "/global_batch", ...) for a layout
// the shape, batch or GPU count cannot take (or one too large to plan), saying what to change.
void validate_llm(const LlmSpec& spec, int cluster_gpus, const std::string& where);

struct LlmMemory {
  double parameters = 0; // bytes per GPU, on the stage that needs the most
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  double total() const { return parameters + gradients + optimizer + activations; }
  int stage = 0; // the pipeline stage with the peak
};
// Peak memory per GPU (the busiest stage). Formulas in llm_memory.cpp.
LlmMemory llm_memory(const LlmSpec& spec);
// Throws InputError at `where` when llm_memory exceeds the GPU's capacity, saying by how much
// and which knob helps.
void check_llm_memory(const LlmSpec& spec, const std::string& where);

// What a step of a stage's work is.
enum class LlmOpKind : std::uint8_t {
  compute,   // a compute step on the GPU
  tp,        // a TP collective the next compute waits for
  ep,        // an EP all-to-all the next compute waits for
  pp_recv,   // receive from the previous (forward) or next (backward) stage; compute waits
  pp_send,   // send to the next (forward) or previous (backward) stage after the last compute
  dp,        // a DP collective launched after the last compute; the optimizer waits for it
  dp_wait,   // compute waits for the DP collective `collective` (ZeRO-3 parameter gathers)
  tp_launch, // a TP collective launched beside the compute stream (TP communication overlap)
  tp_wait,   // compute waits for the last tp_launch's collective: its receive number `part`
             // (LlmCollective::receives), or its end when part < 0
  optimizer  // waits for every DP collective and PP send, then runs the optimizer
};

struct LlmOp {
  LlmOpKind kind = LlmOpKind::compute;
  bool forward_dir = true;       // pp: activations forward (true) or gradients backward
  Picoseconds duration = 0;      // compute, optimizer
  int collective = -1;           // tp, ep, dp, tp_launch: index into LlmPlan::collectives;
                                 // dp_wait: a dp op's index among the stage's dp ops
  int part = -1;                 // tp_wait: the receive waited for (-1: the collective's end)
  std::uint64_t bytes = 0;       // pp: message bytes
  double memory_bound_share = 0; // compute, optimizer: of the duration (coll::Step's)
};

// One kind of collective the iteration runs (many times), on a group of the job's ranks.
enum class LlmGroup : std::uint8_t { tp, dp, ep, expert_dp };
struct LlmCollective {
  coll::CollectiveCall call; // on the group's local ranks
  LlmGroup group = LlmGroup::tp;
  Picoseconds overhead = 0;  // NCCL's per-call cost, a step before the first transfer
  std::uint8_t protocol = 0; // index into LlmPlan::protocols
  std::string nccl_choice;   // "ring/LL128" when NCCL chose it
  // The schedule channels (lanes) it runs on: NCCL's channels, as many as spread its bytes over
  // every GPU (NIC) of a node the group spans (llm_plan.cpp, collective_lanes); 1 inside a node.
  int lanes = 1;
  // Steps of local rank r on lane l at steps[r * lanes + l]: the marker that waits for the
  // previous collective (lanes > 0), launch, generator steps, the join.
  std::vector<std::uint32_t> steps;
  // A ring exchange (TP communication overlap: userbuffers' all-gather, whose chunks the GEMM
  // consumes as they arrive): per local rank r, the offsets of its receive steps among its steps
  // on lane 0 (launch included) at receives[r * (ranks - 1) + k]. Empty for other collectives.
  bool exchange = false;
  std::vector<std::uint32_t> receives;
};

struct LlmPlan {
  LlmSpec spec;
  std::vector<std::vector<LlmOp>> stages; // per pipeline stage, in compute-stream order
  std::vector<LlmCollective> collectives;
  std::vector<coll::Protocol> protocols{coll::Protocol{}};
  Picoseconds launch_overhead = 0; // a calibrated launch cost replaces NCCL's per-call cost
  int ranks = 0;                   // 1 + the largest global rank
  double model_flops_per_iteration = 0;
  LlmMemory memory;
  std::vector<int> group_members(LlmGroup group, int job_rank) const; // job ranks, local order
};

struct LlmPlanOptions {
  bool switch_steps = true; // the engine runs NVLS switch steps (else NCCL chooses without)
  Picoseconds launch_overhead = 0;
};
LlmPlan plan_llm(const LlmSpec& spec, const LlmPlanOptions& options = {});

// Channels of the schedule: compute, TP, PP, DP, EP, then the further lanes of the TP, DP and
// EP collectives (llm_schedule.cpp), at most kLlmMaxLanes per kind.
inline constexpr int kLlmComputeChannel = 0, kLlmTpChannel = 1, kLlmPpChannel = 2,
                     kLlmDpChannel = 3, kLlmEpChannel = 4, kLlmChannels = 5;
inline constexpr int kLlmMaxLanes = 16;
coll::Schedule llm_schedule(std::shared_ptr<const LlmPlan> plan);
// The schedule channel lane `lane` of a collective on `group` runs on in llm_schedule(plan).
int llm_lane_channel(const LlmPlan& plan, LlmGroup group, int lane);

// Collects what the metrics need from the executed steps: per rank the end of every compute-
// stream step and the pipeline sends and receives.
class LlmRecorder {
public:
  explicit LlmRecorder(int ranks);
  // The channels add() keeps (compute and pipeline), a bit each: the engines need hand over
  // no other steps.
  static constexpr std::uint64_t kChannels =
      std::uint64_t{1} << kLlmComputeChannel | std::uint64_t{1} << kLlmPpChannel;
  void add(int rank, int channel, coll::StepKind kind, int peer, Picoseconds start,
           Picoseconds end);
  void clear();
  struct Transfer {
    bool send = false;
    int peer = -1;
    Picoseconds start = 0, end = 0;
  };
  struct Rank {
    std::vector<Picoseconds> compute_ends;
    std::vector<Transfer> pipeline;
  };
  const std::vector<Rank>& ranks() const { return ranks_; }

private:
  std::vector<Rank> ranks_;
};

// The metrics of one iteration. Per GPU (then the job's mean or max, as named):
//   compute      its compute steps (optimizer included)
//   exposed X    time its compute stream waited for X: TP and EP collectives, DP collectives
//                (before the optimizer, and ZeRO-3's gathers), and pipeline transfers (the part
//                of a wait for a pipeline receive during which the message was on its way)
//   bubble       iteration time - compute - all exposed communication: waiting for other stages
// MFU = model FLOPs per iteration / (iteration time x GPUs x the GPU's dense peak at the
// precision); model TFLOP/s per GPU = model FLOPs / (iteration time x GPUs).
struct LlmIteration {
  Picoseconds time = 0;
  double tokens_per_second = 0;
  double model_tflops_per_gpu = 0;
  double mfu = 0;
  Picoseconds compute = 0;                                                    // max over GPUs
  Picoseconds exposed_tp = 0, exposed_pp = 0, exposed_dp = 0, exposed_ep = 0; // max over GPUs
  Picoseconds bubble = 0;                                                     // mean over GPUs
  double bubble_fraction = 0;                                                 // bubble / time
  std::uint64_t collectives = 0; // per iteration, all GPUs' groups counted once each
};
LlmIteration summarize_llm(const LlmPlan& plan, const LlmRecorder& recorder);

} // namespace ddlsim::models
