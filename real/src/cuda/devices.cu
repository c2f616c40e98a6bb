#include "ddlsim/real/cuda_devices.hpp"

#include <cuda_runtime.h>

namespace ddlsim::real {
namespace {

__global__ void fill_kernel(int* out, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = static_cast<int>(i * 3 + 1);
}

std::string describe(const char* what, cudaError_t error) {
  return std::string(what) + ": " + cudaGetErrorString(error);
}

} // namespace

std::vector<CudaDevice> cuda_devices(std::string& why) {
  std::vector<CudaDevice> devices;
  int count = 0;
  if (cudaError_t error = cudaGetDeviceCount(&count); error != cudaSuccess) {
    why = describe("cudaGetDeviceCount", error);
    return devices;
  }
  if (count == 0) why = "the CUDA runtime sees no GPU";
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaError_t error = cudaGetDeviceProperties(&prop, i); error != cudaSuccess) {
      why = describe("cudaGetDeviceProperties", error);
      continue;
    }
    devices.push_back({i, prop.name, prop.major, prop.minor, prop.totalGlobalMem});
  }
  return devices;
}

std::string cuda_self_test(int device, std::size_t n) {
  if (cudaError_t error = cudaSetDevice(device); error != cudaSuccess)
    return describe("cudaSetDevice", error);
  int* buffer = nullptr;
  if (cudaError_t error = cudaMalloc(&buffer, n * sizeof(int)); error != cudaSuccess)
    return describe("cudaMalloc", error);
  const unsigned threads = 256;
  const unsigned blocks = static_cast<unsigned>((n + threads - 1) / threads);
  fill_kernel<<<blocks, threads>>>(buffer, n);
  std::vector<int> host(n);
  cudaError_t error = cudaGetLastError();
  if (error == cudaSuccess)
    error = cudaMemcpy(host.data(), buffer, n * sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(buffer);
  if (error != cudaSuccess) return describe("kernel or copy", error);
  for (std::size_t i = 0; i < n; ++i)
    if (host[i] != static_cast<int>(i * 3 + 1))
      return "element " + std::to_string(i) + " is " + std::to_string(host[i]);
  return "";
}

} // namespace ddlsim::real
