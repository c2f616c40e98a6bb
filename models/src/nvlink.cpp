// The NVLink payload rate per generation.
//
// NCCL rates one NVLink at 18 GB/s on P100, 20 on V100 and A100, 20.6 on H100 and 40.1 on B200
// (src/graph/topo.h, NCCL 2.30.7) against the datasheets' 20, 25, 25, 25 and 50 GB/s per link
// and direction. The figure is the payload rate, not a tuning knob: NCCL's maintainer explains
// it as NVLink's protocol overhead, "each NVLink has a line rate of 25GB/s (in each direction)
// which converts to ~20GB/s effective bandwidth with a 128B payload size ... SMs are limited to
// 128B payload size, when Copy Engines can use 256B" (S. Jeaugey, NVIDIA/nccl-tests#149, A100);
// with traffic in both directions, as NCCL's rings and trees always have, the link carries the
// responses of the other direction too (NVIDIA/nccl-tests#258); on H100 "450GB/s is the line
// rate. With the protocol overhead (~20%) NCCL can get an effective NVLink bandwidth of
// 370GB/s" (NVIDIA/nccl-tests#212), i.e. 18 x 20.6. NVLink's packet format agrees in kind: a
// header flit of 16 bytes per packet, so a 64-byte payload is 4/5 of the flits and a 256-byte
// one 16/17 (Foley and Danskin, "Ultra-Performance Pascal GPU and NVLink Interconnect", IEEE
// Micro 37(2), 2017). ddlsim's collectives are NCCL's SM kernels, so their NVLinks run at this
// rate; copy-engine copies (256-byte payloads, e.g. p2pBandwidthLatencyTest's default) reach
// more and are not what ddlsim simulates.
#include "ddlsim/models/nvlink.hpp"

#include "ddlsim/models/gpu.hpp"
#include "nccl_constants.hpp"

namespace ddlsim::models {

double nvlink_line_bytes_per_link(int cc) {
  if (cc >= 100) return 50e9;
  if (cc == 86) return 14.0625e9; // GA102 whitepaper: 4 x4 links of 14.0625 GB/s per direction
  if (cc >= 70) return 25e9;
  return 20e9;
}

double nvlink_payload_bytes_per_link(int cc) {
  double gbs = nccl::kSm80NvlinkBw; // NCCL's default branch (ncclTopoNVLinkBw)
  if (cc >= 100)
    gbs = nccl::kSm100NvlinkBw;
  else if (cc >= 90)
    gbs = nccl::kSm90NvlinkBw;
  else if (cc == 86)
    gbs = nccl::kSm86NvlinkBw;
  else if (cc >= 80)
    gbs = nccl::kSm80NvlinkBw;
  else if (cc >= 70)
    gbs = nccl::kSm70NvlinkBw;
  else if (cc >= 60)
    gbs = nccl::kSm60NvlinkBw;
  return gbs * 1e9;
}

double nvlink_payload_efficiency(int cc) {
  if (cc < 60) return 1; // no NCCL figure: the datasheet rate
  return nvlink_payload_bytes_per_link(cc) / nvlink_line_bytes_per_link(cc);
}

void set_nvlink_payload_efficiency(topo::ClusterSpec& spec) {
  for (topo::NodeGroup& group : spec.node_groups)
    group.spec.nvlink_payload_efficiency =
        nvlink_payload_efficiency(compute_capability(group.spec.gpu_model));
}

} // namespace ddlsim::models
