// An LLM training iteration planned per pipeline stage: the compute stream's work in order, with
// the collectives and pipeline transfers it launches or waits for (llm.hpp, LlmOp).
//
// Per layer and micro-batch, as Megatron-LM runs it (Shoeybi et al. 2019, Figure 3; Korthikanti
// et al. 2022, Figure 5 for sequence parallelism):
//   forward   attention block, TP all-reduce, FFN block, TP all-reduce; with sequence
//             parallelism an all-gather before each block and a reduce-scatter after it instead;
//             an MoE FFN is the router, an EP all-to-all (dispatch), the experts, an EP
//             all-to-all (combine)
//   backward  the same blocks in reverse, with the same collectives (the conjugate operators);
//             full recomputation first reruns the layer's forward pass (with its collectives),
//             selective recomputation reruns attention's scores and softmax x V in the backward
//             attention block
// The first stage embeds the tokens (a vocabulary-parallel lookup followed by a TP all-reduce or
// reduce-scatter), the last computes the logits (and the loss). Pipeline: 1F1B or interleaved
// 1F1B in Megatron's order (llm_pipeline_order, llm.hpp); with interleaving each stage holds vpp
// model chunks (chunk c of stage i runs the layers of virtual stage c p + i, whose neighbours
// are on stages i - 1 and i + 1 modulo p); activations go to the next (virtual) stage
// after a forward pass, their gradients to the previous one after a backward pass (s b h x 2
// bytes, / t with sequence parallelism: Megatron sends the sequence-split tensor). Data
// parallelism, Megatron's DDP: the gradients of the last micro-batch's backward pass are packed
// into buckets in backward order (LlmSpec::bucket_parameters) and reduced as each fills,
// overlapped with the rest of the backward pass; ZeRO-0 all-reduces them, ZeRO-1 (Megatron's
// distributed optimizer) reduce-scatters them and all-gathers the updated weights after the
// optimizer step; ZeRO-2 and 3 reduce-scatter each micro-batch's gradients (they are not kept
// whole: DeepSpeed's stages 2 and 3), and ZeRO-3 all-gathers every layer's weights before its
// forward and its backward pass, one layer ahead (FSDP's prefetch). Weights move as 2-byte
// values; gradients as 4-byte ones with ZeRO 0 and 1 (Megatron's FP32 gradient reduction) and
// 2-byte ones with ZeRO 2 and 3 (DeepSpeed's). Compute times come from the GPU roofline
// (gpu.hpp) on the layer's FLOPs and bytes per TP rank; the optimizer is memory-bound over the
// GPU's share of the parameters.
#include "ddlsim/collectives/algorithm.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/models/llm.hpp"
#include "llm_compute.hpp"
#include "llm_param_buckets.hpp"
#include "llm_tp_overlap.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

