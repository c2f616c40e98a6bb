#include "ddlsim/real/gpu_layout.hpp"

#include <cmath>
#include <stdexcept>

namespace ddlsim::real {

std::vector<int> place_virtual_ranks(int ranks, int devices) {
  if (devices < 1) throw std::invalid_argument("place_virtual_ranks needs at least one GPU");
  std::vector<int> device(std::size_t(std::max(ranks, 0)));
  for (int r = 0; r < ranks; ++r) device[std::size_t(r)] = int(std::int64_t(r) * devices / ranks);
  return device;
}

std::string pace_problem(const LinkPace& pace) {
  if (!std::isfinite(pace.gbps) || pace.gbps < 0)
    return "expected a rate in Gbit/s >= 0 (0: unpaced), found " + std::to_string(pace.gbps);
  if (pace.gbps > 0 && pace.gbps < 1e-3)
    return "a rate below 0.001 Gbit/s would make a copy of a few MiB last hours";
  if (!std::isfinite(pace.latency_us) || pace.latency_us < 0 || pace.latency_us > 1e6)
    return "expected a latency in microseconds in [0, 1e6], found " +
           std::to_string(pace.latency_us);
  return {};
}

std::int64_t paced_copy_ns(const LinkPace& pace, std::uint64_t bytes) {
  double ns = pace.latency_us * 1e3;
  if (pace.gbps > 0) ns += double(bytes) * 8 / pace.gbps; // bits / (10^9 bit/s) in ns
  return static_cast<std::int64_t>(std::ceil(ns));
}

} // namespace ddlsim::real
