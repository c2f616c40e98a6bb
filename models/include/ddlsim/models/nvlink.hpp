// NVLink by generation: the datasheet's signalling rate per link and the payload rate NCCL's
// kernels get out of it. Both are keyed by the GPU's compute capability, as NCCL keys its own
// per-link figure (src/graph/topo.h, ncclTopoNVLinkBw).
#pragma once

#include "ddlsim/topologies/cluster_spec.hpp"

#include <string_view>

namespace ddlsim::models {

// The datasheet rate of one NVLink per direction, bytes/s (P100: NVLink 1, 20 GB/s; V100, A100
// and H100: NVLink 2/3/4, 25 GB/s; B200: NVLink 5, 50 GB/s; the sm_86 bridge 14.0625 GB/s).
double nvlink_line_bytes_per_link(int compute_capability);

// The payload rate of one NVLink per direction under NCCL's traffic, bytes/s: NCCL's figure
// (SM60/70/80/86/90/100_NVLINK_BW, src/graph/topo.h, NCCL 2.30.7).
double nvlink_payload_bytes_per_link(int compute_capability);

// nvlink_payload_bytes_per_link / nvlink_line_bytes_per_link: 0.90 (P100), 0.80 (V100, A100),
// 0.853 (sm_86), 0.824 (H100, H200, GH200), 0.802 (B200, GB200); 1 where NCCL has no figure
// (not a CUDA GPU, or older than sm_60).
double nvlink_payload_efficiency(int compute_capability);

// Sets every node group's nvlink_payload_efficiency from its gpu_model (models/src/nvlink.cpp
// says why the figure is the payload rate). A scenario's cluster gets it when it loads.
void set_nvlink_payload_efficiency(topo::ClusterSpec& spec);

} // namespace ddlsim::models
