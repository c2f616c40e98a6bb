// NCCL's network post (coll::Protocol::net_post_ps, sim/protocol_cost.hpp ProxyPosts): a
// transfer that crosses the network first occupies its sending rank's proxy thread, which posts
// the steps of all the rank's channels one at a time. Every engine charges it alike.
#include "../protocol_cases.hpp"
#include "ddlsim/models/nccl_model.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/sim/analytic_engine.hpp"
#include "ddlsim/sim/flow/flow_engine.hpp"
#include "ddlsim/sim/packet/packet_engine.hpp"
#include "nccl_run.hpp"
#include "proxy_cases.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using namespace ddlsim;

namespace {

constexpr Picoseconds kPost = 1'000'000; // 1 us: getNetOverhead on Intel, LL and LL128
constexpr std::uint64_t kBytes = 1000;   // 100 ns on a star link: far shorter than a post

// On each of `channels` channels rank 0 sends one message of kBytes to rank 1, all ready at time
// zero.
coll::Schedule sends_on_channels(int channels, Picoseconds net_post) {
  coll::Protocol protocol;
  protocol.net_post_ps = net_post;
  return sim::test::sends_on_channels(channels, 1, kBytes, protocol);
}

using sim::test::Engine;
using sim::test::name;
using sim::test::time_ps;

} // namespace

TEST_CASE("net post: a network step waits for its proxy, exactly net_post per step queued") {
  const topo::Topology two_nodes = sim::test::star(2);
  const double free = time_ps(Engine::analytic, two_nodes, sends_on_channels(1, 0));
  // One step: its post, then its latency and bytes as before.
  CHECK(time_ps(Engine::analytic, two_nodes, sends_on_channels(1, kPost)) == free + kPost);
  // A second step of the same GPU finds the proxy busy: it waits exactly one more post.
  CHECK(time_ps(Engine::analytic, two_nodes, sends_on_channels(2, kPost)) == free + 2 * kPost);
  // k channels' steps ready at once are posted one after another: k posts.
  for (int k : {4, 8, 16})
    CHECK(time_ps(Engine::analytic, two_nodes, sends_on_channels(k, kPost)) == free + k * kPost);
  // Without a post cost the channels' steps share the link and are not serialised.
  CHECK(time_ps(Engine::analytic, two_nodes, sends_on_channels(8, 0)) < free + kPost);
}

TEST_CASE("net post: steps inside a node pay nothing") {
  const topo::Topology one_node = sim::test::one_node(2);
  for (int k : {1, 8})
    CHECK(time_ps(Engine::analytic, one_node, sends_on_channels(k, kPost)) ==
          time_ps(Engine::analytic, one_node, sends_on_channels(k, 0)));
}

TEST_CASE("net post: every engine charges the same posts") {
  const topo::Topology two_nodes = sim::test::star(2);
  for (Engine engine : {Engine::analytic, Engine::flow, Engine::packet}) {
    INFO(name(engine));
    const double free = time_ps(engine, two_nodes, sends_on_channels(1, 0));
    for (int k : {1, 2, 8}) {
      INFO(k << " channels");
      const double posted = time_ps(engine, two_nodes, sends_on_channels(k, kPost));
      // The flow engine keeps SimGrid's clock in seconds: a picosecond of rounding per post.
      CHECK(std::abs(posted - (free + static_cast<double>(k * kPost))) <= static_cast<double>(k));
    }
    const topo::Topology one_node = sim::test::one_node(2);
    CHECK(time_ps(engine, one_node, sends_on_channels(8, kPost)) ==
          time_ps(engine, one_node, sends_on_channels(8, 0)));
  }
}

TEST_CASE("net post: NCCL's figure is getNetOverhead, Simple three times LL, only for NCCL") {
  using A = models::NcclAlgorithm;
  using P = models::NcclProtocol;
  const Scenario scenario =
      test_support::nccl_scenario(R"({"nodes": [{"preset": "dgx-h100", "count": 2}]})");
  models::NcclSystem system = *scenario.workload.collective.nccl_system;
  for (A algorithm : {A::ring, A::tree}) {
    CHECK(models::nccl_protocol(system, algorithm, P::ll).net_post_ps == kPost);
    CHECK(models::nccl_protocol(system, algorithm, P::ll128).net_post_ps == kPost);
    CHECK(models::nccl_protocol(system, algorithm, P::simple).net_post_ps == 3 * kPost);
  }
  system.cpu_amd = true; // 2 us on AMD x86
  CHECK(models::nccl_protocol(system, A::ring, P::ll).net_post_ps == 2 * kPost);
  CHECK(models::nccl_protocol(system, A::ring, P::simple).net_post_ps == 6 * kPost);
  // A call that is not NCCL's keeps the default protocol: no post, numbers as before.
  CHECK(coll::Protocol{}.net_post_ps == 0);
  CHECK(test_support::make_call_bytes(coll::Op::all_reduce, "ring", 2, 1 << 20)
            .protocol.net_post_ps == 0);
}
