// Which NCCL collective the NCCL backend runs beside ours as the baseline, with its element
// counts taken from the Schedule's buffers (host-side, so that it is tested without a GPU).
#pragma once

#include "ddlsim/collectives/schedule.hpp"

#include <cstdint>
#include <string>

namespace ddlsim::real {

struct NcclBaselineCall {
  enum class Kind : std::uint8_t {
    none,
    all_reduce,     // ncclAllReduce(input, output, count)
    reduce_scatter, // ncclReduceScatter(input, output, count = per-rank output elements)
    all_gather,     // ncclAllGather(input, output, count = per-rank input elements)
    broadcast,      // ncclBroadcast(input, output, count, root)
    reduce,         // ncclReduce(input, output, count, root)
    all_to_all,     // a group of ncclSend / ncclRecv of count elements to and from every rank
  };
  Kind kind = Kind::none;
  std::uint64_t count = 0; // elements, as described above
  int root = 0;
  std::string name; // "ncclAllReduce", or why there is no baseline
};

NcclBaselineCall nccl_baseline_for(const coll::Schedule& schedule);

} // namespace ddlsim::real
