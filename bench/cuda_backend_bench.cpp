// GPU benchmark (figures, not a test): our reduce kernel's bandwidth against the device's copy
// bandwidth (goal >= 90%), a ring all-reduce over 8 virtual ranks against the copy limit (and
// paced to a virtual 100 Gbit/s link against the time the pace implies), and our top-k
// selection's time (compare: python3 bench/cuda_backend_bench_topk.py, torch.topk).
// Usage: bench_cuda_backend [MiB]   (default 256). Exits 77 when no GPU is visible.
#include "codec_kernels.hpp"
#include "cuda_kernels.hpp"

#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/real/cuda_backend.hpp"

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime_api.h>
#include <string>
#include <vector>

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

  // The same ring with every transfer paced to a 100 Gbit/s virtual link: the time the pace
  // implies is 2(p-1) steps of bytes/p each.
  options.pace.gbps = 100;
  const real::CudaRun paced = real::run_cuda(coll::Schedule::make(call), options);
  const double implied = 2.0 * 7 * double(real::paced_copy_ns(options.pace, bytes / 8)) * 1e-9;
  std::printf("ring all-reduce, 8 virtual ranks paced at 100 Gbit/s: %.3f ms, %.1f%% above the "
              "%.3f ms the pace implies%s\n",
              paced.seconds * 1e3, 100 * (paced.seconds / implied - 1), implied * 1e3,
              paced.ok ? "" : (" FAILED: " + paced.error).c_str());

  // Top-k selection (fp32, k = 1% of n): our radix select + scans.
  std::printf("# top-k selection, fp32, k = 1%% of n (torch.topk: python3 "
              "bench/cuda_backend_bench_topk.py)\n");
  for (std::size_t n : {std::size_t(1) << 20, std::size_t(16) << 20, std::size_t(64) << 20}) {
    const std::size_t k = n / 100;
    void *src = nullptr, *dst = nullptr;
    cudaMalloc(&src, n * 4);
    cudaMalloc(&dst, k * 8);
    std::vector<float> host(n);
    std::uint32_t state = 12345;
    for (float& v : host) {
      state = state * 1664525u + 1013904223u;
      v = float(int(state >> 8) - (1 << 23)) / float(1 << 20);
    }
    cudaMemcpy(src, host.data(), n * 4, cudaMemcpyHostToDevice);
    real::cuda::CodecWorkspace workspace;
    const double seconds = time_it(
        [&] { real::cuda::launch_topk_compress(0, src, n * 4, dst, k * 8, workspace, nullptr); },
        10);
    std::printf("top-k n=%zu k=%zu: %.3f ms\n", n, k, seconds * 1e3);
    cudaFree(src);
    cudaFree(dst);
  }
  return 0;
}
