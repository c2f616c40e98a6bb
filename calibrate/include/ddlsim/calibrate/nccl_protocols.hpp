// Which of NCCL's protocols (LL, LL128, Simple) a measured system ran with when nobody set
// NCCL_PROTO, following NCCL's own rule (src/graph/tuning.cc, ncclTopoTuneModel): LL and Simple
// are always on; LL128 is on by default only when
//   - the NCCL version has it (2.5 and later) and enables it for the GPU architecture
//     (models::nccl_ll128_architecture, the rule NCCL's model in models/ uses too), with one
//     architecture in the whole job;
//   - the GPUs of a node talk over NVLink (typeIntra <= PATH_NVB), or a node has one GPU;
//   - across nodes, the GPU reaches its NIC through PCIe switches only (typeInter <= PATH_PXB),
//     i.e. GPUDirect RDMA: not with NCCL's socket transport (NET/Socket stages through host
//     memory) and not with GPUs and NICs on the CPU root complex.
// Where the log has no transport line, the scenario's topology decides. Where it has no NCCL
// version and the newest rule would enable LL128, whether it ran is not known: LL128 becomes
// `optional` (the fit keeps it only where the data support it). The reason says which.
#pragma once

#include "ddlsim/calibrate/measurement.hpp"
#include "ddlsim/models/gpu.hpp"
#include "ddlsim/topologies/cluster_spec.hpp"

#include <string>
#include <vector>

namespace ddlsim::calib {

struct ProtocolChoice {
  std::vector<std::string> protocols; // the bandwidth one ("simple") first
  std::string optional;               // a protocol that may have run ("ll128"), or ""
  std::string reason;                 // one line, printed as an inference
};

// `system`: what the log says (version, transport, GPU name); `spec`: the measured cluster.
ProtocolChoice infer_nccl_protocols(const MeasuredSystem& system, const topo::ClusterSpec& spec);

// CUDA compute capability x10 of a GPU model name (models/gpu.hpp: one table for everything).
using models::compute_capability;

} // namespace ddlsim::calib
