// What of a calibration carries over to another kind of system. Each fitted value measured one
// component of the system it was fitted on, and is applied only to a node group where that
// component is of the same kind:
//   - the network class (NIC efficiency and latency): the same transport (sockets, EFA,
//     InfiniBand... each has its own per-message cost and reachable share of the NIC rate);
//   - the NVLink class: the same intra-node kind and GPU generation (the NVLink generation);
//   - the PCIe class: the same GPU generation and transport (a socket transport bounces through
//     host memory, RDMA goes GPU -> NIC over the PCIe switch);
//   - the per-step, launch and protocol overheads and the protocols' bandwidth factors and set:
//     the same GPU generation, intra-node kind and transport (what a step costs on those; the
//     launch overhead is fitted in place of NCCL's base latency, so it goes with them); where
//     they do not carry, NCCL's own protocols run at NCCL's own cost, as uncalibrated;
//   - the reduction rate: the same GPU model (its memory rate).
// A field the calibration does not record (an older file, an unknown GPU) does not hold a part
// back; the transport only counts where both sides ran across nodes. A part that does not carry
// leaves the target's own (nominal) values, and calibration_differences says which parts those
// are, so a calibration from a socket cluster never charges its kernel-TCP costs to an RDMA one.
#pragma once

#include "ddlsim/calibrate/calibration.hpp"

#include <string>

namespace ddlsim::calib {

struct CarriedParts {
  bool network = true;
  bool nvlink = true;
  bool pcie = true;
  bool steps = true; // per-step and launch overheads, the protocols and their factors
  bool reduce = true;

  bool link(LinkGroup group) const {
    return group == LinkGroup::network ? network : group == LinkGroup::nvlink ? nvlink : pcie;
  }
  bool all() const { return network && nvlink && pcie && steps && reduce; }
};

// The parts of a calibration fitted on `from` that apply to a node group that is `to`.
CarriedParts carried_parts(const FittedOn& from, const FittedOn& to);

// True when `calibration` applies to node group `index` of `spec`: it names no groups, or one of
// its selectors matches (node_group_matches).
bool calibration_targets(const Calibration& calibration, const topo::ClusterSpec& spec,
                         std::size_t index);

// The parts of `calibration` that apply to node group `index` of `spec` (all of them when it
// does not record the system it was fitted on), and the engine-wide parts (steps, reduction),
// which apply only where they carry to every group the calibration targets.
CarriedParts carried_parts(const Calibration& calibration, const topo::ClusterSpec& spec,
                           std::size_t index);
CarriedParts carried_engine_parts(const Calibration& calibration, const topo::ClusterSpec& spec);

// The parts that do not carry, for a warning: e.g. "the network class (NIC efficiency and
// latency) and the per-step, launch and protocol overheads"; empty when all carry.
std::string parts_left_out(const CarriedParts& parts);

} // namespace ddlsim::calib
