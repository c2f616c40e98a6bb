// NCCL's chunk sizes as every engine runs them: Tree/LL128 halves its chunk for mid-size calls
// (src/enqueue.cc calcCollChunking, NCCL 2.30.7), so a mid-size tree runs more, smaller chunks,
// each of which pays the protocol's per-hop latency on the pipeline; large calls keep the full
// LL128 step.
#include "ddlsim/models/nccl_model.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/sim/engine.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "ddlsim/topologies/router.hpp"
#include "nccl_run.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

using namespace ddlsim;
using ddlsim::test_support::nccl_scenario;
using ddlsim::test_support::run_nccl;

namespace {

const std::string kTwoDgx = R"({"nodes": [{"preset": "dgx-h100", "count": 2}]})";
const std::string kTreeLl128 = R"({"algorithm": "tree", "protocol": "ll128"})";

// The call NCCL's choice runs, with `chunks` pipeline chunks per channel instead of NCCL's.
Picoseconds time_with_chunks(const Scenario& scenario, const models::NcclChoice& choice,
                             std::uint64_t bytes, int chunks) {
  const CollectiveWorkload& workload = scenario.workload.collective;
  coll::CollectiveCall call = make_collective_call(workload, scenario.topology, bytes);
  call.algorithm = choice.generator;
  call.params.channels = choice.channels;
  call.params.chunks = chunks;
  call.protocol = models::nccl_protocol(*workload.nccl_system, choice.algorithm, choice.protocol);
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  const Picoseconds overhead = models::nccl_call_overhead(choice.algorithm, choice.protocol);
  return sim::simulate(call, topology, router, scenario.engine, {}).time + overhead;
}

} // namespace

TEST_CASE("nccl chunks: a mid-size Tree/LL128 call runs NCCL's smaller chunks and takes longer") {
  const Scenario scenario = nccl_scenario(kTwoDgx, kTreeLl128);
  const std::uint64_t bytes = std::uint64_t{2} << 20;
  const test_support::NcclRun run = run_nccl(scenario, bytes);
  REQUIRE(run.choice.algorithm == models::NcclAlgorithm::tree);
  REQUIRE(run.choice.channels == 16);
  const int chunks =
      models::nccl_pipeline_chunks(*scenario.workload.collective.nccl_system, run.choice, bytes);
  CHECK(chunks == 8); // 128 KiB per channel in 17,280-byte chunks
  // The full 576,000-byte step would be one chunk per channel. NCCL's eight chunks follow each
  // other through the tree's slowest stage, the network hop, each with its latency (Tree/LL128:
  // hwLatencies[NET] = 8.5 us, tuning.cc), so each chunk after the first adds about 8.5 us; the
  // bytes per chunk are small next to it (17,280 bytes at the NIC's share of 25 GB/s: 0.7 us).
  // Each network step is first posted by its GPU's proxy (getNetOverhead, LL128: 1 us), so a
  // chunk's network hop takes 8.5 + 1 us.
  CHECK(time_with_chunks(scenario, run.choice, bytes, chunks) == run.result.time);
  const Picoseconds one = time_with_chunks(scenario, run.choice, bytes, 1);
  CHECK(run.result.time > one);
  CHECK(static_cast<double>(run.result.time - one) ==
        Approx((chunks - 1) * (8.5e6 + 1e6)).epsilon(0.05));
}

TEST_CASE("nccl chunks: a large Tree/LL128 call keeps NCCL's full LL128 step") {
  const Scenario scenario = nccl_scenario(kTwoDgx, kTreeLl128);
  const std::uint64_t bytes = std::uint64_t{256} << 20;
  const test_support::NcclRun run = run_nccl(scenario, bytes);
  REQUIRE(run.choice.channels == 16);
  // 16 MiB per channel in 576,000-byte chunks (NCCL's step of 614,400 bytes, 120/128 data).
  const int full = static_cast<int>(((std::uint64_t{16} << 20) + 575'999) / 576'000);
  CHECK(models::nccl_pipeline_chunks(*scenario.workload.collective.nccl_system, run.choice,
                                     bytes) == full);
  CHECK(time_with_chunks(scenario, run.choice, bytes, full) == run.result.time);
}