namespace ddlsim::models {
namespace {

// The lanes (schedule channels) a collective NCCL chose runs on. NCCL runs choice.channels
// channels, each of whose rings or trees enters and leaves every node on other GPUs, so that the
// channels together use every NIC of the node (nccl_ring, nccl_tree: src/graph/search.cc,
// connect.cc). What an engine sees of the channels is which GPUs' links and NICs carry the
// bytes: the first L channels of a ring (one per GPU of a node of L in the group) and the first
// 2L of a tree (both trees of NCCL's double binary tree on every chain) already load every one
// alike, so more lanes would add steps, not links. A group inside one node keeps one lane: its
// channels share the same NVLink or NVSwitch ports.
int collective_lanes(const coll::CollectiveCall& call, int nccl_channels) {
  std::map<int, int> per_node;
  for (int node : call.node_of_rank) ++per_node[node];
  if (per_node.size() <= 1) return 1;
  int local = 0;
  for (const auto& [node, count] : per_node) local = std::max(local, count);
  const bool ring = call.algorithm == "nccl_ring";
  // NVLS-Tree: every channel's shard trees leave each node by every GPU's NIC (each GPU owns a
  // shard; all_reduce_nvls_tree.cpp), and channel c runs tree c mod 2, so two channels already
  // load every NIC in both trees.
  if (call.algorithm == "nvls_tree") return std::clamp(nccl_channels, 1, 2);
  return std::clamp(std::min(nccl_channels, ring ? local : 2 * local), 1, kLlmMaxLanes);
}

// Builds the stages' work and the collectives they name.
class Planner {
public:
  Planner(const LlmSpec& spec, const LlmPlanOptions& options) : spec_(spec), options_(options) {
    plan_.spec = spec;
    plan_.launch_overhead = options.launch_overhead;
    const LlmParallel& p = spec.parallel;
    const LlmShape& m = spec.shape;
    const double sbh2 = 2.0 * m.seq_len * spec.micro_batch * static_cast<double>(m.hidden);
    activation_bytes_ = static_cast<std::uint64_t>(sbh2);
    sp_ = p.sequence_parallel && p.tp > 1;
    pipeline_bytes_ = static_cast<std::uint64_t>(sbh2 / (sp_ ? p.tp : 1));
    if (p.tp > 1) {
      if (sp_) {
        tp_gather_ = collective(LlmGroup::tp, coll::Op::all_gather, activation_bytes_);
        tp_scatter_ = collective(LlmGroup::tp, coll::Op::reduce_scatter, activation_bytes_);
      } else {
        tp_reduce_ = collective(LlmGroup::tp, coll::Op::all_reduce, activation_bytes_);
      }
    }
    if (p.tp_comm_overlap && sp_) plan_overlap();
    if (m.moe && p.ep > 1) {
      const double tokens = static_cast<double>(m.seq_len) * spec.micro_batch / (sp_ ? p.tp : 1);
      const double bytes =
          tokens * m.moe->top_k * m.moe->capacity_factor * static_cast<double>(m.hidden) * 2;
      // Rounded to whole elements per peer.
      const std::uint64_t per_peer =
          std::max<std::uint64_t>(2, static_cast<std::uint64_t>(bytes / p.ep) / 2 * 2);
      ep_all_to_all_ = collective(LlmGroup::ep, coll::Op::all_to_all, per_peer * p.ep);
    }
    for (int l = 0; l < m.layers; ++l) times_.push_back(llm_block_times(spec, l));
  }

  LlmPlan run() {
    const LlmParallel& p = spec_.parallel;
    for (int stage = 0; stage < p.pp; ++stage) plan_.stages.push_back(stage_ops(stage));
    const double tokens = static_cast<double>(spec_.global_batch) * spec_.shape.seq_len;
    plan_.model_flops_per_iteration = tokens * spec_.shape.model_flops_per_token();
    plan_.memory = llm_memory(spec_);
    for (int r = 0; r < p.gpus(); ++r)
      plan_.ranks = std::max(plan_.ranks, spec_.gpus[static_cast<std::size_t>(r)] + 1);
    count_steps();
    return std::move(plan_);
  }

private:
  int group_size(LlmGroup group) const {
    const LlmParallel& p = spec_.parallel;
    switch (group) {
    case LlmGroup::tp:
      return p.tp;
    case LlmGroup::dp:
      return p.dp;
    case LlmGroup::ep:
      return p.ep;
    case LlmGroup::expert_dp:
      return p.dp / p.ep;
    }
    return 1;
  }

  const NcclTuner* tuner(LlmGroup group) const {
    if (spec_.algorithm != "nccl") return nullptr;
    switch (group) {
    case LlmGroup::tp:
      return spec_.tp_nccl.get();
    case LlmGroup::ep:
      return spec_.ep_nccl.get();
    default:
      return spec_.dp_nccl.get();
    }
  }

