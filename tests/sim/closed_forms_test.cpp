// On one switch with uniform links the analytic engine must reproduce the textbook alpha-beta-gamma
// costs (Thakur, Rabenseifner & Gropp 2005) exactly (uniform_star.hpp).
#include "uniform_star.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace ddlsim;
using namespace ddlsim::sim;
using namespace ddlsim::sim::test;

namespace {

double simulate(coll::Op op, const std::string& algorithm, int p, std::uint64_t bytes) {
  return test::simulate(test::make_call(op, algorithm, p, bytes));
}

} // namespace

TEST_CASE("ring all-reduce: 2(p-1)a + 2n(p-1)/p b + n(p-1)/p g") {
  for (int p : {2, 3, 4, 8, 16}) {
    const double n = 4.0 * 1024 * p;
    INFO("p = " << p);
    check_equal(simulate(coll::Op::all_reduce, "ring", p, static_cast<std::uint64_t>(n)),
                2 * (p - 1) * kAlpha + 2 * n * (p - 1) / p * kBeta + n * (p - 1) / p * kGamma);
  }
}

TEST_CASE("recursive doubling all-reduce: log p (a + n b + n g)") {
  for (int p : {2, 4, 8, 16}) {
    const double n = 64 * 1024;
    INFO("p = " << p);
    check_equal(
        simulate(coll::Op::all_reduce, "recursive_doubling", p, static_cast<std::uint64_t>(n)),
        std::log2(p) * (kAlpha + n * kBeta + n * kGamma));
  }
}

TEST_CASE("Rabenseifner all-reduce: 2 log p a + 2n(p-1)/p b + n(p-1)/p g") {
  for (int p : {2, 4, 8, 16}) {
    const double n = 4.0 * 1024 * p;
    INFO("p = " << p);
    check_equal(simulate(coll::Op::all_reduce, "rabenseifner", p, static_cast<std::uint64_t>(n)),
                2 * std::log2(p) * kAlpha + 2 * n * (p - 1) / p * kBeta + n * (p - 1) / p * kGamma);
  }
}

TEST_CASE("ring reduce-scatter and all-gather: (p-1)a + n(p-1)/p b (+ n(p-1)/p g)") {
  for (int p : {2, 5, 8}) {
    const double n = 4.0 * 1024 * p;
    INFO("p = " << p);
    check_equal(simulate(coll::Op::reduce_scatter, "ring", p, static_cast<std::uint64_t>(n)),
                (p - 1) * kAlpha + n * (p - 1) / p * kBeta + n * (p - 1) / p * kGamma);
    check_equal(simulate(coll::Op::all_gather, "ring", p, static_cast<std::uint64_t>(n)),
                (p - 1) * kAlpha + n * (p - 1) / p * kBeta);
  }
}

TEST_CASE("binomial broadcast: ceil(log p)(a + n b)") {
  for (int p : {2, 4, 7, 16}) {
    const double n = 256 * 1024;
    INFO("p = " << p);
    check_equal(simulate(coll::Op::broadcast, "binomial", p, static_cast<std::uint64_t>(n)),
                std::ceil(std::log2(p)) * (kAlpha + n * kBeta));
  }
}

TEST_CASE("results respond to inputs: more bytes or less bandwidth take longer") {
  const double small = simulate(coll::Op::all_reduce, "ring", 8, 1 << 20);
  const double large = simulate(coll::Op::all_reduce, "ring", 8, 2 << 20);
  CHECK(large > 1.9 * small);
  CHECK(simulate(coll::Op::all_reduce, "ring", 16, 1 << 20) > small);
}
