#include "codec_kernels.hpp"

#include "radix_select.hpp"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace ddlsim::real::cuda {

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::size_t n) {
  const std::size_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535 ? (blocks == 0 ? 1 : blocks) : 65535);
}

std::size_t align_up(std::size_t bytes) {
  return (bytes + 255) / 256 * 256;
}

__device__ float load(int dtype, const unsigned char* p, std::size_t i) {
  if (dtype == 0) return reinterpret_cast<const float*>(p)[i];
  if (dtype == 1) return __half2float(reinterpret_cast<const __half*>(p)[i]);
  return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(p)[i]);
}

__device__ void store(int dtype, unsigned char* p, std::size_t i, float v) {
  if (dtype == 0)
    reinterpret_cast<float*>(p)[i] = v;
  else if (dtype == 1)
    reinterpret_cast<__half*>(p)[i] = __float2half_rn(v);
  else
    reinterpret_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v);
}

__device__ std::uint32_t key_of(int dtype, const unsigned char* p, std::size_t i) {
  if (dtype == 0) return magnitude_key32(reinterpret_cast<const std::uint32_t*>(p)[i]);
  return magnitude_key16(reinterpret_cast<const std::uint16_t*>(p)[i]);
}

#define DDLSIM_GRID_LOOP(i, n)                                                                     \
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < (n);                \
       i += std::size_t(gridDim.x) * blockDim.x)

__global__ void histogram_kernel(int dtype, const unsigned char* src, std::size_t n,
                                 const RadixSelectState* state, int shift,
                                 std::uint32_t* histogram) {
  __shared__ std::uint32_t local[256];
  for (int d = threadIdx.x; d < 256; d += blockDim.x) local[d] = 0;
  __syncthreads();
  const std::uint32_t prefix = state->prefix, mask = state->mask;
  DDLSIM_GRID_LOOP(i, n) {
    const std::uint32_t key = key_of(dtype, src, i);
    if ((key & mask) == prefix) atomicAdd(&local[(key >> shift) & 255u], 1u);
  }
  __syncthreads();
  for (int d = threadIdx.x; d < 256; d += blockDim.x)
    if (local[d]) atomicAdd(&histogram[d], local[d]);
}

__global__ void init_select_kernel(RadixSelectState* state, std::uint32_t k) {
  *state = RadixSelectState{};
  state->need = k;
}

__global__ void narrow_kernel(RadixSelectState* state, std::uint32_t* histogram, int shift) {
  radix_narrow(*state, histogram, shift);
  for (int d = 0; d < 256; ++d) histogram[d] = 0; // ready for the next pass
}

// equal[i] = 1 where the key is the threshold.
__global__ void equal_kernel(int dtype, const unsigned char* src, std::size_t n,
                             const RadixSelectState* state, std::uint32_t* equal) {
  const std::uint32_t threshold = state->prefix;
  DDLSIM_GRID_LOOP(i, n) {
    equal[i] = key_of(dtype, src, i) == threshold ? 1u : 0u;
  }
}

// chosen[i] = 1 where the key is above the threshold, or equal and among the first `need`.
__global__ void choose_kernel(int dtype, const unsigned char* src, std::size_t n,
                              const RadixSelectState* state, const std::uint32_t* equal_before,
                              std::uint32_t* chosen) {
  const std::uint32_t threshold = state->prefix, need = state->need;
  DDLSIM_GRID_LOOP(i, n) {
    const std::uint32_t key = key_of(dtype, src, i);
    chosen[i] = key > threshold || (key == threshold && equal_before[i] < need) ? 1u : 0u;
  }
}

__global__ void write_pairs_kernel(int dtype, const unsigned char* src, std::size_t n,
                                   const std::uint32_t* chosen, const std::uint32_t* position,
                                   unsigned char* dst, std::size_t k) {
  const std::size_t e = dtype == 0 ? 4 : 2;
  DDLSIM_GRID_LOOP(i, n) {
    if (!chosen[i] || position[i] >= k) continue;
    unsigned char* pair = dst + std::size_t(position[i]) * (4 + e);
    const auto index = static_cast<std::uint32_t>(i);
    for (int b = 0; b < 4; ++b) pair[b] = static_cast<unsigned char>(index >> (8 * b));
    for (std::size_t b = 0; b < e; ++b) pair[4 + b] = src[i * e + b];
  }
}

