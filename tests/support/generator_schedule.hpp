// Schedules of any generator for sweeps over the registry: a call with the fields every
// generator takes, and the retries that give the ones needing group sizes or servers theirs.
#pragma once

#include "ddlsim/collectives/algorithm.hpp"
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/core/input_error.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace ddlsim::test_support {

// A call of `algorithm` for `op`; rooted ops on more than 2 ranks get root 1 (not the default 0,
// so that root handling is exercised).
inline coll::CollectiveCall generator_call(coll::Op op, const coll::Algorithm& algorithm, int ranks,
                                           std::uint64_t bytes, int chunks, int channels) {
  coll::CollectiveCall call;
  call.op = op;
  call.ranks = ranks;
  call.bytes = bytes;
  call.algorithm = std::string(algorithm.name());
  call.params.chunks = chunks;
  call.params.channels = channels;
  const bool rooted =
      op == coll::Op::broadcast || op == coll::Op::reduce || op == coll::Op::send_recv;
  if (rooted && ranks > 2) call.root = 1;
  return call;
}

// The schedule of `call`, or nothing if the generator rejects it. Generators reject parameters
// they do not use, so the ones that need group sizes or servers get them on a retry; `call`
// becomes the call that made the schedule.
inline std::optional<coll::Schedule> schedule_with_needed_params(coll::CollectiveCall& call) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    coll::CollectiveCall tried = call;
    if (attempt == 1 && call.ranks % 2 == 0) tried.params.group_sizes = {2, call.ranks / 2};
    if (attempt == 2) tried.params.servers = call.ranks > 1 ? 2 : 1;
    try {
      coll::Schedule schedule = coll::Schedule::make(tried);
      call = tried;
      return schedule;
    } catch (const InputError&) {}
  }
  return std::nullopt;
}

} // namespace ddlsim::test_support
