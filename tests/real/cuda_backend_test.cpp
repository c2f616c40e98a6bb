// GPU test: the CUDA backend (virtual ranks on GPU 0) matches the reference executor bit for bit
// over several generators, dtypes and rank counts, the sparse codecs included; refuses adasum by
// naming the step, and NVLS (in-switch reduction); pacing holds a copy to its configured rate and
// paced links run side by side; with two or more GPUs, virtual ranks spread over them. Exits 77
// (ctest: skipped) with the reason when no GPU is visible.
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/real/cuda_backend.hpp"
#include "ddlsim/real/cuda_devices.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <utility>

using namespace ddlsim;

namespace {
int run_all();
}

int main() {
  // Line-buffered: a failure further on must not swallow the lines already printed.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  try {
    return run_all();
  } catch (const std::exception& e) {
    std::printf("FAILED: %s\n", e.what());
    return 1;
  }
}

namespace {
int run_all() {
  if (const std::string why = real::cuda_unavailable_reason(); !why.empty()) {
    std::printf("SKIP: no GPU visible (%s)\n", why.c_str());
    return 77;
  }
  int failures = 0;
  struct Case {
    coll::Op op;
    const char* algorithm;
    int ranks;
    coll::DataType dtype;
    coll::Reduction reduction;
  };
  const Case cases[] = {
      {coll::Op::all_reduce, "ring", 8, coll::DataType::fp32, coll::Reduction::sum},
      {coll::Op::all_reduce, "ring", 5, coll::DataType::fp16, coll::Reduction::avg},
      {coll::Op::all_reduce, "rabenseifner", 6, coll::DataType::bf16, coll::Reduction::sum},
      {coll::Op::all_reduce, "double_binary_tree", 7, coll::DataType::fp32, coll::Reduction::sum},
      {coll::Op::reduce_scatter, "ring", 4, coll::DataType::fp16, coll::Reduction::sum},
      {coll::Op::all_gather, "bruck", 5, coll::DataType::fp32, coll::Reduction::sum},
      {coll::Op::broadcast, "pipelined_chain", 4, coll::DataType::bf16, coll::Reduction::sum},
      {coll::Op::all_to_all, "pairwise", 4, coll::DataType::fp32, coll::Reduction::sum},
  };
  for (const Case& c : cases) {
    coll::CollectiveCall call;
    call.op = c.op;
    call.algorithm = c.algorithm;
    call.ranks = c.ranks;
    call.dtype = c.dtype;
    call.reduction = c.reduction;
    call.bytes = 4096 * std::uint64_t(c.ranks) * coll::element_size(c.dtype);
    real::CudaOptions options;
    options.warmup = 1; // then the timed executions replay a CUDA graph of one
    options.iterations = 2;
    const real::CudaRun run = real::run_cuda(coll::Schedule::make(call), options);
    const bool ok = run.ok && run.checked && run.wrong == 0;
    std::printf("%s: %s %s on %d ranks %s: %s\n", ok ? "ok" : "FAILED",
                std::string(coll::to_string(c.op)).c_str(), c.algorithm, c.ranks,
                std::string(coll::to_string(c.dtype)).c_str(), run.error.c_str());
    failures += ok ? 0 : 1;
  }
  {
    // Without a warm-up every execution is enqueued by the host (no graph): the same result.
    coll::CollectiveCall call;
    call.algorithm = "ring";
    call.ranks = 8;
    call.bytes = 8 * 4096 * 4;
    real::CudaOptions options;
    options.iterations = 2;
    const real::CudaRun run = real::run_cuda(coll::Schedule::make(call), options);
    const bool ok = run.ok && run.checked && run.wrong == 0;
    std::printf("%s: all_reduce ring on 8 ranks, each execution enqueued by the host: %s\n",
                ok ? "ok" : "FAILED", run.error.c_str());
    failures += ok ? 0 : 1;
  }
  // The codecs run through our kernels: top-k (radix select), chunk norms and chunk select.
  // coarse_sparse sums fp32 chunk norms, so it runs on fp32 calls only (its generator refuses
  // 16-bit ones).
  const std::pair<const char*, coll::DataType> sparse_cases[] = {
      {"topk", coll::DataType::fp32},
      {"topk", coll::DataType::fp16},
      {"coarse_sparse", coll::DataType::fp32},
  };
  for (const auto& [algorithm, dtype] : sparse_cases) {
    coll::CollectiveCall sparse;
    sparse.algorithm = algorithm;
    sparse.ranks = 4;
    sparse.dtype = dtype;
    sparse.bytes = 40000 * coll::element_size(dtype);
    if (std::string(algorithm) == "coarse_sparse") sparse.params.chunk_bytes = 256;
    real::CudaOptions options;
    options.warmup = 1;
    options.iterations = 2;
    const real::CudaRun run = real::run_cuda(coll::Schedule::make(sparse), options);
    const bool ok = run.ok && run.checked && run.wrong == 0;
    std::printf("%s: %s %s on 4 ranks: %s\n", ok ? "ok" : "FAILED", algorithm,
                std::string(coll::to_string(dtype)).c_str(), run.error.c_str());
    failures += ok ? 0 : 1;
  }
  coll::CollectiveCall adasum;
  adasum.algorithm = "recursive_doubling";
  adasum.ranks = 4;
  adasum.bytes = 4000;
  adasum.reduction = coll::Reduction::adasum;
  const real::CudaRun refused = real::run_cuda(coll::Schedule::make(adasum), {});
  const bool named = !refused.ok && refused.error.find("step") != std::string::npos &&
                     refused.error.find("adasum") != std::string::npos;
  std::printf("%s: adasum is refused naming the step: %s\n", named ? "ok" : "FAILED",
              refused.error.c_str());
  failures += named ? 0 : 1;
  // In-switch reduction (NVLS) needs multimem on an NVSwitch: refused, naming why.
  coll::CollectiveCall nvls;
  nvls.algorithm = "nvls";
  nvls.ranks = 4;
  nvls.bytes = 4000;
  const real::CudaRun no_switch = real::run_cuda(coll::Schedule::make(nvls), {});
  const bool said = !no_switch.ok && no_switch.error.find("in-switch") != std::string::npos;
  std::printf("%s: nvls is refused: %s\n", said ? "ok" : "FAILED", no_switch.error.c_str());
  failures += said ? 0 : 1;

  // Pacing: a 1 MiB send at 1 Gbit/s cannot take less than 8.39 ms, and halving the rate at
  // least doubles the time (lower bounds the pace kernel guarantees, not timing guesses).
  coll::CollectiveCall send;
  send.op = coll::Op::send_recv;
  send.algorithm = "direct";
  send.ranks = 2;
  send.root = 1;
  send.bytes = 1 << 20;
  double paced[2] = {};
  for (int i = 0; i < 2; ++i) {
    real::CudaOptions options;
    options.pace.gbps = i == 0 ? 1.0 : 0.5;
    options.iterations = 2;
    const real::CudaRun run = real::run_cuda(coll::Schedule::make(send), options);
    paced[i] = run.seconds;
    const double floor = double(real::paced_copy_ns(options.pace, send.bytes)) * 1e-9;
    const bool ok = run.ok && run.wrong == 0 && run.seconds >= floor;
    std::printf("%s: 1 MiB paced at %.1f Gbit/s took %.3f ms (floor %.3f ms) %s\n",
                ok ? "ok" : "FAILED", options.pace.gbps, run.seconds * 1e3, floor * 1e3,
                run.error.c_str());
    failures += ok ? 0 : 1;
  }
  const bool slower = paced[1] >= 1.9 * paced[0] * 0.99;
  std::printf("%s: half the rate, about twice the time (%.3f vs %.3f ms)\n",
              slower ? "ok" : "FAILED", paced[1] * 1e3, paced[0] * 1e3);
  failures += slower ? 0 : 1;

  // Paced links run side by side, as the links they stand in for do: an 8-rank ring all-reduce
  // of 8 MiB at 10 Gbit/s moves 1 MiB per rank and step over 14 steps, each at least 0.84 ms; a
  // backend that ran the ranks' transfers one after another would take about 8 times that.
  coll::CollectiveCall ring;
  ring.algorithm = "ring";
  ring.ranks = 8;
  ring.bytes = 8 << 20;
  real::CudaOptions ring_options;
  ring_options.pace.gbps = 10.0;
  ring_options.warmup = 1;
  ring_options.iterations = 2;
  const real::CudaRun paced_ring = real::run_cuda(coll::Schedule::make(ring), ring_options);
  const double step_floor = double(real::paced_copy_ns(ring_options.pace, ring.bytes / 8)) * 1e-9;
  const double ring_floor = 14 * step_floor;
  const bool side_by_side = paced_ring.ok && paced_ring.wrong == 0 &&
                            paced_ring.seconds >= ring_floor && paced_ring.seconds < 2 * ring_floor;
  std::printf("%s: 8-rank ring paced at 10 Gbit/s took %.3f ms (links side by side: %.3f ms, "
              "one after another: %.3f ms) %s\n",
              side_by_side ? "ok" : "FAILED", paced_ring.seconds * 1e3, ring_floor * 1e3,
              8 * ring_floor * 1e3, paced_ring.error.c_str());
  failures += side_by_side ? 0 : 1;

  // Several GPUs: virtual ranks spread over them with peer copies.
  std::string why;
  const auto devices = real::cuda_devices(why);
  if (devices.size() < 2) {
    std::printf("skipped: multi-GPU virtual ranks (%zu GPU visible)\n", devices.size());
  } else {
    for (const char* algorithm : {"ring", "rabenseifner", "topk"}) {
      coll::CollectiveCall call;
      call.algorithm = algorithm;
      call.ranks = 8;
      call.bytes = 8 * 4096 * 4;
      real::CudaOptions options;
      options.devices = int(devices.size());
      const real::CudaRun run = real::run_cuda(coll::Schedule::make(call), options);
      const bool ok = run.ok && run.checked && run.wrong == 0 && run.devices >= 2;
      std::printf("%s: %s over 8 ranks on %d GPUs: %s\n", ok ? "ok" : "FAILED", algorithm,
                  run.devices, run.error.c_str());
      failures += ok ? 0 : 1;
    }
  }
  return failures == 0 ? 0 : 1;
}
} // namespace