__global__ void topk_scatter_add_kernel(int dtype, const unsigned char* pairs, std::size_t count,
                                        unsigned char* dst, std::size_t dst_elements,
                                        std::uint32_t* errors) {
  const std::size_t e = dtype == 0 ? 4 : 2;
  DDLSIM_GRID_LOOP(p, count) {
    const unsigned char* pair = pairs + p * (4 + e);
    std::uint32_t index = 0;
    for (int b = 0; b < 4; ++b) index |= std::uint32_t(pair[b]) << (8 * b);
    if (index >= dst_elements) {
      atomicAdd(errors, 1u);
      continue;
    }
    alignas(4) unsigned char value[4] = {}; // load() reads it as one element
    for (std::size_t b = 0; b < e; ++b) value[b] = pair[4 + b];
    store(dtype, dst, index, load(dtype, dst, index) + load(dtype, value, 0));
  }
}

__global__ void fp16_compress_kernel(int dtype, const unsigned char* src, __half* dst,
                                     std::size_t n) {
  DDLSIM_GRID_LOOP(i, n) {
    dst[i] = __float2half_rn(load(dtype, src, i));
  }
}

__global__ void fp16_decompress_kernel(int dtype, const __half* src, unsigned char* dst,
                                       std::size_t n) {
  DDLSIM_GRID_LOOP(i, n) {
    store(dtype, dst, i, load(dtype, dst, i) + __half2float(src[i]));
  }
}

__global__ void chunk_norms_kernel(int dtype, const unsigned char* src, std::size_t elements,
                                   std::size_t chunk_elements, float* dst) {
  const std::size_t chunks = (elements + chunk_elements - 1) / chunk_elements;
  DDLSIM_GRID_LOOP(c, chunks) {
    double sum = 0;
    const std::size_t end = min(elements, (c + 1) * chunk_elements);
    for (std::size_t i = c * chunk_elements; i < end; ++i) {
      const double v = load(dtype, src, i);
      sum = __dadd_rn(sum, __dmul_rn(v, v)); // no fused multiply-add: the reference's rounding
    }
    dst[c] = __double2float_rn(__dsqrt_rn(sum));
  }
}

__global__ void iota_kernel(std::uint32_t* out, std::size_t n) {
  DDLSIM_GRID_LOOP(i, n) {
    out[i] = static_cast<std::uint32_t>(i);
  }
}

__global__ void norm_keys_kernel(const float* norms, std::uint32_t* keys, std::size_t n) {
  // Norms are >= 0, so their bit patterns order like their values.
  DDLSIM_GRID_LOOP(i, n) {
    keys[i] = __float_as_uint(norms[i]) & 0x7fffffffu;
  }
}

__global__ void chunk_copy_kernel(bool compress, const std::uint32_t* slot_chunk,
                                  const unsigned char* from, unsigned char* to,
                                  std::size_t packed_bytes, std::size_t chunk_bytes) {
  DDLSIM_GRID_LOOP(b, packed_bytes) {
    const std::size_t slot = b / chunk_bytes, offset = b % chunk_bytes;
    const std::size_t dense = std::size_t(slot_chunk[slot]) * chunk_bytes + offset;
    if (compress)
      to[b] = from[dense];
    else
      to[dense] = from[b];
  }
}

} // namespace

CodecWorkspace::~CodecWorkspace() {
  cudaFree(data_);
  cudaFree(errors_);
}

cudaError_t CodecWorkspace::reserve(std::size_t bytes, cudaStream_t stream) {
  if (!errors_) {
    if (cudaError_t error = cudaMalloc(&errors_, sizeof(std::uint32_t)); error != cudaSuccess)
      return error;
    if (cudaError_t error = cudaMemsetAsync(errors_, 0, sizeof(std::uint32_t), stream);
        error != cudaSuccess)
      return error;
  }
  if (bytes <= bytes_) return cudaSuccess;
  // Work already enqueued may still use the old memory.
  if (cudaError_t error = cudaStreamSynchronize(stream); error != cudaSuccess) return error;
  cudaFree(data_);
  data_ = nullptr;
  bytes_ = 0;
  if (cudaError_t error = cudaMalloc(&data_, bytes); error != cudaSuccess) return error;
  bytes_ = bytes;
  return cudaSuccess;
}

cudaError_t CodecWorkspace::error_count(cudaStream_t stream, std::uint32_t& count) const {
  count = 0;
  if (!errors_) return cudaSuccess;
  if (cudaError_t error =
          cudaMemcpyAsync(&count, errors_, sizeof count, cudaMemcpyDeviceToHost, stream);
      error != cudaSuccess)
    return error;
  return cudaStreamSynchronize(stream);
}

