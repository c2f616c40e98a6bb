// The CUDA backend: N virtual ranks on one GPU, or spread over several (contiguous blocks of
// ranks per GPU, peer copies between them). Each rank owns device buffers and a stream; a
// matched send/receive becomes, on the receiver's stream, a wait for an event recorded on the
// sender's stream, then a device-to-device cudaMemcpyAsync (recv) or our reduce kernel reading
// the sender's buffer (recv_reduce), and the sender's stream waits for the receiver's event before
// anything that follows the send (rule 3 of step.hpp). The host walks the programs as the
// reference executor does (in-order issue, deps, cross-channel waits, k-th send matches k-th
// receive) and enqueues GPU work instead of computing; stream order keeps each rank's work in
// issue order. Built only with a CUDA toolkit; results are checked against the reference.
//
// Runs: copy, reduce, scale (fp32, fp16, bf16; sum and avg), send / recv / recv_reduce, compute
// steps (a spin kernel of the given duration), compress / decompress with every codec (our
// top-k radix select, fp16 cast, chunk norms, chunk select). Refuses adasum, naming the step.
// With a LinkPace, every transfer lasts at least latency + bytes / rate (a kernel waits on the
// GPU's global timer after the copy), so a virtual link stands in for a slower one.
#pragma once

#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/real/gpu_layout.hpp"

#include <cstdint>
#include <string>

namespace ddlsim::real {

struct CudaOptions {
  int device = 0;  // the first GPU used
  int devices = 0; // how many GPUs the virtual ranks spread over (0: every visible one from device)
  LinkPace pace;   // inactive: transfers run at device speed
  int warmup = 0;
  int iterations = 1;
  std::uint64_t check_limit_bytes = 256ull << 20; // ranks x bytes checked with the reference
};

struct CudaRun {
  bool ok = false;
  std::string error;
  bool checked = false;
  double seconds = 0; // per iteration, from the first enqueue to the device being idle
  std::uint64_t wrong = 0;
  std::uint64_t steps = 0;
  std::uint64_t bytes_sent = 0;
  int devices = 0; // GPUs used
};

// "" when a GPU is usable, else why not (no device, driver missing).
std::string cuda_unavailable_reason();

CudaRun run_cuda(const coll::Schedule& schedule, const CudaOptions& options);

} // namespace ddlsim::real