  // TP communication overlap (llm_tp_overlap.hpp): the collectives userbuffers run instead of
  // NCCL's (no NCCL call: no per-call cost, the Simple protocol's full payload), as the "ring"
  // generator's steps over NVLink: the all-gather as a ring exchange of p2p steps (the copy
  // engines' puts), the forward reduce-scatter in chunks and the backward one whole; and the GEMMs
  // they overlap. Userbuffers' reduce-scatter on Hopper reduces through NVLink SHARP (multicast
  // loads), which this does not model: it reduces on the GPUs, as on GPUs without multicast.
  void plan_overlap() {
    const LlmParallel& p = spec_.parallel;
    // Userbuffers reach the TP group's memory over NVLink (TransformerEngine examples/pytorch/
    // comm_gemm_overlap/README.md: "Tensor-parallel GPUs must be on a single node").
    for (int r = 0; r < p.gpus(); ++r) {
      const int first = llm_rank(p, {0, llm_coords(p, r).dp, llm_coords(p, r).pp});
      if (spec_.node_of_gpu[std::size_t(r)] != spec_.node_of_gpu[std::size_t(first)])
        throw InputError("/workload/parallel/tp_comm_overlap",
                         "Transformer Engine's userbuffers overlap needs each TP group inside one "
                         "node, and tp " +
                             std::to_string(p.tp) +
                             " spans nodes; use a tp that divides the GPUs per node, or set "
                             "\"tp_comm_overlap\": false");
    }
    overlap_ = true;
    tp_exchange_ = collective(LlmGroup::tp, coll::Op::all_gather, activation_bytes_,
                              coll::DataType::fp16, true);
    tp_scatter_chunk_ =
        collective(LlmGroup::tp, coll::Op::reduce_scatter,
                   activation_bytes_ / kTpOverlapPipelineSplits, coll::DataType::fp16, true);
    tp_scatter_bulk_ = collective(LlmGroup::tp, coll::Op::reduce_scatter, activation_bytes_,
                                  coll::DataType::fp16, true);
    overlap_gemms_ = llm_tp_overlap_gemms(spec_);
    sm_margin_ = tp_overlap_sm_margin(spec_.gpu);
  }

  // The index of the collective (op, bytes of `dtype` values) on `group`, planned once.
  // `userbuffers`: one of TP communication overlap (plan_overlap); its all-gather is a ring
  // exchange (LlmCollective::exchange).
  int collective(LlmGroup group, coll::Op op, std::uint64_t bytes,
                 coll::DataType dtype = coll::DataType::fp16, bool userbuffers = false) {
    const std::uint64_t e = coll::element_size(dtype);
    bytes = std::max<std::uint64_t>(bytes / e * e, e);
    const int n = group_size(group);
    if (op == coll::Op::reduce_scatter || op == coll::Op::all_gather)
      bytes = std::max<std::uint64_t>(bytes / (e * n), 1) * e * n; // whole elements per rank
    const auto key = std::make_tuple(static_cast<int>(group), static_cast<int>(op),
                                     static_cast<int>(dtype), bytes, userbuffers);
    if (auto it = index_.find(key); it != index_.end()) return it->second;
    LlmCollective c;
    c.group = group;
    c.call.op = op;
    c.call.ranks = n;
    c.call.bytes = bytes;
    c.call.dtype = dtype; // bf16 values move and reduce like fp16
    c.call.algorithm = op == coll::Op::all_to_all ? "pairwise" : spec_.algorithm;
    c.exchange = userbuffers && op == coll::Op::all_gather;
    // Userbuffers' exchanges run on the copy engines; the SMs its reduce-scatters take are in
    // the GEMM times already (llm_tp_overlap.cpp): no thread blocks to count.
    if (userbuffers) {
      c.call.algorithm = "ring";
      c.call.protocol.blocks_per_program = 0;
    }
    const std::vector<int> members = plan_.group_members(group, 0);
    for (int r : members)
      c.call.node_of_rank.push_back(spec_.node_of_gpu[static_cast<std::size_t>(r)]);
    const NcclTuner* nccl = op == coll::Op::all_to_all ? nullptr : tuner(group);
    if (c.call.algorithm == "nccl") {
      if (!nccl) {
        c.call.algorithm = "ring";
      } else {
        const NcclChoice choice = nccl->choose(op, bytes, [&](NcclAlgorithm a, NcclProtocol) {
          if (nccl_generator(op, a).empty()) return false;
          return options_.switch_steps ||
                 (a != NcclAlgorithm::nvls && a != NcclAlgorithm::nvls_tree);
        });
        if (choice.generator.empty())
          throw InputError("/workload/algorithm", "NCCL's choice for a " + format_bytes(bytes) +
                                                      " collective (" + choice.describe() +
                                                      ") has no ddlsim generator");
        c.call.algorithm = choice.generator;
        c.call.params.channels = collective_lanes(c.call, choice.channels);
        // A lane per program channel of the generator (nvls_tree runs several per channel).
        c.lanes = coll::find_algorithm(op, c.call.algorithm)->channels(c.call);
        c.call.protocol = nccl_protocol(nccl->system(), choice.algorithm, choice.protocol);
        // NCCL's kernel holds one thread block per channel, spread over the call's lanes.
        c.call.protocol.blocks_per_program =
            static_cast<double>(choice.channels) / static_cast<double>(c.lanes);
        c.overhead = nccl_call_overhead(choice.algorithm, choice.protocol);
        c.nccl_choice = choice.describe();
      }
    }
    const coll::Algorithm* algorithm = coll::find_algorithm(op, c.call.algorithm);
    if (!algorithm)
      throw InputError("/workload/algorithm", "no " + std::string(coll::to_string(op)) +
                                                  " algorithm \"" + c.call.algorithm + "\"");
    algorithm->check(c.call);
    auto it = std::find(plan_.protocols.begin(), plan_.protocols.end(), c.call.protocol);
    if (it == plan_.protocols.end())
      it = plan_.protocols.insert(plan_.protocols.end(), c.call.protocol);
    c.protocol = static_cast<std::uint8_t>(it - plan_.protocols.begin());
    plan_.collectives.push_back(std::move(c));
    const int index = static_cast<int>(plan_.collectives.size()) - 1;
    index_.emplace(key, index);
    return index;
  }

