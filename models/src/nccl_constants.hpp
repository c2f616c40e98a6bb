// NCCL 2.30.7's tuning and topology constants, each with the file it comes from (paths inside
// github.com/NVIDIA/nccl at v2.30.7). Indices follow NCCL's own enums: algorithm (tree, ring,
// collnet_direct, collnet_chain, nvls, nvls_tree, pat), protocol (LL, LL128, Simple), hardware
// (NVLink, PCI, NET), compute-capability class (Volta, Ampere, Hopper, Blackwell) and node-count
// class (1 node, 2 nodes, more).
#pragma once

#include <array>

namespace ddlsim::models::nccl {

inline constexpr int kAlgos = 7;
inline constexpr int kProtos = 3;
inline constexpr int kHw = 3; // NVLink, PCI, NET (src/graph/tuning.cc: NCCL_HW_*)
inline constexpr int kHwNvlink = 0, kHwPci = 1, kHwNet = 2;
inline constexpr int kTree = 0, kRing = 1, kCollnetDirect = 2, kCollnetChain = 3, kNvls = 4,
                     kNvlsTree = 5, kPat = 6;
inline constexpr int kLl = 0, kLl128 = 1, kSimple = 2;

using PerProto = std::array<float, kProtos>;
using PerAlgoProto = std::array<PerProto, kAlgos>;

// src/graph/tuning.cc, ncclTunerConstantsDefaults.baseLatencies (us): per-call software latency.
inline constexpr PerAlgoProto kBaseLatencies{{
    {6.8f, 14.0f, 8.4f}, // Tree
    {6.6f, 14.0f, 8.4f}, // Ring
    {0, 0, 0},           // CollNet Direct
    {0, 0, 0},           // CollNet Chain
    {0, 0, 0},           // NVLS
    {0, 0, 0},           // NVLS Tree
    {8.0f, 8.0f, 8.0f},  // PAT
}};

// src/graph/tuning.cc, ncclTunerConstantsDefaults.hwLatencies (us): per hop, by hardware.
inline constexpr std::array<PerAlgoProto, kHw> kHwLatencies{{
    {{{0.6f, 1.25f, 4.0f},
      {0.6f, 1.9f, 3.4f},
      {0, 0, 3.7f},
      {0, 0, 2.8f},
      {0, 0, 25.0f},
      {0, 0, 25.0f},
      {0, 0, 4.0f}}}, // NVLink
    {{{1.0f, 1.9f, 4.0f},
      {1.0f, 2.5f, 5.7f},
      {0, 0, 3.7f},
      {0, 0, 2.8f},
      {0, 0, 0},
      {0, 0, 0},
      {0, 0, 4.0f}}}, // PCI
    {{{5.0f, 8.5f, 14.0f},
      {2.7f, 4.0f, 14.0f},
      {0, 0, 31.0f},
      {0, 0, 30.0f},
      {0, 0, 18.0f},
      {0, 0, 20.9f},
      {0, 0, 14.0f}}}, // NET
}};

// src/graph/tuning.cc, ncclTunerConstantsDefaults (GB/s). llMaxBws is indexed [index1][nodes
// class] with index1 = the compute-capability class on one node, else the CPU (0 Intel, 1 AMD);
// the others [compute-capability class][nodes class].
using PerNodes = std::array<double, 3>;
inline constexpr std::array<PerNodes, 4> kLlMaxBws{
    {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 2 * 45.0, 2 * 35.0}}};
inline constexpr std::array<PerNodes, 4> kPerChMaxRingLl128Bws{
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}}};
inline constexpr std::array<PerNodes, 4> kPerChMaxTreeLl128Bws{
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}}};
inline constexpr std::array<PerNodes, 4> kPerChMaxTreeBws{
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}}};
inline constexpr std::array<PerNodes, 4> kPerChMaxNvlsTreeBws{
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}}};

// src/graph/tuning.cc, nvlsEfficiency, by compute-capability class.
inline constexpr std::array<float, 4> kNvlsEfficiency{0.0f, 0.0f, 0.85f, 0.74f};