cudaError_t launch_topk_compress(int dtype, const void* src, std::size_t src_bytes, void* dst,
                                 std::size_t dst_bytes, CodecWorkspace& workspace,
                                 cudaStream_t stream) {
  const std::size_t e = dtype == 0 ? 4 : 2, n = src_bytes / e, k = dst_bytes / (4 + e);
  if (k == 0 || n == 0) return cudaSuccess;
  std::size_t scan_bytes = 0;
  if (cudaError_t error =
          cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, static_cast<std::uint32_t*>(nullptr),
                                        static_cast<std::uint32_t*>(nullptr), n);
      error != cudaSuccess)
    return error;
  // Layout: state | histogram[256] | equal[n] | equal_before[n] | position[n] | scan temp.
  const std::size_t state_at = 0, histogram_at = align_up(sizeof(RadixSelectState)),
                    equal_at = histogram_at + align_up(256 * 4),
                    before_at = equal_at + align_up(n * 4),
                    position_at = before_at + align_up(n * 4),
                    scan_at = position_at + align_up(n * 4);
  if (cudaError_t error = workspace.reserve(scan_at + align_up(scan_bytes), stream);
      error != cudaSuccess)
    return error;
  auto* base = static_cast<unsigned char*>(workspace.data());
  auto* state = reinterpret_cast<RadixSelectState*>(base + state_at);
  auto* histogram = reinterpret_cast<std::uint32_t*>(base + histogram_at);
  auto* equal = reinterpret_cast<std::uint32_t*>(base + equal_at);
  auto* before = reinterpret_cast<std::uint32_t*>(base + before_at);
  auto* position = reinterpret_cast<std::uint32_t*>(base + position_at);
  const auto* in = static_cast<const unsigned char*>(src);
  init_select_kernel<<<1, 1, 0, stream>>>(state, static_cast<std::uint32_t>(k));
  if (cudaError_t error = cudaMemsetAsync(histogram, 0, 256 * 4, stream); error != cudaSuccess)
    return error;
  const unsigned blocks = blocks_for(n);
  for (int shift = radix_first_shift(dtype == 0 ? 31 : 15); shift >= 0; shift -= 8) {
    histogram_kernel<<<blocks, kThreads, 0, stream>>>(dtype, in, n, state, shift, histogram);
    narrow_kernel<<<1, 1, 0, stream>>>(state, histogram, shift);
  }
  equal_kernel<<<blocks, kThreads, 0, stream>>>(dtype, in, n, state, equal);
  void* scan_temp = base + scan_at;
  if (cudaError_t error =
          cub::DeviceScan::ExclusiveSum(scan_temp, scan_bytes, equal, before, n, stream);
      error != cudaSuccess)
    return error;
  choose_kernel<<<blocks, kThreads, 0, stream>>>(dtype, in, n, state, before, equal);
  if (cudaError_t error =
          cub::DeviceScan::ExclusiveSum(scan_temp, scan_bytes, equal, position, n, stream);
      error != cudaSuccess)
    return error;
  write_pairs_kernel<<<blocks, kThreads, 0, stream>>>(dtype, in, n, equal, position,
                                                      static_cast<unsigned char*>(dst), k);
  return cudaGetLastError();
}

cudaError_t launch_topk_decompress(int dtype, const void* src, std::size_t src_bytes, void* dst,
                                   std::size_t dst_bytes, CodecWorkspace& workspace,
                                   cudaStream_t stream) {
  const std::size_t e = dtype == 0 ? 4 : 2, pairs = src_bytes / (4 + e);
  if (pairs == 0) return cudaSuccess;
  if (cudaError_t error = workspace.reserve(0, stream); error != cudaSuccess) return error;
  topk_scatter_add_kernel<<<blocks_for(pairs), kThreads, 0, stream>>>(
      dtype, static_cast<const unsigned char*>(src), pairs, static_cast<unsigned char*>(dst),
      dst_bytes / e, workspace.errors());
  return cudaGetLastError();
}

cudaError_t launch_fp16_compress(int dtype, const void* src, void* dst, std::size_t elements,
                                 cudaStream_t stream) {
  if (elements == 0) return cudaSuccess;
  fp16_compress_kernel<<<blocks_for(elements), kThreads, 0, stream>>>(
      dtype, static_cast<const unsigned char*>(src), static_cast<__half*>(dst), elements);
  return cudaGetLastError();
}