  // A compute op of `duration`, `memory_bound` of it in memory-bound kernels.
  void compute(std::vector<LlmOp>& ops, Picoseconds duration, Picoseconds memory_bound = 0) {
    LlmOp op;
    op.duration = duration;
    if (duration > 0)
      op.memory_bound_share =
          std::clamp(static_cast<double>(memory_bound) / static_cast<double>(duration), 0.0, 1.0);
    ops.push_back(op);
  }
  void blocking(std::vector<LlmOp>& ops, LlmOpKind kind, int collective_index) {
    if (collective_index < 0) return;
    LlmOp op;
    op.kind = kind;
    op.collective = collective_index;
    ops.push_back(op);
  }
  void pipeline(std::vector<LlmOp>& ops, LlmOpKind kind, bool forward) {
    LlmOp op;
    op.kind = kind;
    op.forward_dir = forward;
    op.bytes = pipeline_bytes_;
    ops.push_back(op);
  }
  // A DP collective launched now; returns its index among the stage's DP launches.
  int dp_launch(std::vector<LlmOp>& ops, LlmGroup group, coll::Op op, double parameters,
                coll::DataType dtype = coll::DataType::fp16) {
    if (group_size(group) < 2 || parameters <= 0) return -1;
    LlmOp launch;
    launch.kind = LlmOpKind::dp;
    launch.collective = collective(
        group, op,
        static_cast<std::uint64_t>(parameters * static_cast<double>(coll::element_size(dtype))),
        dtype);
    ops.push_back(launch);
    return dp_launches_++;
  }
  void dp_wait(std::vector<LlmOp>& ops, int launch) {
    if (launch < 0) return;
    LlmOp wait;
    wait.kind = LlmOpKind::dp_wait;
    wait.collective = launch;
    ops.push_back(wait);
  }

