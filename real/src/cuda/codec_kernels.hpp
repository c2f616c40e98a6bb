// Our kernels for the compress / decompress codecs of step.hpp (top-k, fp16 cast, chunk norms,
// chunk select), byte for byte the layouts and roundings of the reference codecs
// (collectives/src/codecs.cpp), so GPU runs of the sparse all-reduces match the reference.
// Launched on a stream; a workspace per stream holds their temporary device memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cuda_runtime_api.h>

namespace ddlsim::real::cuda {

// Temporary device memory of the codec kernels for one stream; grows on demand (the growth
// synchronizes the stream once), freed by the destructor.
class CodecWorkspace {
public:
  CodecWorkspace() = default;
  ~CodecWorkspace();
  CodecWorkspace(const CodecWorkspace&) = delete;
  CodecWorkspace& operator=(const CodecWorkspace&) = delete;

  // At least `bytes` of device memory on the current device, aligned to 256 B.
  cudaError_t reserve(std::size_t bytes, cudaStream_t stream);
  void* data() const { return data_; }
  // Counts data-dependent failures (a top-k index outside its destination); read by error().
  std::uint32_t* errors() const { return errors_; }
  // Copies the error count back (synchronizes the stream); 0 when no kernel failed.
  cudaError_t error_count(cudaStream_t stream, std::uint32_t& count) const;

private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::uint32_t* errors_ = nullptr;
};

// dtype as coll::DataType: 0 fp32, 1 fp16, 2 bf16. Byte counts are those of the step's ranges.

// compress top-k: the k = dst_bytes / (4 + e) largest magnitudes of src as (uint32 index, value)
// pairs in ascending index order, ties by lower index (a radix select, then two scans).
cudaError_t launch_topk_compress(int dtype, const void* src, std::size_t src_bytes, void* dst,
                                 std::size_t dst_bytes, CodecWorkspace& workspace,
                                 cudaStream_t stream);
// decompress top-k: dst[index] += value for every pair of src (indices distinct, as a compress
// writes them); an index outside dst is counted in workspace.errors() and skipped.
cudaError_t launch_topk_decompress(int dtype, const void* src, std::size_t src_bytes, void* dst,
                                   std::size_t dst_bytes, CodecWorkspace& workspace,
                                   cudaStream_t stream);
// fp16 cast: compress dst = fp16(src); decompress dst += float(src).
cudaError_t launch_fp16_compress(int dtype, const void* src, void* dst, std::size_t elements,
                                 cudaStream_t stream);
cudaError_t launch_fp16_decompress(int dtype, const void* src, void* dst, std::size_t elements,
                                   cudaStream_t stream);
// chunk norms: the L2 norm of each chunk of `chunk_bytes` of src as fp32, summed in double in
// element order without fused multiply-adds (the reference's exact arithmetic).
cudaError_t launch_chunk_norms(int dtype, const void* src, std::size_t src_bytes, void* dst,
                               std::size_t chunk_bytes, cudaStream_t stream);
// chunk select: the packed_bytes / chunk_bytes chunks with the largest norms in aux (fp32 per
// chunk, ties by lower index), in ascending chunk order; compress packs them from dense into
// packed, decompress writes them back from packed into dense.
cudaError_t launch_chunk_select(bool compress, const void* aux, std::size_t chunks,
                                const void* from, void* to, std::size_t packed_bytes,
                                std::size_t chunk_bytes, CodecWorkspace& workspace,
                                cudaStream_t stream);

} // namespace ddlsim::real::cuda
