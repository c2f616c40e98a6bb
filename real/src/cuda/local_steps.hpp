// A rank's local steps (copy, reduce, scale, compute, compress, decompress) as our kernels on
// its stream: the one GPU implementation of step.hpp's local steps, used by the CUDA backend
// (virtual ranks) and the NCCL backend (one rank per GPU).
#pragma once

#include "codec_kernels.hpp"

#include "ddlsim/collectives/call.hpp"
#include "ddlsim/collectives/step.hpp"

#include <cuda_runtime_api.h>
#include <stdexcept>

namespace ddlsim::real::cuda {

// A step the GPU backends cannot run (adasum) or a CUDA call that failed; the message names the
// CUDA call but not the step (callers add where it is).
struct StepFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Enqueues `step` on `stream` (the current device must be the stream's). src, aux and dst point
// at the step's ranges in the rank's device buffers (null for empty ranges). Throws StepFailure.
void enqueue_local_step(const coll::Step& step, const coll::CollectiveCall& call, const void* src,
                        const void* aux, void* dst, cudaStream_t stream, CodecWorkspace& workspace);

// dst = a (op) b over `bytes` of the call's dtype (recv_reduce's arithmetic); throws StepFailure
// for adasum, which has no GPU kernel.
void enqueue_combine(const coll::CollectiveCall& call, const void* a, const void* b, void* dst,
                     std::uint64_t bytes, cudaStream_t stream);

} // namespace ddlsim::real::cuda
