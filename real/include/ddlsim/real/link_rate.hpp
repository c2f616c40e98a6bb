// The rate a real run's links achieved, from its per-rank timelines: what `ddlsim real` prints
// beside an emulated cluster's configured link rate (a loaded machine may not reach it, and a
// validation against the run should know).
#pragma once

#include "ddlsim/real/host_backend.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace ddlsim::real {

// One rank's sending side in the last timed iteration: the bytes its send steps carried over the
// time at least one of them was in progress (the union of their intervals). A send step lasts
// until its bytes are handed to the transport, so on a shaped link larger than the socket
// buffers this is the link's rate while the rank was sending; a send that waits for a busy
// receiver counts that wait too (a lower bound then).
struct RankSendRate {
  int rank = 0;
  std::uint64_t bytes = 0;
  std::int64_t busy_ns = 0;
  double gbps() const { return busy_ns > 0 ? double(bytes) * 8 / double(busy_ns) : 0; }
};

struct AchievedRate {
  std::vector<RankSendRate> ranks; // the ranks that sent anything, in rank order
  double min_gbps = 0, median_gbps = 0, max_gbps = 0;
};

// Nothing when no rank's timeline holds a send that took time (a GPU backend's run, which keeps
// no timelines, or a run with no transfers).
std::optional<AchievedRate> achieved_send_rate(const HostRun& run);

} // namespace ddlsim::real
