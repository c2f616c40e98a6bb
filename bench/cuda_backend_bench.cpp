// GPU benchmark (figures, not a test): our reduce kernel's bandwidth against the device's copy
// bandwidth (goal >= 90%), and a ring all-reduce over 8 virtual ranks against the copy limit.
// Usage: bench_cuda_backend [MiB]   (default 256). Exits 77 when no GPU is visible.
#include "cuda_kernels.hpp"

#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/real/cuda_backend.hpp"

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime_api.h>
#include <string>

using namespace ddlsim;

namespace {

// Seconds per call of `work` on the default stream, averaged over `repeats`.
template <typename Work> double time_it(Work work, int repeats) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  work();
  cudaEventRecord(start);
  for (int i = 0; i < repeats; ++i) work();
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / 1e3 / repeats;
}

} // namespace

int main(int argc, char** argv) {
  if (const std::string why = real::cuda_unavailable_reason(); !why.empty()) {
    std::printf("SKIP: %s\n", why.c_str());
    return 77;
  }
  const std::size_t bytes = std::size_t(argc > 1 ? std::atoi(argv[1]) : 256) << 20;
  void *a = nullptr, *b = nullptr, *out = nullptr;
  cudaMalloc(&a, bytes);
  cudaMalloc(&b, bytes);
  cudaMalloc(&out, bytes);
  cudaMemset(a, 0, bytes);
  cudaMemset(b, 0, bytes);
  const double copy =
      time_it([&] { cudaMemcpyAsync(out, a, bytes, cudaMemcpyDeviceToDevice); }, 20);
  const double copy_bw = 2.0 * double(bytes) / copy; // read + write
  std::printf("# %zu MiB buffers; device copy: %.1f GB/s (read + write)\n", bytes >> 20,
              copy_bw / 1e9);
  const char* names[] = {"fp32", "fp16", "bf16"};
  const std::size_t sizes[] = {4, 2, 2};
  for (int t = 0; t < 3; ++t) {
    const std::size_t n = bytes / sizes[t];
    const double reduce = time_it([&] { real::cuda::launch_add(t, a, b, out, n, nullptr); }, 20);
    const double reduce_bw = 3.0 * double(bytes) / reduce; // two reads + one write
    std::printf("reduce %s: %.1f GB/s = %.1f%% of the copy bandwidth (goal >= 90%%)\n", names[t],
                reduce_bw / 1e9, 100 * reduce_bw / copy_bw);
  }
  cudaFree(a);
  cudaFree(b);
  cudaFree(out);

  coll::CollectiveCall call;
  call.algorithm = "ring";
  call.ranks = 8;
  call.bytes = bytes;
  real::CudaOptions options;
  options.iterations = 5;
  options.warmup = 1;
  const real::CudaRun run = real::run_cuda(coll::Schedule::make(call), options);
  if (!run.ok) {
    std::printf("ring failed: %s\n", run.error.c_str());
    return 1;
  }
  // Each rank moves 2(p-1)/p of the buffer; all 8 share one device's copy bandwidth.
  const double busbw = double(bytes) / run.seconds * 2 * 7 / 8;
  const double limit = copy_bw / 2 / 8; // per rank, when the 8 ranks copy at once
  std::printf("ring all-reduce, 8 virtual ranks: %.3f ms, busbw %.1f GB/s, %.1f%% of the "
              "device copy limit shared by 8 ranks (%.1f GB/s)%s\n",
              run.seconds * 1e3, busbw / 1e9, 100 * busbw / limit, limit / 1e9,
              run.checked ? "" : " (unchecked: above the check limit)");
  return 0;
}
