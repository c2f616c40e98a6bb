// TP communication overlap (LlmParallel::tp_comm_overlap): what Transformer Engine's userbuffers
// overlap each TP collective of a dense layer with, and how (TransformerEngine
// transformer_engine/pytorch/module/base.py, initialize_ub's default configuration, which
// Megatron-LM's --tp-comm-overlap uses unless --tp-comm-overlap-cfg names another;
// transformer_engine/common/comm_gemm_overlap/comm_gemm_overlap.cpp for the methods):
//  - ring exchange ("qkv_fprop", "fc1_fprop", "proj_dgrad", "fc2_dgrad"): the sequence-parallel
//    all-gather before a GEMM runs as tp - 1 point-to-point steps around the TP ring on the copy
//    engines ("use_ce"), in tp chunks; the GEMM runs chunk by chunk, the local one first, each
//    other one once it has arrived (split_overlap_ag). No SMs are taken from the GEMM.
//  - pipeline ("proj_fprop", "fc2_fprop"): the GEMM before a reduce-scatter runs in 4 chunks
//    ("num_splits"), each chunk's reduce-scatter launched when it is done (split_overlap_rs);
//    the communication kernel takes 16 SMs ("num_sm") and the GEMM runs on the others
//    ("set_sm_margin": _math_sms = SMs - num_sm in CommOverlapCore::initialize).
//  - bulk ("qkv_wgrad", "fc1_wgrad"): the backward pass's reduce-scatter of the input gradient
//    runs whole beside the weight-gradient GEMM (bulk_overlap), again on 16 SMs with the GEMM on
//    the rest.
#pragma once

#include "ddlsim/models/llm.hpp"

namespace ddlsim::models {

// Transformer Engine's defaults (base.py, initialize_ub: get_default_config).
inline constexpr int kTpOverlapPipelineSplits = 4; // "num_splits" of the pipelined method
inline constexpr int kTpOverlapCommSms = 16;       // "num_sm" of the pipeline and bulk methods

// The GEMMs of one block (attention or a dense FFN) of one micro-batch on one TP rank that the
// TP collectives overlap, at full speed (the SM margin is applied by the caller).
struct TpOverlapGemms {
  Picoseconds gather_forward = 0;   // forward, after the all-gather: QKV or FC1
  Picoseconds scatter_forward = 0;  // forward, before the reduce-scatter: proj or FC2
  Picoseconds gather_backward = 0;  // backward, after the gradient's all-gather: proj or FC2 dgrad
  Picoseconds scatter_backward = 0; // backward, beside the reduce-scatter: QKV or FC1 wgrad
};
struct TpOverlapTimes {
  TpOverlapGemms attention, ffn;
};

// From the measured kernel rates where the GPU has a table (the same rates as llm_compute.cpp),
// else the roofline's linear-layer rate.
TpOverlapTimes llm_tp_overlap_gemms(const LlmSpec& spec);

// Streaming multiprocessors of the GPU (the vendor's architecture whitepapers), or 0 when the
// model does not know them: then no SM margin is applied.
int streaming_multiprocessors(const GpuSpec& gpu);

// The slowdown of a GEMM that runs on the SMs the communication kernel leaves it:
// SMs / (SMs - kTpOverlapCommSms), 1 when the SMs are unknown.
double tp_overlap_sm_margin(const GpuSpec& gpu);

} // namespace ddlsim::models