  // One block with its TP collectives around it: the all-gather before (SP) and the all-reduce
  // or reduce-scatter after. With TP communication overlap and the block's GEMMs (`gemms`; not
  // for MoE experts, the embedding or the logits), each collective runs beside its GEMM instead.
  // `memory_bound`: of `duration`, the memory-bound kernels' (BlockTimes).
  void tp_block(std::vector<LlmOp>& ops, Picoseconds duration, Picoseconds memory_bound,
                const TpOverlapGemms* gemms = nullptr, bool forward = true) {
    if (!overlap_ || !gemms) {
      blocking(ops, LlmOpKind::tp, tp_gather_);
      compute(ops, duration, memory_bound);
      blocking(ops, LlmOpKind::tp, sp_ ? tp_scatter_ : tp_reduce_);
      return;
    }
    // The block's time holds the GEMMs; the rest (attention, norms, activations, the other
    // GEMMs) runs between them.
    const Picoseconds gathered =
        std::min(forward ? gemms->gather_forward : gemms->gather_backward, duration);
    const Picoseconds scattered =
        std::min(forward ? gemms->scatter_forward : gemms->scatter_backward, duration - gathered);
    ring_exchange(ops, gathered);
    compute(ops, duration - gathered - scattered, memory_bound); // the GEMMs' neighbours
    const auto slowed = static_cast<Picoseconds>(static_cast<double>(scattered) * sm_margin_);
    if (forward) { // pipelined: a reduce-scatter per GEMM chunk, as each chunk is done
      for (int k = 0; k < kTpOverlapPipelineSplits; ++k) {
        compute(ops, share(slowed, k, kTpOverlapPipelineSplits));
        launch(ops, tp_scatter_chunk_);
      }
    } else { // bulk: the input gradient's reduce-scatter beside the weight-gradient GEMM
      launch(ops, tp_scatter_bulk_);
      compute(ops, slowed);
    }
    wait(ops, -1);
  }
  // The all-gather as a ring exchange feeding `gemm` chunk by chunk: the local chunk first, then
  // each one as it arrives (its receive), tp chunks in all; then the exchange's end.
  void ring_exchange(std::vector<LlmOp>& ops, Picoseconds gemm) {
    const int chunks = spec_.parallel.tp;
    launch(ops, tp_exchange_);
    for (int k = 0; k < chunks; ++k) {
      if (k > 0) wait(ops, k - 1);
      compute(ops, share(gemm, k, chunks));
    }
    wait(ops, -1);
  }
  // Chunk k of n of `total`, the chunks summing to it exactly.
  static Picoseconds share(Picoseconds total, int k, int n) {
    return total * (k + 1) / n - total * k / n;
  }
  void launch(std::vector<LlmOp>& ops, int collective_index) {
    LlmOp op;
    op.kind = LlmOpKind::tp_launch;
    op.collective = collective_index;
    ops.push_back(op);
  }
  void wait(std::vector<LlmOp>& ops, int part) {
    LlmOp op;
    op.kind = LlmOpKind::tp_wait;
    op.part = part;
    ops.push_back(op);
  }
  void ffn_forward(std::vector<LlmOp>& ops, int layer) {
    const BlockTimes& t = times_[static_cast<std::size_t>(layer)];
    if (!spec_.shape.is_moe_layer(layer))
      return tp_block(ops, t.ffn_forward, t.ffn_forward_memory, &overlap_gemms_.ffn, true);
    blocking(ops, LlmOpKind::tp, tp_gather_);
    compute(ops, t.router_forward);
    blocking(ops, LlmOpKind::ep, ep_all_to_all_);
    compute(ops, t.ffn_forward, t.ffn_forward_memory);
    blocking(ops, LlmOpKind::ep, ep_all_to_all_);
    blocking(ops, LlmOpKind::tp, sp_ ? tp_scatter_ : tp_reduce_);
  }
  void ffn_backward(std::vector<LlmOp>& ops, int layer) {
    const BlockTimes& t = times_[static_cast<std::size_t>(layer)];
    if (!spec_.shape.is_moe_layer(layer))
      return tp_block(ops, t.ffn_backward, t.ffn_backward_memory, &overlap_gemms_.ffn, false);
    blocking(ops, LlmOpKind::tp, tp_gather_);
    blocking(ops, LlmOpKind::ep, ep_all_to_all_);
    compute(ops, t.ffn_backward, t.ffn_backward_memory);
    blocking(ops, LlmOpKind::ep, ep_all_to_all_);
    compute(ops, t.router_backward);
    blocking(ops, LlmOpKind::tp, sp_ ? tp_scatter_ : tp_reduce_);
  }
  void layer_forward(std::vector<LlmOp>& ops, int layer) {
    const BlockTimes& t = times_[static_cast<std::size_t>(layer)];
    tp_block(ops, t.attention_forward, t.attention_forward_memory, &overlap_gemms_.attention, true);
    ffn_forward(ops, layer);
  }

  // The weights of `layer` on one GPU, dense and experts (llm_param_buckets.hpp).
  std::pair<double, double> layer_parameters(int layer) const {
    return llm_layer_parameters(spec_, layer);
  }
  // ZeRO-3: the all-gathers of a layer's weights (dense and experts).
  std::pair<int, int> gather_layer(std::vector<LlmOp>& ops, int layer) {
    const auto [dense, experts] = layer_parameters(layer);
    return {dp_launch(ops, LlmGroup::dp, coll::Op::all_gather, dense),
            dp_launch(ops, LlmGroup::expert_dp, coll::Op::all_gather, experts)};
  }

