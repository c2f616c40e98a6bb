// The analytic engine on the composed all-reduce generators, on one switch with uniform links
// (as closed_forms_test.cpp): the closed forms where they are exact (2D torus, BlueConnect,
// hierarchical degenerating to a ring, parameter server with one shard per rank, binomial
// reduce), and the directions the lossy and pipelined ones must show.
#include "uniform_star.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace ddlsim;
using namespace ddlsim::sim;
using namespace ddlsim::sim::test;

namespace {

coll::CollectiveCall all_reduce(const std::string& algorithm, int p, std::uint64_t bytes) {
  return make_call(coll::Op::all_reduce, algorithm, p, bytes);
}

// Ring all-reduce of n bytes over g ranks: 2(g-1)a + 2n(g-1)/g b + n(g-1)/g g.
double ring(double g, double n) {
  return 2 * (g - 1) * kAlpha + 2 * n * (g - 1) / g * kBeta + n * (g - 1) / g * kGamma;
}

} // namespace

TEST_CASE("torus2d all-reduce: row rings on n then column rings on n/X") {
  for (auto [x, y] : {std::pair{2, 2}, {4, 2}, {2, 4}, {4, 4}, {8, 2}}) {
    const double n = 4.0 * 1024 * x * y;
    coll::CollectiveCall call = all_reduce("torus2d", x * y, std::uint64_t(n));
    call.params.group_sizes = {x, y};
    INFO("grid " << x << " x " << y);
    check_equal(simulate(call), ring(x, n) + ring(y, n / x));
  }
}

TEST_CASE("blueconnect all-reduce: one ring per stage on a shrinking part") {
  const double n = 4.0 * 1024 * 24;
  coll::CollectiveCall call = all_reduce("blueconnect", 24, std::uint64_t(n));
  call.params.group_sizes = {2, 3, 4};
  check_equal(simulate(call), ring(2, n) + ring(3, n / 2) + ring(4, n / 6));
  call.params.group_sizes = {1, 24}; // a single stage is the flat ring
  check_equal(simulate(call), ring(24, n));
}

TEST_CASE("hierarchical all-reduce with one rank per node is the ring") {
  for (int p : {2, 3, 8}) {
    const double n = 4.0 * 1024 * p;
    INFO("p = " << p);
    check_equal(simulate(all_reduce("hierarchical", p, std::uint64_t(n))), ring(p, n));
  }
}

TEST_CASE("parameter server with a shard per co-located rank: push rounds then pull") {
  for (int p : {2, 4, 8}) {
    const double n = 4.0 * 1024 * p, shard = n / p;
    coll::CollectiveCall call = all_reduce("parameter_server", p, std::uint64_t(n));
    call.params.servers = p;
    INFO("p = " << p);
    // p-1 rounds in which every server takes one shard from a different worker, then every
    // server sends its shard to p-1 workers at once.
    check_equal(simulate(call),
                (p - 1) * (kAlpha + shard * (kBeta + kGamma)) + kAlpha + (p - 1) * shard * kBeta);
  }
}

TEST_CASE("binomial reduce: ceil(log p)(a + n b + n g)") {
  for (int p : {2, 4, 7, 16}) {
    const double n = 64 * 1024;
    coll::CollectiveCall call = all_reduce("binomial", p, std::uint64_t(n));
    call.op = coll::Op::reduce;
    INFO("p = " << p);
    check_equal(simulate(call), std::ceil(std::log2(p)) * (kAlpha + n * kBeta + n * kGamma));
  }
}

TEST_CASE("double binary tree: tree latency for small messages and pipelining for large ones") {
  const double small = simulate(all_reduce("double_binary_tree", 64, 64));
  CHECK(small < simulate(all_reduce("ring", 64, 64)) / 4);
  const double n = 64.0 * 1024 * 1024;
  coll::CollectiveCall call = all_reduce("double_binary_tree", 16, std::uint64_t(n));
  const double unpipelined = simulate(call);
  call.params.chunks = 64;
  const double pipelined = simulate(call);
  INFO("C = 1: " << unpipelined << " ps, C = 64: " << pipelined << " ps, 2n b = " << 2 * n * kBeta);
  CHECK(pipelined < unpipelined / 2);
  CHECK(pipelined > 2 * n * kBeta);       // every rank moves about 2n each way
  CHECK(pipelined < 1.5 * 2 * n * kBeta); // and pipelining gets close to it
}

TEST_CASE("sparse all-reduces respond to the density and beat the dense ring when sparse") {
  const std::uint64_t n = 4 << 20;
  auto sparse = [&](const std::string& algorithm, double density) {
    coll::CollectiveCall call = all_reduce(algorithm, 8, n);
    call.params.density = density;
    if (algorithm == "coarse_sparse") call.params.chunk_bytes = 4096;
    return simulate(call);
  };
  for (const char* algorithm : {"topk", "hierarchical_topk", "coarse_sparse"}) {
    INFO(algorithm);
    CHECK(sparse(algorithm, 0.01) < sparse(algorithm, 0.1));
    CHECK(sparse(algorithm, 0.1) < sparse(algorithm, 0.5));
    CHECK(sparse(algorithm, 0.01) < simulate(all_reduce("ring", 8, n)));
  }
}

TEST_CASE("composed all-reduces take longer for more bytes") {
  for (const char* algorithm :
       {"double_binary_tree", "torus2d", "hierarchical", "blueconnect", "parameter_server"}) {
    INFO(algorithm);
    const double small = simulate(all_reduce(algorithm, 12, 1 << 20));
    CHECK(simulate(all_reduce(algorithm, 12, 2 << 20)) > 1.5 * small);
  }
}
