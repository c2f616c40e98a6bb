// GPU test: runs a kernel on every visible GPU. Exits 77 (ctest: skipped) with the reason when
// no GPU is visible, so CI without a GPU skips cleanly.
#include "ddlsim/real/cuda_devices.hpp"

#include <cstdio>

int main() {
  std::string why;
  const auto devices = ddlsim::real::cuda_devices(why);
  if (devices.empty()) {
    std::printf("SKIP: no GPU visible (%s)\n", why.c_str());
    return 77;
  }
  int failures = 0;
  for (const auto& device : devices) {
    const std::string error = ddlsim::real::cuda_self_test(device.index, 1 << 20);
    std::printf("GPU %d %s sm_%d%d %.1f GiB: %s\n", device.index, device.name.c_str(),
                device.compute_capability_major, device.compute_capability_minor,
                static_cast<double>(device.memory_bytes) / (1 << 30),
                error.empty() ? "kernel ok" : error.c_str());
    failures += error.empty() ? 0 : 1;
  }
  return failures == 0 ? 0 : 1;
}