// src/graph/tuning.cc, treeCorrectionFactor[protocol][log2(bytes / 64)], 64 B to 256 MB.
inline constexpr std::array<std::array<float, 24>, kProtos> kTreeCorrectionFactor{{
    {1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .7f, .7f,  .7f,  .7f,  .6f,  .5f,
     .4f,  .4f,  .5f,  .6f,  .7f, .8f, .9f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f},
    {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .8f, .8f, .7f,  .6f,  .6f,
     .6f,  .6f,  .6f,  .6f,  .8f,  .9f, .9f, .9f, .9f, 1.0f, 1.0f, 1.0f},
    {.9f, .9f, .9f, .9f, .9f, .9f, .9f, .8f, .7f, .6f, .6f, .5f,
     .5f, .5f, .5f, .6f, .7f, .8f, .7f, .7f, .8f, .9f, .9f, .9f},
}};

// src/graph/tuning.cc, getNetOverhead (us): per inter-node ring step on x86 Intel (and other
// CPUs); 2 on AMD x86. Times 3 for Simple.
inline constexpr float kNetOverheadIntel = 1.0f;
inline constexpr float kNetOverheadAmd = 2.0f;

// src/graph/tuning.cc, ncclTopoGetAlgoTime: the ring's Simple latency plateau on several nodes.
inline constexpr float kRingPlateauPreAmpere = 1.9f;
inline constexpr float kRingPlateau = 1.4f;

// src/include/device.h and src/include/comm.h: threads per channel and per-thread work before
// NCCL adds channels (topoGetAlgoInfo in src/enqueue.cc).
inline constexpr int kWarpSize = 32;
inline constexpr int kMaxNthreads = 640;       // NCCL_MAX_NTHREADS
inline constexpr int kSimpleMaxNthreads = 512; // NCCL_SIMPLE_MAX_NTHREADS
inline constexpr int kLlMaxNthreads = 512;     // NCCL_LL_MAX_NTHREADS
inline constexpr int kLl128MaxNthreads = 640;  // NCCL_LL128_MAX_NTHREADS
inline constexpr int kLlThreadThreshold = 8;   // NCCL_LL_THREAD_THRESHOLD
inline constexpr int kLl128ThreadThreshold = 8;
inline constexpr int kSimpleThreadThreshold = 64;
inline constexpr int kMaxChannels = 64;  // MAXCHANNELS (src/include/device.h)
inline constexpr int kMaxNvlsArity = 32; // NCCL_MAX_NVLS_ARITY (src/include/device.h)

// src/transport/nvls.cc: NVLS channels by architecture (NVLS_NCHANNELS_SM90, _SM100, _SM100_NVL).
inline constexpr int kNvlsChannelsSm90 = 16;
inline constexpr int kNvlsChannelsSm100 = 32;    // several nodes
inline constexpr int kNvlsChannelsSm100Nvl = 24; // one node

// src/graph/topo.h: NCCL's bandwidth per NVLink link by architecture (GB/s) and the others.
inline constexpr double kSm60NvlinkBw = 18.0;
inline constexpr double kSm70NvlinkBw = 20.0;
inline constexpr double kSm80NvlinkBw = 20.0;
inline constexpr double kSm86NvlinkBw = 12.0;
inline constexpr double kSm90NvlinkBw = 20.6;
inline constexpr double kSm100NvlinkBw = 40.1;
inline constexpr double kPciBw = 12.0;   // PCI_BW, "PCI Gen3 x16"
inline constexpr double kLocBw = 5000.0; // LOC_BW

// src/graph/search.cc: the per-channel speeds the search tries, fastest first, inside one node
// (Intra) and across nodes (Inter), by architecture.
inline constexpr std::array<double, 13> kSpeedIntra{40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                                    9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
inline constexpr std::array<double, 19> kSpeedInter{48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0,
                                                    12.0, 10.0, 9.0,  7.0,  6.0,  5.0,  4.0,
                                                    3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr std::array<double, 11> kSm90SpeedIntra{60.0, 50.0, 40.0, 30.0, 24.0, 20.0,
                                                        15.0, 12.0, 11.0, 6.0,  3.0};
inline constexpr std::array<double, 17> kSm90SpeedInter{48.0, 45.0, 42.0, 40.0, 30.0, 24.0,
                                                        22.0, 20.0, 17.5, 15.0, 12.0, 6.0,
                                                        3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr std::array<double, 12> kSm100SpeedIntra{90.0, 80.0, 70.0, 60.0, 50.0, 45.0,
                                                         40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
inline constexpr std::array<double, 20> kSm100SpeedInter{96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0,
                                                         30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0,
                                                         6.0,  3.0,  2.4,  1.2,  0.24, 0.12};

} // namespace ddlsim::models::nccl