  std::vector<LlmOp> stage_ops(int stage) {
    const LlmParallel& p = spec_.parallel;
    const LlmShape& m = spec_.shape;
    const int per_chunk = m.layers / (p.pp * p.vpp);
    const int virtual_stages = p.pp * p.vpp;
    const int micro_batches = spec_.micro_batches();
    const bool zero3 = p.zero >= 3;
    const double t = p.tp, h = static_cast<double>(m.hidden);
    const double v = static_cast<double>(m.vocab);
    dp_launches_ = 0;
    // The embedding lookup (memory-bound) and the logits with the loss.
    const LayerTimes embed = llm_embedding_times(spec_);
    const LayerTimes logits = llm_logits_times(spec_);
    const LayerTimes loss = llm_loss_times(spec_); // its memory-bound part
    std::vector<LlmOp> ops;
    std::vector<std::pair<int, int>> gathered(static_cast<std::size_t>(m.layers), {-1, -1});
    // Model chunk `chunk` of this stage is virtual stage chunk x pp + stage (Narayanan et al.
    // 2021, section 2.2.2: stage i holds layers of virtual stages i, i + p, ...).
    auto virtual_stage = [&](int chunk) { return chunk * p.pp + stage; };
    // Overlapped parameter all-gathers: the previous step's first bucket is launched at the
    // iteration's start; the forward pass waits for a bucket before its first layer and launches
    // the next one there (Megatron's forward pre-hook, distributed_data_parallel.py).
    const bool overlap_gather = p.overlap_param_gather && (p.zero == 1 || p.zero == 2);
    std::array<LlmParamBuckets, 2> param_gathers;  // dense, experts
    std::array<std::vector<int>, 2> gather_launch; // per bucket: its DP launch, or -1
    std::array<LlmGroup, 2> gather_group{LlmGroup::dp, LlmGroup::expert_dp};
    auto launch_gather = [&](int kind, int bucket) {
      auto& launched = gather_launch[std::size_t(kind)];
      const auto& sizes = param_gathers[std::size_t(kind)].size;
      if (bucket >= static_cast<int>(sizes.size()) || launched[std::size_t(bucket)] != -1) return;
      launched[std::size_t(bucket)] = dp_launch(ops, gather_group[std::size_t(kind)],
                                                coll::Op::all_gather, sizes[std::size_t(bucket)]);
    };
    if (overlap_gather) {
      std::vector<int> layers;
      for (int chunk = 0; chunk < p.vpp; ++chunk)
        for (int l = 0; l < per_chunk; ++l) layers.push_back(virtual_stage(chunk) * per_chunk + l);
      for (int kind = 0; kind < 2; ++kind) {
        param_gathers[std::size_t(kind)] = llm_param_buckets(spec_, layers, stage, kind == 1);
        gather_launch[std::size_t(kind)].assign(param_gathers[std::size_t(kind)].size.size(), -1);
        launch_gather(kind, 0);
      }
    }
    // Before layer l's first forward pass: wait for its buckets, launch the next ones.
    auto await_weights = [&](int l) {
      for (int kind = 0; kind < 2 && overlap_gather; ++kind) {
        const int bucket = param_gathers[std::size_t(kind)].of_layer[std::size_t(l)];
        if (bucket < 0) continue;
        launch_gather(kind, bucket); // in order already, unless vpp chunks reorder them
        launch_gather(kind, bucket + 1);
        const int launch = gather_launch[std::size_t(kind)][std::size_t(bucket)];
        dp_wait(ops, launch);
        param_gathers[std::size_t(kind)].of_layer[std::size_t(l)] = -1; // waited once
      }
    };
    auto forward = [&](int chunk) {
      const int vs = virtual_stage(chunk);
      const int first = vs * per_chunk, last = first + per_chunk - 1;
      if (vs > 0) pipeline(ops, LlmOpKind::pp_recv, true);
      if (vs == 0) {
        await_weights(first);                       // the embedding is in its first layer's bucket
        compute(ops, embed.forward, embed.forward); // a lookup: memory-bound
        blocking(ops, LlmOpKind::tp, sp_ ? tp_scatter_ : tp_reduce_);
      }
      for (int l = first; l <= last; ++l) {
        if (zero3) {
          if (l == first) gathered[std::size_t(l)] = gather_layer(ops, l);
          if (l < last) gathered[std::size_t(l + 1)] = gather_layer(ops, l + 1);
          dp_wait(ops, gathered[std::size_t(l)].first);
          dp_wait(ops, gathered[std::size_t(l)].second);
        }
        await_weights(l);
        layer_forward(ops, l);
      }
      if (vs == virtual_stages - 1) {
        blocking(ops, LlmOpKind::tp, tp_gather_);
        compute(ops, logits.forward, loss.forward);
      } else {
        pipeline(ops, LlmOpKind::pp_send, true);
      }
    };
    double bucket_dense = 0, bucket_experts = 0;
    const double cap = static_cast<double>(spec_.bucket_parameters());
    const coll::Op grad_op = p.zero >= 1 ? coll::Op::reduce_scatter : coll::Op::all_reduce;
    const coll::DataType grad_dtype = spec_.grad_reduce_dtype();
    auto flush = [&](bool all) {
      if (bucket_dense >= cap || (all && bucket_dense > 0)) {
        dp_launch(ops, LlmGroup::dp, grad_op, bucket_dense, grad_dtype);
        bucket_dense = 0;
      }
      if (bucket_experts >= cap || (all && bucket_experts > 0)) {
        dp_launch(ops, LlmGroup::expert_dp, grad_op, bucket_experts, grad_dtype);
        bucket_experts = 0;
      }
    };
    auto backward = [&](int micro_batch, int chunk) {
      const int vs = virtual_stage(chunk);
      const int first = vs * per_chunk, last = first + per_chunk - 1;
      // Gradients are reduced in the last micro-batch (ZeRO 0 and 1) or in every one (2 and 3).
      const bool reduce = p.zero >= 2 || micro_batch == micro_batches - 1;
      if (vs < virtual_stages - 1) pipeline(ops, LlmOpKind::pp_recv, false);
      if (vs == virtual_stages - 1) {
        compute(ops, logits.backward, loss.backward);
        blocking(ops, LlmOpKind::tp, sp_ ? tp_scatter_ : tp_reduce_);
      }
      for (int l = last; l >= first; --l) {
        const BlockTimes& bt = times_[std::size_t(l)];
        if (zero3) {
          if (l == last) gathered[std::size_t(l)] = gather_layer(ops, l);
          if (l > first) gathered[std::size_t(l - 1)] = gather_layer(ops, l - 1);
          dp_wait(ops, gathered[std::size_t(l)].first);
          dp_wait(ops, gathered[std::size_t(l)].second);
        }
        if (spec_.recompute == Recompute::full) layer_forward(ops, l);
        ffn_backward(ops, l);
        const Picoseconds recomputed =
            spec_.recompute == Recompute::selective ? bt.scores_forward : 0;
        tp_block(ops, bt.attention_backward + recomputed, bt.attention_backward_memory,
                 &overlap_gemms_.attention, false);
        if (reduce) {
          const auto [dense, experts] = layer_parameters(l);
          bucket_dense += dense;
          bucket_experts += experts;
          flush(false);
        }
      }
      if (vs == 0) {
        compute(ops, embed.backward, embed.backward);
        if (reduce) bucket_dense += v * h / t;
      }
      if (vs == virtual_stages - 1 && reduce && (!m.tied_embeddings || p.pp > 1))
        bucket_dense += v * h / t;
      if (reduce) flush(true);
      if (vs > 0) pipeline(ops, LlmOpKind::pp_send, false);
    };
    for (const LlmPass& pass : llm_pipeline_order(p, micro_batches, stage)) {
      if (pass.forward)
        forward(pass.chunk);
      else
        backward(pass.micro_batch, pass.chunk);
    }
    // The optimizer over this GPU's shard, after every gradient collective and pipeline send.
    LlmOp barrier;
    barrier.kind = LlmOpKind::optimizer;
    ops.push_back(barrier);
    double dense = 0, experts = 0;
    for (int chunk = 0; chunk < p.vpp; ++chunk)
      for (int l = virtual_stage(chunk) * per_chunk; l < (virtual_stage(chunk) + 1) * per_chunk;
           ++l) {
        const auto [d, e] = layer_parameters(l);
        dense += d;
        experts += e;
      }
    if (stage == 0) dense += v * h / t;
    if (stage == p.pp - 1 && (!m.tied_embeddings || p.pp > 1)) dense += v * h / t;
    const double shard =
        p.zero >= 1 ? dense / p.dp + experts / (static_cast<double>(p.dp) / p.ep) : dense + experts;
    const Picoseconds optimizer =
        optimizer_time(static_cast<std::uint64_t>(shard), spec_.gpu, Precision::fp16, 1.0);
    compute(ops, optimizer, optimizer); // streams the optimizer's state: memory-bound
    if ((p.zero == 1 || p.zero == 2) && !overlap_gather) { // updated weights, per bucket
      for (auto [group, total] : {std::pair{LlmGroup::dp, dense}, {LlmGroup::expert_dp, experts}}) {
        const double buckets = std::ceil(total / cap);
        for (double b = 0; b < buckets; ++b)
          dp_launch(ops, group, coll::Op::all_gather, total / buckets);
      }
    }
    LlmOp end;
    end.kind = LlmOpKind::optimizer; // waits for the all-gathers (a marker)
    ops.push_back(end);
    return ops;
  }

