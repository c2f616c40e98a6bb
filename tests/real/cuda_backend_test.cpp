// GPU test: the CUDA backend (virtual ranks on GPU 0) matches the reference executor bit for bit
// over several generators, dtypes and rank counts, and refuses what it has no kernel for by
// naming the step. Exits 77 (ctest: skipped) with the reason when no GPU is visible.
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/real/cuda_backend.hpp"

#include <cstdio>
#include <string>

using namespace ddlsim;

int main() {
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
    options.iterations = 2;
    const real::CudaRun run = real::run_cuda(coll::Schedule::make(call), options);
    const bool ok = run.ok && run.checked && run.wrong == 0;
    std::printf("%s: %s %s on %d ranks %s: %s\n", ok ? "ok" : "FAILED",
                std::string(coll::to_string(c.op)).c_str(), c.algorithm, c.ranks,
                std::string(coll::to_string(c.dtype)).c_str(), run.error.c_str());
    failures += ok ? 0 : 1;
  }
  coll::CollectiveCall topk;
  topk.algorithm = "topk";
  topk.ranks = 4;
  topk.bytes = 4000;
  const real::CudaRun refused = real::run_cuda(coll::Schedule::make(topk), {});
  const bool named = !refused.ok && refused.error.find("step") != std::string::npos;
  std::printf("%s: top-k is refused naming the step: %s\n", named ? "ok" : "FAILED",
              refused.error.c_str());
  failures += named ? 0 : 1;
  return failures == 0 ? 0 : 1;
}
