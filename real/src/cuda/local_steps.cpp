#include "local_steps.hpp"

#include "cuda_kernels.hpp"

#include <cmath>
#include <string>

namespace ddlsim::real::cuda {

namespace {

void must(cudaError_t error, const char* what) {
  if (error != cudaSuccess) throw StepFailure(std::string(what) + ": " + cudaGetErrorString(error));
}

} // namespace

void enqueue_combine(const coll::CollectiveCall& call, const void* a, const void* b, void* dst,
                     std::uint64_t bytes, cudaStream_t stream) {
  if (call.reduction == coll::Reduction::adasum)
    throw StepFailure("the GPU backends have no adasum kernel (run it with --backend host)");
  must(launch_add(static_cast<int>(call.dtype), a, b, dst, bytes / coll::element_size(call.dtype),
                  stream),
       "reduce kernel");
}

void enqueue_local_step(const coll::Step& step, const coll::CollectiveCall& call, const void* src,
                        const void* aux, void* dst, cudaStream_t stream,
                        CodecWorkspace& workspace) {
  const int dtype = static_cast<int>(call.dtype);
  const std::size_t e = coll::element_size(call.dtype);
  const bool down = step.kind == coll::StepKind::compress;
  switch (step.kind) {
  case coll::StepKind::copy:
    if (step.dst.bytes > 0)
      must(cudaMemcpyAsync(dst, src, step.dst.bytes, cudaMemcpyDeviceToDevice, stream),
           "cudaMemcpyAsync");
    return;
  case coll::StepKind::reduce:
    return enqueue_combine(call, dst, src, dst, step.dst.bytes, stream);
  case coll::StepKind::scale:
    must(launch_scale(dtype, src, dst, step.dst.bytes / e, step.param, stream), "scale kernel");
    return;
  case coll::StepKind::compute:
    must(launch_spin(std::llround(step.param / 1000), stream), "spin kernel");
    return;
  case coll::StepKind::compress:
  case coll::StepKind::decompress:
    break;
  default:
    throw StepFailure("not a local step");
  }
  switch (step.codec) {
  case coll::Codec::topk:
    must(down ? launch_topk_compress(dtype, src, step.src.bytes, dst, step.dst.bytes, workspace,
                                     stream)
              : launch_topk_decompress(dtype, src, step.src.bytes, dst, step.dst.bytes, workspace,
                                       stream),
         "top-k kernels");
    return;
  case coll::Codec::fp16_cast:
    must(down ? launch_fp16_compress(dtype, src, dst, step.src.bytes / e, stream)
              : launch_fp16_decompress(dtype, src, dst, step.dst.bytes / e, stream),
         "fp16 cast kernel");
    return;
  case coll::Codec::chunk_norms:
    must(launch_chunk_norms(dtype, src, step.src.bytes, dst, std::size_t(step.param), stream),
         "chunk norms kernel");
    return;
  case coll::Codec::chunk_select:
    must(launch_chunk_select(down, aux, step.aux.bytes / 4, src, dst,
                             down ? step.dst.bytes : step.src.bytes, std::size_t(step.param),
                             workspace, stream),
         "chunk select kernels");
    return;
  case coll::Codec::none:
    break;
  }
  throw StepFailure("a compress / decompress step without a codec");
}

} // namespace ddlsim::real::cuda
