#include "ddlsim/calibrate/point_model.hpp"
#include "ddlsim/calibrate/carry_over.hpp"
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/models/gpu.hpp"
#include "ddlsim/models/nccl_model.hpp"
#include "ddlsim/sim/engine.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "ddlsim/topologies/router.hpp"

#include <algorithm>
#include <limits>
#include <optional>

namespace ddlsim::calib {

PointModel::PointModel(topo::ClusterSpec spec, std::uint64_t seed)
    : PointModel(std::move(spec), seed, models::NcclOverrides{}) {}

PointModel::PointModel(topo::ClusterSpec spec, std::uint64_t seed, models::NcclOverrides nccl_force)
    : spec_(std::move(spec)), seed_(seed), nccl_force_(nccl_force) {
  total_gpus_ = static_cast<int>(topo::total_gpus(spec_)); // a checked spec's total fits
  for (const topo::NodeGroup& group : spec_.node_groups) {
    nodes_ += group.count;
    if (gpus_per_node_ == 0)
      gpus_per_node_ = group.spec.gpus;
    else if (gpus_per_node_ != group.spec.gpus)
      gpus_per_node_ = -1;
  }
  if (gpus_per_node_ < 0) gpus_per_node_ = 0;
  // NCCL's model applies where every GPU is one NCCL runs on (else the fallback list below).
  nccl_ranks_ok_ = total_gpus_ > 0;
  for (const topo::NodeGroup& group : spec_.node_groups)
    if (models::compute_capability(group.spec.gpu_model) < 60) nccl_ranks_ok_ = false;
  for (const coll::Op op :
       {coll::Op::all_reduce, coll::Op::reduce_scatter, coll::Op::all_gather, coll::Op::broadcast})
    for (int a = 0; a < models::kNcclAlgorithms; ++a) {
      const std::string generator =
          models::nccl_generator(op, static_cast<models::NcclAlgorithm>(a));
      if (generator.empty()) continue;
      nccl_offered_ += (nccl_offered_.empty() ? "" : ", ") + std::string(coll::to_string(op)) +
                       " " +
                       std::string(models::display_name(static_cast<models::NcclAlgorithm>(a))) +
                       " as `" + generator + "`";
    }
}

std::optional<PointModel::NcclPick> PointModel::nccl_pick(const MeasuredPoint& point,
                                                          const Calibration& calibration) const {
  if (!nccl_ranks_ok_ || !point.algorithm.empty() || point.ranks < 2 || point.ranks > total_gpus_)
    return std::nullopt;
  if (point.op != coll::Op::all_reduce && point.op != coll::Op::reduce_scatter &&
      point.op != coll::Op::all_gather && point.op != coll::Op::broadcast &&
      point.op != coll::Op::reduce)
    return std::nullopt;
  // NCCL sees the measured system's nominal hardware: the uncalibrated spec.
  const models::NcclTuner tuner(models::describe_nccl(spec_, point.ranks), nccl_force_);
  auto calibrated = [&](models::NcclProtocol protocol) -> int {
    for (std::size_t p = 0; p < calibration.protocols.size(); ++p)
      if (calibration.protocols[p].name == models::to_string(protocol)) return static_cast<int>(p);
    return -1;
  };
  // A calibration whose step costs were measured on another kind of system (carry_over.hpp)
  // leaves NCCL's protocols at NCCL's cost, as no calibration does.
  const bool steps_carry = carried_engine_parts(calibration, spec_).steps;
  const bool uncalibrated = !steps_carry || (calibration.protocols.size() == 1 &&
                                             calibration.protocols[0].bandwidth_factor == 1.0 &&
                                             calibration.protocols[0].per_step_overhead == 0);
  bool any = false;
  auto offered = [&](models::NcclAlgorithm algorithm, models::NcclProtocol protocol) {
    // Uncalibrated (only the plain protocol, unscaled): every protocol NCCL has, at NCCL's own
    // cost, as the engine's "nccl" runs it; calibrated: the calibrated protocols only.
    const bool ok = !models::nccl_generator(point.op, algorithm).empty() &&
                    (uncalibrated || calibrated(protocol) >= 0);
    any = any || ok;
    return ok;
  };
  models::NcclChoice choice;
  try {
    choice = tuner.choose(point.op, point.bytes, offered);
  } catch (const InputError&) {
    return std::nullopt; // nothing NCCL runs here has a generator: the fallback list
  }
  if (!any) return std::nullopt;
  NcclPick pick;
  pick.generator = choice.generator;
  pick.channels = choice.channels;
  pick.chunks = models::nccl_pipeline_chunks(tuner.system(), choice, point.bytes);
  // Uncalibrated, the one plain protocol is no measurement of Simple: every protocol, Simple
  // included, runs at NCCL's own cost with its base latency, as the engine's "nccl" does.
  pick.protocol = uncalibrated ? -1 : calibrated(choice.protocol);
  if (pick.protocol < 0) {
    pick.cost = models::nccl_protocol(tuner.system(), choice.algorithm, choice.protocol);
    if (calibration.launch_overhead == 0 || !steps_carry)
      pick.nccl_overhead = models::nccl_call_overhead(choice.algorithm, choice.protocol);
  }
  return pick;
}

std::string PointModel::choice_model() const {
  if (nccl_ranks_ok_) {
    std::string forced;
    if (nccl_force_.algorithm)
      forced += " NCCL_ALGO=" + std::string(models::display_name(*nccl_force_.algorithm));
    if (nccl_force_.protocol)
      forced += " NCCL_PROTO=" + std::string(models::display_name(*nccl_force_.protocol));
    if (nccl_force_.protocols) {
      std::string list;
      for (int p = 0; p < models::kNcclProtocols; ++p)
        if ((*nccl_force_.protocols)[static_cast<std::size_t>(p)])
          list += (list.empty() ? "" : ",") +
                  std::string(models::display_name(static_cast<models::NcclProtocol>(p)));
      forced += " NCCL_PROTO=" + list;
    }
    if (nccl_force_.channels > 0)
      forced += " NCCL_MIN_NCHANNELS=NCCL_MAX_NCHANNELS=" + std::to_string(nccl_force_.channels);
    return "NCCL chose the algorithm: NCCL 2.30's tuner (models/nccl_model.hpp) picks algorithm, "
           "protocol and channels per size among the calibrated protocols and the algorithms "
           "ddlsim has generators for (" +
           nccl_offered_ + ")" +
           (forced.empty()
                ? ""
                : ", under what the scenario's \"nccl\" object says the runs set:" + forced);
  }
  std::string text = "NCCL chose the algorithm: modelled as NCCL's tuner does, the fastest of Ring "
                     "(ddlsim `ring`)";
  if (nodes_ > 1 && gpus_per_node_ > 1)
    text += " and, for all-reduce, Tree (ddlsim `nccl_tree` on " +
            std::to_string(2 * gpus_per_node_) + " channels in 512 KiB chunks)";
  text += ", under each calibrated protocol";
  return text;
}

std::vector<coll::CollectiveCall> PointModel::candidates(const MeasuredPoint& point) const {
  coll::CollectiveCall call;
  call.op = point.op;
  call.ranks = point.ranks;
  call.bytes = point.bytes;
  call.dtype = point.dtype;
  call.reduction = point.reduction;
  // Node of each rank, node-major.
  for (const topo::NodeGroup& group : spec_.node_groups) {
    for (int i = 0; i < group.count; ++i) {
      const int node = call.node_of_rank.empty() ? 0 : call.node_of_rank.back() + 1;
      for (int g = 0;
           g < group.spec.gpus && static_cast<int>(call.node_of_rank.size()) < call.ranks; ++g)
        call.node_of_rank.push_back(node);
    }
  }
  std::vector<coll::CollectiveCall> calls;
  if (!point.algorithm.empty()) {
    call.algorithm = point.algorithm;
    calls.push_back(call);
    return calls;
  }
  call.algorithm = point.op == coll::Op::broadcast || point.op == coll::Op::reduce ? "binomial"
                   : point.op == coll::Op::all_to_all                              ? "pairwise"
                   : point.op == coll::Op::send_recv                               ? "direct"
                                                                                   : "ring";
  if (point.op == coll::Op::broadcast) call.algorithm = "pipelined_chain";
  calls.push_back(call);
  const int used_nodes = call.node_of_rank.empty() ? 0 : call.node_of_rank.back() + 1;
  if (point.op == coll::Op::all_reduce && gpus_per_node_ > 1 && used_nodes > 1 &&
      point.ranks == used_nodes * gpus_per_node_) {
    // NCCL's Tree (point_model.hpp): one search channel per GPU (rail), duplicated onto the two
    // trees (src/graph/connect.cc), so 2L channels; each pipelined in NCCL's Simple Tree chunks
    // of one 512 KiB step (4 MiB buffer / NCCL_STEPS = 8, src/enqueue.cc, src/init.cc).
    constexpr std::uint64_t kTreeChunkBytes = 512 * 1024;
    // A bound on the simulation's size, not a model constant: past it chunks grow instead.
    constexpr std::uint64_t kMaxTreeChunks = 64;
    coll::CollectiveCall tree = call;
    tree.algorithm = "nccl_tree";
    tree.params.channels = 2 * gpus_per_node_;
    const std::uint64_t per_channel = point.bytes / std::uint64_t(tree.params.channels);
    tree.params.chunks = static_cast<int>(std::clamp<std::uint64_t>(
        (per_channel + kTreeChunkBytes - 1) / kTreeChunkBytes, 1, kMaxTreeChunks));
    calls.push_back(tree);
  }
  return calls;
}

std::vector<Prediction> PointModel::predict(const Calibration& calibration,
                                            std::span<const MeasuredPoint> points) const {
  return predict(std::span<const Calibration>(&calibration, 1), points);
}

std::vector<Prediction> PointModel::predict(std::span<const Calibration> calibrations,
                                            std::span<const MeasuredPoint> points) const {
  const Calibration& calibration = calibrations.front();
  std::vector<Prediction> out(points.size());
  // NCCL's choice per point (one model, shared with the engine's "nccl"): the generator and its
  // channels run under the calibration's protocol of NCCL's chosen protocol, whose bandwidth
  // factor and per-step overhead are that protocol's cost (call.protocol stays the plain one,
  // so the calibrated factor is not charged twice).
  std::vector<std::optional<NcclPick>> picks(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) picks[i] = nccl_pick(points[i], calibration);
  std::vector<double> best(points.size(), std::numeric_limits<double>::infinity());
  for (const MeasuredPoint& point : points)
    if (point.ranks > total_gpus_ || point.ranks < 1)
      throw InputError(point.where, "the measurement ran on " + std::to_string(point.ranks) +
                                        " ranks but the cluster has " +
                                        std::to_string(total_gpus_) +
                                        " GPUs; describe the measured system in the scenario");
  for (std::size_t p = 0; p < calibration.protocols.size(); ++p) {
    topo::ClusterSpec spec = spec_;
    const EngineCalibration engine = apply_calibrations(calibrations, spec, p);
    const topo::Topology topology = topo::build_topology(spec);
    topo::Router router(topology);
    sim::EngineSpec model; // the analytic engine with the calibration's terms
    model.per_step_overhead = engine.per_step_overhead;
    model.reduce_bytes_per_second = engine.reduce_bytes_per_second;
    model.launch_overhead = engine.launch_overhead;
    sim::CommonOptions options;
    options.seed = seed_;
    for (std::size_t i = 0; i < points.size(); ++i) {
      // A source that names its algorithm ran without NCCL's protocols: the first only.
      if (p > 0 && !points[i].algorithm.empty()) continue;
      std::vector<coll::CollectiveCall> calls;
      if (picks[i]) {
        const int calibrated = picks[i]->protocol;
        if (calibrated >= 0 ? static_cast<std::size_t>(calibrated) != p : p != 0) continue;
        coll::CollectiveCall call = candidates(points[i]).front();
        call.algorithm = picks[i]->generator;
        call.params.channels = picks[i]->channels;
        call.params.chunks = picks[i]->chunks;
        if (calibrated < 0) call.protocol = picks[i]->cost;
        const double seconds = ps_to_seconds(
            sim::simulate(call, topology, router, model, options).time + picks[i]->nccl_overhead);
        const std::string protocol =
            calibrated >= 0 ? calibration.protocols[p].name : picks[i]->cost.name;
        out[i] = {seconds, call.algorithm, protocol};
        continue;
      } else {
        calls = candidates(points[i]);
      }
      for (const coll::CollectiveCall& call : calls) {
        const double seconds =
            ps_to_seconds(sim::simulate(call, topology, router, model, options).time);
        if (seconds < best[i]) {
          best[i] = seconds;
          out[i] = {seconds, call.algorithm, calibration.protocols[p].name};
        }
      }
    }
  }
  return out;
}

} // namespace ddlsim::calib