cudaError_t launch_fp16_decompress(int dtype, const void* src, void* dst, std::size_t elements,
                                   cudaStream_t stream) {
  if (elements == 0) return cudaSuccess;
  fp16_decompress_kernel<<<blocks_for(elements), kThreads, 0, stream>>>(
      dtype, static_cast<const __half*>(src), static_cast<unsigned char*>(dst), elements);
  return cudaGetLastError();
}

cudaError_t launch_chunk_norms(int dtype, const void* src, std::size_t src_bytes, void* dst,
                               std::size_t chunk_bytes, cudaStream_t stream) {
  const std::size_t e = dtype == 0 ? 4 : 2, elements = src_bytes / e;
  if (elements == 0) return cudaSuccess;
  const std::size_t chunk_elements = chunk_bytes / e;
  const std::size_t chunks = (elements + chunk_elements - 1) / chunk_elements;
  chunk_norms_kernel<<<blocks_for(chunks), kThreads, 0, stream>>>(
      dtype, static_cast<const unsigned char*>(src), elements, chunk_elements,
      static_cast<float*>(dst));
  return cudaGetLastError();
}

cudaError_t launch_chunk_select(bool compress, const void* aux, std::size_t chunks,
                                const void* from, void* to, std::size_t packed_bytes,
                                std::size_t chunk_bytes, CodecWorkspace& workspace,
                                cudaStream_t stream) {
  const std::size_t count = packed_bytes / chunk_bytes;
  if (count == 0 || chunks == 0) return cudaSuccess;
  std::size_t sort_bytes = 0, keys_bytes = 0;
  if (cudaError_t error = cub::DeviceRadixSort::SortPairsDescending(
          nullptr, sort_bytes, static_cast<const std::uint32_t*>(nullptr),
          static_cast<std::uint32_t*>(nullptr), static_cast<const std::uint32_t*>(nullptr),
          static_cast<std::uint32_t*>(nullptr), chunks);
      error != cudaSuccess)
    return error;
  if (cudaError_t error = cub::DeviceRadixSort::SortKeys(
          nullptr, keys_bytes, static_cast<const std::uint32_t*>(nullptr),
          static_cast<std::uint32_t*>(nullptr), count);
      error != cudaSuccess)
    return error;
  // Layout: keys[chunks] | sorted_keys[chunks] | ids[chunks] | sorted_ids[chunks] |
  // slot_chunk[count] | sort temp.
  const std::size_t a = align_up(chunks * 4);
  const std::size_t temp_at = 4 * a + align_up(count * 4);
  if (cudaError_t error =
          workspace.reserve(temp_at + align_up(std::max(sort_bytes, keys_bytes)), stream);
      error != cudaSuccess)
    return error;
  auto* base = static_cast<unsigned char*>(workspace.data());
  auto* keys = reinterpret_cast<std::uint32_t*>(base);
  auto* sorted_keys = reinterpret_cast<std::uint32_t*>(base + a);
  auto* ids = reinterpret_cast<std::uint32_t*>(base + 2 * a);
  auto* sorted_ids = reinterpret_cast<std::uint32_t*>(base + 3 * a);
  auto* slot_chunk = reinterpret_cast<std::uint32_t*>(base + 4 * a);
  void* temp = base + temp_at;
  const unsigned blocks = blocks_for(chunks);
  norm_keys_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const float*>(aux), keys, chunks);
  iota_kernel<<<blocks, kThreads, 0, stream>>>(ids, chunks);
  // Radix sort is stable: among equal norms the lower chunk index stays first.
  if (cudaError_t error = cub::DeviceRadixSort::SortPairsDescending(
          temp, sort_bytes, keys, sorted_keys, ids, sorted_ids, chunks, 0, 32, stream);
      error != cudaSuccess)
    return error;
  if (cudaError_t error = cub::DeviceRadixSort::SortKeys(temp, keys_bytes, sorted_ids, slot_chunk,
                                                         count, 0, 32, stream);
      error != cudaSuccess)
    return error;
  chunk_copy_kernel<<<blocks_for(packed_bytes), kThreads, 0, stream>>>(
      compress, slot_chunk, static_cast<const unsigned char*>(from),
      static_cast<unsigned char*>(to), packed_bytes, chunk_bytes);
  return cudaGetLastError();
}

} // namespace ddlsim::real::cuda
