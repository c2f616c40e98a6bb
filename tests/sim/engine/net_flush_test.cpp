// The GPUDirect RDMA flush (coll::Protocol::net_flush_ps, sim/protocol_cost.hpp ProxyPosts): a
// transfer that crosses the network is handed to its receiver only once the receiving rank's
// proxy has flushed it, one flush at a time with that proxy's posts; its send completes with
// the receive. NCCL's proxy flushes every received Simple step where the GPU needs it
// (src/transport/net.cc recvProxyProgress; src/graph/paths.cc ncclTopoNeedFlush). Every engine
// charges it alike; NCCL's model sets it from the GPU and the releases the setup ran.
#include "../protocol_cases.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/models/nccl_model.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/sim/analytic_engine.hpp"
#include "ddlsim/sim/flow/flow_engine.hpp"
#include "ddlsim/sim/packet/packet_engine.hpp"
#include "error_of.hpp"
#include "nccl_run.hpp"
#include "proxy_cases.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using namespace ddlsim;
using Catch::Matchers::Contains;
using test_support::error_of;

namespace {

constexpr Picoseconds kFlush = 3'000'000; // 3 us: NCCL's Simple post on Intel
constexpr std::uint64_t kBytes = 1000;    // 100 ns on a star link: far shorter than a flush

// On each of `channels` channels rank 0 sends `sends` messages of kBytes to rank 1 in turn.
coll::Schedule sends_on_channels(int channels, Picoseconds flush, int sends = 1) {
  coll::Protocol protocol;
  protocol.net_flush_ps = flush;
  return sim::test::sends_on_channels(channels, sends, kBytes, protocol);
}

using sim::test::Engine;
using sim::test::name;
using sim::test::time_ps;

} // namespace

TEST_CASE("net flush: a received network step waits for its receiver's proxy, one flush each") {
  const topo::Topology two_nodes = sim::test::star(2);
  const double one = time_ps(Engine::analytic, two_nodes, sends_on_channels(1, 0));
  CHECK(time_ps(Engine::analytic, two_nodes, sends_on_channels(1, kFlush)) == one + kFlush);
  // k channels' steps arriving together are flushed one after another by the one proxy.
  for (int k : {2, 8, 16}) {
    const double free = time_ps(Engine::analytic, two_nodes, sends_on_channels(k, 0));
    CHECK(time_ps(Engine::analytic, two_nodes, sends_on_channels(k, kFlush)) == free + k * kFlush);
  }
  // Two steps in turn on one connection are both in flight (a step starts once the one before
  // it started): their flushes queue one after the other, one transfer and two flushes in all.
  CHECK(time_ps(Engine::analytic, two_nodes, sends_on_channels(1, kFlush, 2)) == one + 2 * kFlush);
}

TEST_CASE("net flush: steps inside a node pay nothing") {
  const topo::Topology one_node = sim::test::one_node(2);
  for (Engine engine : {Engine::analytic, Engine::flow, Engine::packet}) {
    INFO(name(engine));
    for (int k : {1, 8})
      CHECK(time_ps(engine, one_node, sends_on_channels(k, kFlush)) ==
            time_ps(engine, one_node, sends_on_channels(k, 0)));
  }
}

TEST_CASE("net flush: every engine charges the same flushes") {
  const topo::Topology two_nodes = sim::test::star(2);
  for (Engine engine : {Engine::analytic, Engine::flow, Engine::packet}) {
    INFO(name(engine));
    const double one = time_ps(engine, two_nodes, sends_on_channels(1, 0));
    for (int k : {1, 2, 8}) {
      INFO(k << " channels");
      const double free = time_ps(engine, two_nodes, sends_on_channels(k, 0));
      const double flushed = time_ps(engine, two_nodes, sends_on_channels(k, kFlush));
      // The packet engine's messages arrive one after another, within `free - one` of the
      // first; the flow engine keeps SimGrid's clock in seconds (a picosecond per flush).
      CHECK(flushed >= one + static_cast<double>(k * kFlush) - static_cast<double>(k));
      CHECK(flushed <= free + static_cast<double>(k * kFlush) + static_cast<double>(k));
    }
    // Two steps in turn: two flushes after the first arrival (the flow engine shares the link
    // between the two transfers, so its first arrives with the second).
    const double two = time_ps(engine, two_nodes, sends_on_channels(1, 0, 2));
    const double two_flushed = time_ps(engine, two_nodes, sends_on_channels(1, kFlush, 2));
    CHECK(two_flushed >= one + 2.0 * static_cast<double>(kFlush) - 2.0);
    CHECK(two_flushed <= two + 2.0 * static_cast<double>(kFlush) + 2.0);
  }
}

