// Host-side decisions of the GPU backends, kept apart from CUDA so that they are tested on any
// machine: how virtual ranks spread over the visible GPUs, and how long a paced copy takes on a
// virtual link that stands in for a slower one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddlsim::real {

// The GPU of each of `ranks` virtual ranks over `devices` GPUs: contiguous, balanced blocks
// (rank r on GPU r * devices / ranks), so that ring and chain neighbours share a GPU wherever
// they can and only block boundaries cross between GPUs. devices >= 1.
std::vector<int> place_virtual_ranks(int ranks, int devices);

// A virtual link: every copy (or reduce) between two ranks lasts at least latency + bytes / rate.
struct LinkPace {
  double gbps = 0;       // 10^9 bit/s; 0 = the copy runs at device speed
  double latency_us = 0; // added to every paced copy
  bool active() const { return gbps > 0 || latency_us > 0; }
};

// "" when the pace can be applied, else what is wrong with it (for an InputError on the flag).
std::string pace_problem(const LinkPace& pace);

// The least duration of a copy of `bytes` on the link, in nanoseconds (rounded up).
std::int64_t paced_copy_ns(const LinkPace& pace, std::uint64_t bytes);

} // namespace ddlsim::real
