#include "ddlsim/calibrate/point_model.hpp"
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/sim/engine.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "ddlsim/topologies/router.hpp"

#include <algorithm>
#include <limits>

namespace ddlsim::calib {

PointModel::PointModel(topo::ClusterSpec spec, std::uint64_t seed)
    : spec_(std::move(spec)), seed_(seed) {
  for (const topo::NodeGroup& group : spec_.node_groups) {
    nodes_ += group.count;
    total_gpus_ += group.count * group.spec.gpus;
    if (gpus_per_node_ == 0)
      gpus_per_node_ = group.spec.gpus;
    else if (gpus_per_node_ != group.spec.gpus)
      gpus_per_node_ = -1;
  }
  if (gpus_per_node_ < 0) gpus_per_node_ = 0;
}

std::string PointModel::choice_model() const {
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
      for (const coll::CollectiveCall& call : candidates(points[i])) {
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
