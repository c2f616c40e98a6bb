// Command-line flags that name a collective call, shared by `ddlsim schedule` and `ddlsim real`:
// op, dtype and reduction by name (with "did you mean"), and byte sizes such as "1GiB".
#pragma once

#include "ddlsim/collectives/call.hpp"

#include <cstdint>
#include <string>

namespace ddlsim::cli {

// Sets call.op, call.dtype and call.reduction from the values of --op, --dtype and --reduction.
// Throws InputError naming the flag, the valid names and the nearest one.
void set_call_names(coll::CollectiveCall& call, const std::string& op, const std::string& dtype,
                    const std::string& reduction);

// The byte size given to `flag` ("4096", "64KiB", "1GiB"); throws InputError naming the flag.
std::uint64_t parse_size_flag(const std::string& flag, const std::string& text);

// A size as nccl-tests reads its -b/-e flags: a bare K, M, G or T suffix is binary (1K = 1024,
// nccl-tests' parsesize()), so `ddlsim real -b 1K` runs what `all_reduce_perf -b 1K` runs.
// Explicit units keep their meaning ("1KB" = 1000, "1KiB" = 1024).
std::uint64_t parse_nccl_tests_size_flag(const std::string& flag, const std::string& text);

} // namespace ddlsim::cli
