// The model of each measured point: the analytic engine runs the collective on the cluster spec
// with a calibration applied, plus the calibration's launch overhead.
//
// When the source says which algorithm ran (a ddlsim report), that generator runs under the
// first (bandwidth) protocol. When the library chose (NCCL) on NVIDIA GPUs, NCCL's own choice
// model (models/nccl_model.hpp, the one the engine's "nccl" uses) picks the algorithm, protocol
// and channels per point among the calibrated protocols and the NCCL algorithms ddlsim has a
// generator for; the generator runs under the calibration's protocol of that name. Otherwise
// (other GPUs, or nothing NCCL would run has a generator) the model takes the fastest
//   - Ring: ddlsim's `ring` in rank order;
//   - Tree (all-reduce on more than one node, as since NCCL 2.4): ddlsim's `nccl_tree`, NCCL's
//     pipelined double binary tree with a chain inside each node, on 2L channels (one chain per
//     GPU and its NIC, duplicated onto both trees as src/graph/connect.cc does) in NCCL's
//     512 KiB Simple Tree chunks (at most 64 per channel, a bound on the simulation's size);
// and every protocol of the calibration, and says which it assumed per point.
#pragma once

#include "ddlsim/calibrate/calibration.hpp"
#include "ddlsim/calibrate/measurement.hpp"
#include "ddlsim/models/nccl_model.hpp"
#include "ddlsim/topologies/cluster_spec.hpp"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ddlsim::calib {

struct Prediction {
  double seconds = 0;
  std::string algorithm; // the ddlsim generator that ran
  std::string protocol;  // the calibration protocol it ran under
};

class PointModel {
public:
  // `spec` is the uncalibrated cluster; ranks are node-major as in Topology::gpus().
  explicit PointModel(topo::ClusterSpec spec, std::uint64_t seed = 1);
  // `nccl_force`: what the measured runs forced NCCL's choice to (NCCL_ALGO, NCCL_PROTO,
  // NCCL_MIN/MAX_NCHANNELS), as the scenario's "nccl" object says; the points NCCL chose for
  // are then chosen under it, as NCCL chose under the benchmark's environment.
  PointModel(topo::ClusterSpec spec, std::uint64_t seed, models::NcclOverrides nccl_force);

  // One prediction per point. Throws InputError (naming the point's file:line) when a point
  // asks for more ranks than the cluster has.
  std::vector<Prediction> predict(const Calibration& calibration,
                                  std::span<const MeasuredPoint> points) const;
  // Several calibrations, each on its node groups (apply_calibrations); the protocols are the
  // first one's.
  std::vector<Prediction> predict(std::span<const Calibration> calibrations,
                                  std::span<const MeasuredPoint> points) const;

  const topo::ClusterSpec& spec() const { return spec_; }
  int nodes() const { return nodes_; }
  int gpus_per_node() const { return gpus_per_node_; } // 0 when node groups differ
  // One line saying what the model assumes when the library chose the algorithm.
  std::string choice_model() const;

private:
  struct NcclPick {
    std::string generator;
    int channels = 1;
    int chunks = 1;   // models::nccl_pipeline_chunks
    int protocol = 0; // index into the calibration's protocols; -1: not calibrated
    // Not calibrated: NCCL's own cost of the protocol (models::nccl_protocol), charged under the
    // calibration's first protocol, and NCCL's per-call base latency where no launch overhead
    // is calibrated, as "algorithm": "nccl" runs it.
    coll::Protocol cost;
    Picoseconds nccl_overhead = 0;
  };
  std::vector<coll::CollectiveCall> candidates(const MeasuredPoint& point) const;
  std::optional<NcclPick> nccl_pick(const MeasuredPoint& point,
                                    const Calibration& calibration) const;

  topo::ClusterSpec spec_;
  std::uint64_t seed_;
  models::NcclOverrides nccl_force_;
  int nodes_ = 0;
  int gpus_per_node_ = 0;
  int total_gpus_ = 0;
  bool nccl_ranks_ok_ = false; // every GPU is one NCCL's model knows
  std::string nccl_offered_;   // the NCCL algorithms with a generator, for choice_model()
};

} // namespace ddlsim::calib
