// Our element-wise kernels for the CUDA backend, launched on a stream. Element types follow the
// call's dtype (0 fp32, 1 fp16, 2 bf16, as coll::DataType); arithmetic is in float (scale in
// double) with round-to-nearest-even stores, exactly as the reference executor rounds.
#pragma once

#include <cstddef>
#include <cuda_runtime_api.h>

namespace ddlsim::real::cuda {

// out[i] = a[i] + b[i]; out may alias a or b.
cudaError_t launch_add(int dtype, const void* a, const void* b, void* out, std::size_t n,
                       cudaStream_t stream);
// dst[i] = src[i] * factor.
cudaError_t launch_scale(int dtype, const void* src, void* dst, std::size_t n, double factor,
                         cudaStream_t stream);
// Keeps one thread busy for about `nanoseconds` (a compute step standing in for model work).
cudaError_t launch_spin(long long nanoseconds, cudaStream_t stream);

// Pacing: stamp writes the GPU's global timer (ns) into *slot; pace then keeps the stream busy
// until `nanoseconds` have passed since the stamp. Between them a copy or reduce lasts at least
// that long (a virtual link of a configured rate, see gpu_layout.hpp).
cudaError_t launch_stamp(unsigned long long* slot, cudaStream_t stream);
cudaError_t launch_pace(const unsigned long long* slot, long long nanoseconds, cudaStream_t stream);

} // namespace ddlsim::real::cuda
