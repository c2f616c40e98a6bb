// Collective calls built from a few fields, shared by the suites that run schedules.
#pragma once

#include "ddlsim/collectives/call.hpp"

#include <cstdint>
#include <string>

namespace ddlsim::test_support {

// A call of `elements` elements of `dtype` on `ranks` ranks, exactly as given.
inline coll::CollectiveCall make_call(coll::Op op, const std::string& algorithm, int ranks,
                                      std::uint64_t elements,
                                      coll::DataType dtype = coll::DataType::fp32,
                                      coll::Reduction reduction = coll::Reduction::sum) {
  coll::CollectiveCall call;
  call.op = op;
  call.algorithm = algorithm;
  call.ranks = ranks;
  call.dtype = dtype;
  call.bytes = elements * coll::element_size(dtype);
  call.reduction = reduction;
  return call;
}

// The same call made valid for every op, for sweeps over ops: all-to-all rounds the count down to
// a multiple of the ranks (every rank sends each peer the same share); send_recv goes from rank 0
// to the last rank.
inline coll::CollectiveCall make_valid_call(coll::Op op, const std::string& algorithm, int ranks,
                                            std::uint64_t elements,
                                            coll::DataType dtype = coll::DataType::fp32,
                                            coll::Reduction reduction = coll::Reduction::sum) {
  if (op == coll::Op::all_to_all && ranks > 0)
    elements = elements / std::uint64_t(ranks) * std::uint64_t(ranks);
  coll::CollectiveCall call = make_call(op, algorithm, ranks, elements, dtype, reduction);
  if (op == coll::Op::send_recv && ranks > 1) call.root = ranks - 1;
  return call;
}

// A call of `bytes` bytes (fp32, sum) on `ranks` ranks, for tests that think in bytes.
inline coll::CollectiveCall make_call_bytes(coll::Op op, const std::string& algorithm, int ranks,
                                            std::uint64_t bytes) {
  coll::CollectiveCall call;
  call.op = op;
  call.ranks = ranks;
  call.bytes = bytes;
  call.algorithm = algorithm;
  return call;
}

} // namespace ddlsim::test_support