  // Steps of each collective on each local rank and lane, as llm_schedule.cpp emits them: on
  // lanes after the first a marker that waits for the previous collective's end; the launch;
  // the generator's steps; where a lane has none and waits for the next lane, a marker for the
  // compute it follows; the join.
  void count_steps() {
    for (LlmCollective& c : plan_.collectives) {
      const coll::Algorithm* algorithm = coll::find_algorithm(c.call.op, c.call.algorithm);
      const Picoseconds launch = plan_.launch_overhead > 0 ? plan_.launch_overhead : c.overhead;
      const int programs = algorithm->channels(c.call);
      for (int r = 0; r < c.call.ranks; ++r)
        for (int lane = 0; lane < c.lanes; ++lane) {
          std::uint32_t generated = 0;
          if (lane < programs) {
            coll::StepStream stream = algorithm->program(c.call, r, lane);
            for (coll::Step step; stream.next(step);) ++generated;
          }
          if (c.exchange && lane == 0) { // where its receives are, for the GEMM chunks' waits
            std::uint32_t at = launch > 0 ? 1 : 0;
            coll::StepStream stream = algorithm->program(c.call, r, lane);
            for (coll::Step step; stream.next(step); ++at)
              if (step.is_receive()) c.receives.push_back(at);
          }
          const bool chained = lane + 1 < c.lanes;
          c.steps.push_back((lane > 0 ? 1 : 0) + (launch > 0 ? 1 : 0) + generated +
                            (generated == 0 && chained ? 1 : 0) + 1);
        }
      if (c.exchange && c.receives.size() != std::size_t(c.call.ranks) * (c.call.ranks - 1))
        throw std::logic_error("plan_llm: a TP ring exchange without one receive per step");
    }
  }

  const LlmSpec& spec_;
  LlmPlanOptions options_;
  LlmPlan plan_;
  std::map<std::tuple<int, int, int, std::uint64_t, bool>, int> index_;
  std::vector<BlockTimes> times_;
  std::uint64_t activation_bytes_ = 0, pipeline_bytes_ = 0;
  bool sp_ = false;
  int tp_reduce_ = -1, tp_gather_ = -1, tp_scatter_ = -1, ep_all_to_all_ = -1;
  // TP communication overlap (plan_overlap).
  bool overlap_ = false;
  int tp_exchange_ = -1, tp_scatter_chunk_ = -1, tp_scatter_bulk_ = -1;
  TpOverlapTimes overlap_gemms_;
  double sm_margin_ = 1.0;
  int dp_launches_ = 0;
};

} // namespace

LlmPlan plan_llm(const LlmSpec& spec, const LlmPlanOptions& options) {
  if (static_cast<int>(spec.gpus.size()) != spec.parallel.gpus())
    throw std::logic_error("plan_llm: the spec's GPUs do not match its layout");
  return Planner(spec, options).run();
}

} // namespace ddlsim::models
