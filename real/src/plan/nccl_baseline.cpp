#include "ddlsim/real/nccl_baseline.hpp"

namespace ddlsim::real {

NcclBaselineCall nccl_baseline_for(const coll::Schedule& schedule) {
  const coll::CollectiveCall& call = schedule.call();
  using Kind = NcclBaselineCall::Kind;
  NcclBaselineCall baseline;
  if (schedule.ranks() != call.ranks) {
    baseline.name = "none (the schedule adds dedicated server ranks; NCCL has no such call)";
    return baseline;
  }
  if (call.reduction == coll::Reduction::adasum) {
    baseline.name = "none (NCCL has no adasum)";
    return baseline;
  }
  const std::uint64_t e = coll::element_size(call.dtype);
  const std::uint64_t in = schedule.buffer_bytes(0, coll::Buffer::input) / e,
                      out = schedule.buffer_bytes(0, coll::Buffer::output) / e;
  baseline.root = call.root;
  switch (call.op) {
  case coll::Op::all_reduce:
    baseline = {Kind::all_reduce, call.elements(), 0, "ncclAllReduce"};
    break;
  case coll::Op::reduce_scatter:
    baseline = {Kind::reduce_scatter, out, 0, "ncclReduceScatter"};
    break;
  case coll::Op::all_gather:
    baseline = {Kind::all_gather, in, 0, "ncclAllGather"};
    break;
  case coll::Op::broadcast:
    baseline = {Kind::broadcast, call.elements(), call.root, "ncclBroadcast"};
    break;
  case coll::Op::reduce:
    baseline = {Kind::reduce, call.elements(), call.root, "ncclReduce"};
    break;
  case coll::Op::all_to_all:
    baseline = {Kind::all_to_all, in / std::uint64_t(call.ranks), 0,
                "ncclSend/ncclRecv to every rank (nccl-tests' alltoall)"};
    break;
  default:
    baseline.name = "none (no NCCL collective for " + std::string(coll::to_string(call.op)) + ")";
  }
  return baseline;
}

} // namespace ddlsim::real
