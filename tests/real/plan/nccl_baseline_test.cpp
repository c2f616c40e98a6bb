// The NCCL collective run beside ours as the baseline, with counts from the Schedule's buffers.
#include "ddlsim/real/nccl_baseline.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using ddlsim::real::nccl_baseline_for;
using Kind = ddlsim::real::NcclBaselineCall::Kind;

namespace {

coll::Schedule make(coll::Op op, const char* algorithm, coll::DataType dtype = coll::DataType::fp32,
                    coll::Reduction reduction = coll::Reduction::sum) {
  coll::CollectiveCall call;
  call.op = op;
  call.algorithm = algorithm;
  call.ranks = 4;
  call.root = 2;
  call.dtype = dtype;
  call.reduction = reduction;
  call.bytes = 4096 * coll::element_size(dtype);
  return coll::Schedule::make(call);
}

} // namespace

TEST_CASE("nccl baseline: each collective maps to NCCL's call with the per-rank counts") {
  auto b = nccl_baseline_for(make(coll::Op::all_reduce, "ring"));
  CHECK(b.kind == Kind::all_reduce);
  CHECK(b.count == 4096);
  CHECK(b.name == "ncclAllReduce");
  b = nccl_baseline_for(make(coll::Op::all_reduce, "ring", coll::DataType::fp16));
  CHECK(b.count == 4096);
  // Reduce-scatter: each rank receives its quarter; all-gather: each rank sends its quarter.
  b = nccl_baseline_for(make(coll::Op::reduce_scatter, "ring"));
  CHECK(b.kind == Kind::reduce_scatter);
  CHECK(b.count == 1024);
  b = nccl_baseline_for(make(coll::Op::all_gather, "ring"));
  CHECK(b.kind == Kind::all_gather);
  CHECK(b.count == 1024);
  b = nccl_baseline_for(make(coll::Op::broadcast, "binomial"));
  CHECK(b.kind == Kind::broadcast);
  CHECK(b.root == 2);
  CHECK(b.count == 4096);
  b = nccl_baseline_for(make(coll::Op::reduce, "binomial"));
  CHECK(b.kind == Kind::reduce);
  CHECK(b.root == 2);
  b = nccl_baseline_for(make(coll::Op::all_to_all, "pairwise"));
  CHECK(b.kind == Kind::all_to_all);
  CHECK(b.count == 1024);
}

TEST_CASE("nccl baseline: none where NCCL has no such call, saying why") {
  auto b = nccl_baseline_for(make(coll::Op::all_reduce, "recursive_doubling", coll::DataType::fp32,
                                  coll::Reduction::adasum));
  CHECK(b.kind == Kind::none);
  CHECK_THAT(b.name, Catch::Contains("adasum"));
  coll::CollectiveCall call;
  call.algorithm = "parameter_server";
  call.ranks = 4;
  call.bytes = 4096;
  call.params.servers = 1;
  call.params.dedicated_servers = true;
  b = nccl_baseline_for(coll::Schedule::make(call));
  CHECK(b.kind == Kind::none);
  CHECK_THAT(b.name, Catch::Contains("server"));
}
