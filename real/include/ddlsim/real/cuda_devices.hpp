// The GPUs the CUDA runtime can see, and a self-test that a kernel runs on one of them.
// Built only when a CUDA toolkit was found at configure time.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ddlsim::real {

struct CudaDevice {
  int index = 0;
  std::string name;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  std::size_t memory_bytes = 0;
};

// Visible devices; empty when there are none, with the CUDA runtime's reason in `why`.
std::vector<CudaDevice> cuda_devices(std::string& why);

// Launches a kernel that writes i*3+1 into n ints on `device`, copies them back and checks them.
// Returns "" on success, otherwise what failed.
std::string cuda_self_test(int device, std::size_t n);

} // namespace ddlsim::real