TEST_CASE("net flush: NCCL flushes Simple receives before Hopper, and on Hopper before 2.19.1") {
  using A = models::NcclAlgorithm;
  using P = models::NcclProtocol;
  const auto system_of = [](const std::string& topology, const std::string& nccl = "{}") {
    const Scenario scenario = test_support::nccl_scenario(topology, nccl);
    return models::NcclTuner(*scenario.workload.collective.nccl_system,
                             scenario.workload.collective.nccl)
        .system();
  };
  // A100 over InfiniBand: every release flushes (ncclTopoNeedFlush: "required on Ampere and
  // earlier"), Simple only, one Simple post's figure.
  const models::NcclSystem a100 = system_of(R"({"nodes": [{"preset": "dgx-a100", "count": 2}]})");
  CHECK(a100.gdr_flush);
  CHECK(models::nccl_protocol(a100, A::ring, P::simple).net_flush_ps == kFlush);
  CHECK(models::nccl_protocol(a100, A::tree, P::simple).net_flush_ps == kFlush);
  CHECK(models::nccl_protocol(a100, A::ring, P::ll128).net_flush_ps == 0);
  CHECK(models::nccl_protocol(a100, A::tree, P::ll).net_flush_ps == 0);
  // One node: no network, no flush.
  CHECK_FALSE(system_of(R"({"nodes": [{"preset": "dgx-a100", "count": 1}]})").gdr_flush);
  // H100: not by default (NCCL_NET_FORCE_FLUSH is 0 from 2.19.1) ...
  const std::string h100 = R"({"nodes": [{"preset": "dgx-h100", "count": 2}]})";
  CHECK_FALSE(system_of(h100).gdr_flush);
  CHECK(models::nccl_protocol(system_of(h100), A::ring, P::simple).net_flush_ps == 0);
  CHECK_FALSE(system_of(h100, R"({"version": "2.19.1"})").gdr_flush);
  // ... but NCCL 2.18.5 flushes by default (NCCL_NET_FORCE_FLUSH=1).
  const models::NcclSystem old = system_of(h100, R"({"version": "2.18.5"})");
  CHECK(old.gdr_flush);
  CHECK(models::nccl_protocol(old, A::nvls_tree, P::simple).net_flush_ps == kFlush);
  // Sockets move no GPUDirect RDMA: nothing to flush, on any GPU.
  CHECK_FALSE(system_of(R"({"nodes": [{"preset": "dgx-a100", "count": 2, "transport": "socket"}]})")
                  .gdr_flush);
}

TEST_CASE("net flush: aws-ofi-nccl's release sets NCCL's environment on EFA") {
  const std::string p5 = R"({"nodes": [{"preset": "dgx-h100", "count": 2, "nics": 32,
                                         "nic_bandwidth_gbps": 100, "transport": "efa"}]})";
  const auto system_of = [&](const std::string& nccl) {
    const Scenario scenario = test_support::nccl_scenario(p5, nccl);
    return models::NcclTuner(*scenario.workload.collective.nccl_system,
                             scenario.workload.collective.nccl)
        .system();
  };
  constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;
  // Unnamed: the current profile (NCCL_BUFFSIZE 8 MiB, 512 KiB NVLS chunks, no flush).
  const models::NcclSystem now = system_of("{}");
  CHECK(now.simple_buffsize == 8 * MiB);
  CHECK(now.nvls_chunk == 512 * KiB);
  CHECK(now.nvls_tree_chunk == 512 * KiB);
  CHECK_FALSE(now.gdr_flush);
  // The 2 x p5 excerpt's setup: NCCL 2.18.5 with v1.7.3-aws, which sets none of them: NCCL's
  // 4 MiB buffer, NVLS-Tree chunked by its Simple step (512 KiB), receives flushed.
  const models::NcclSystem excerpt = system_of(R"({"version": "2.18.5", "aws_ofi_nccl": "1.7.3"})");
  CHECK(excerpt.simple_buffsize == 4 * MiB);
  CHECK(excerpt.nvls_chunk == 128 * KiB);
  CHECK(excerpt.nvls_tree_chunk == 512 * KiB);
  CHECK(excerpt.gdr_flush);
  // The full log's Dockerfile: NCCL 2.20.3 with v1.8.1-aws (NCCL_NET_FORCE_FLUSH=0,
  // NCCL_NVLSTREE_MAX_CHUNKSIZE=524288 over 2.20's Simple step; the 8 MiB buffer only from
  // v1.16.0). From NCCL 2.21 NVLS-Tree starts from NCCL_NVLS_CHUNKSIZE (128 KiB before v1.9.0).
  const models::NcclSystem full =
      system_of(R"({"version": "2.20.3", "aws_ofi_nccl": "v1.8.1-aws"})");
  CHECK(full.simple_buffsize == 4 * MiB);
  CHECK(full.nvls_tree_chunk == 512 * KiB);
  CHECK(system_of(R"({"version": "2.21.5", "aws_ofi_nccl": "1.8.1"})").nvls_tree_chunk ==
        128 * KiB);
  CHECK(system_of(R"({"version": "2.21.5", "aws_ofi_nccl": "1.9.0"})").nvls_tree_chunk ==
        512 * KiB);
  CHECK_FALSE(full.gdr_flush);
  // NCCL 2.18.5 with a plugin that sets NCCL_NET_FORCE_FLUSH=0 does not flush.
  CHECK_FALSE(system_of(R"({"version": "2.18.5", "aws_ofi_nccl": "1.8.0"})").gdr_flush);
}

TEST_CASE("net flush: release names are checked where they are written") {
  const std::string ib = R"({"nodes": [{"preset": "dgx-h100", "count": 2}]})";
  CHECK(error_of([&] { test_support::nccl_scenario(ib, R"({"version": "2.18"})"); }) == "no error");
  CHECK_THAT(error_of([&] { test_support::nccl_scenario(ib, R"({"version": "3.0.1"})"); }),
             Contains("/workload/nccl/version") && Contains("2.12 to 2.30"));
  CHECK_THAT(error_of([&] { test_support::nccl_scenario(ib, R"({"version": "2.x"})"); }),
             Contains("/workload/nccl/version"));
  CHECK_THAT(error_of([&] { test_support::nccl_scenario(ib, R"({"aws_ofi_nccl": "seven"})"); }),
             Contains("/workload/nccl/aws_ofi_nccl"));
  // The plugin is EFA's: named on InfiniBand it is an error naming the key.
  CHECK_THAT(error_of([&] {
               const Scenario s = test_support::nccl_scenario(ib, R"({"aws_ofi_nccl": "1.7.3"})");
               models::NcclTuner(*s.workload.collective.nccl_system, s.workload.collective.nccl);
             }),
             Contains("/workload/nccl/aws_ofi_nccl") && Contains("efa"));
}
