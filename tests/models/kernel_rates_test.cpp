// Measured kernel rates (models/src/kernel_rates.hpp): the bundled H200 tables read back as the
// rates measured, interpolate between shapes and clamp beyond them, stay physically possible,
// and are used for Hopper GPUs only.
#include "kernel_rates.hpp"

#include "ddlsim/models/gpu.hpp"

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

using namespace ddlsim::models;

namespace {

const KernelRates& hopper() {
  const KernelRates* rates = KernelRates::for_compute_capability(90);
  REQUIRE(rates != nullptr);
  return *rates;
}

// Seconds of the row (m, n, k, layout) of a bundled GEMM table, read from the source tree.
double measured_seconds(const std::string& file, int m, int n, int k, const std::string& layout) {
  std::ifstream in(std::string(DDLSIM_TEST_DATA_DIR) + "/../../models/kernel-rates/" + file);
  REQUIRE(in);
  for (std::string line; std::getline(in, line);) {
    std::istringstream row(line);
    std::string rm, rn, rk, rl, seconds;
    std::getline(row, rm, '\t');
    std::getline(row, rn, '\t');
    std::getline(row, rk, '\t');
    std::getline(row, rl, '\t');
    std::getline(row, seconds, '\t');
    if (rm == std::to_string(m) && rn == std::to_string(n) && rk == std::to_string(k) &&
        rl == layout)
      return std::stod(seconds);
  }
  FAIL("no row " << m << " " << n << " " << k << " " << layout << " in " << file);
  return 0;
}

} // namespace

TEST_CASE("kernel rates: a measured GEMM shape gives back its measured rate") {
  const double peak = find_gpu("H200", "test").fp16_flops;
  const double flops = 2.0 * 8192 * 4096 * 2048;
  const double fwd = flops / measured_seconds("h200-gemm_bf16.tsv", 8192, 4096, 2048, "fwd") / peak;
  CHECK(hopper().gemm_efficiency(MatmulPrecision::bf16, GemmPass::forward, 8192, 4096, 2048) ==
        Approx(fwd).epsilon(1e-9));
  const double wgrad =
      flops / measured_seconds("h200-gemm_bf16.tsv", 8192, 4096, 2048, "wgrad") / peak;
  CHECK(hopper().gemm_efficiency(MatmulPrecision::bf16, GemmPass::weight_grad, 8192, 4096, 2048) ==
        Approx(wgrad).epsilon(1e-9));
  const double fp8_peak = find_gpu("H200", "test").fp8_flops;
  const double fp8 =
      flops / measured_seconds("h200-gemm_fp8.tsv", 8192, 4096, 2048, "fwd") / fp8_peak;
  CHECK(hopper().gemm_efficiency(MatmulPrecision::fp8, GemmPass::forward, 8192, 4096, 2048) ==
        Approx(fp8).epsilon(1e-9));
}

TEST_CASE("kernel rates: between measured shapes the rate lies between its neighbours") {
  const KernelRates& rates = hopper();
  auto eff = [&](double k) {
    return rates.gemm_efficiency(MatmulPrecision::bf16, GemmPass::forward, 4096, 4096, k);
  };
  const double lo = eff(1024), hi = eff(2048), mid = eff(1448); // ~ sqrt(1024 * 2048)
  CHECK(mid >= std::min(lo, hi));
  CHECK(mid <= std::max(lo, hi));
  CHECK(mid == Approx((lo + hi) / 2).epsilon(0.01)); // halfway in log2
  // Beyond the table the edge's rate holds.
  CHECK(eff(256) == Approx(lo));
  CHECK(eff(1 << 20) == Approx(eff(16384)));
}

TEST_CASE("kernel rates: every measured efficiency is physically possible") {
  const KernelRates& rates = hopper();
  for (MatmulPrecision precision : {MatmulPrecision::bf16, MatmulPrecision::fp8})
    for (GemmPass pass : {GemmPass::forward, GemmPass::input_grad, GemmPass::weight_grad})
      for (double m : {1024, 4096, 32768})
        for (double n : {1024, 8192, 28672})
          for (double k : {1024, 4096, 16384}) {
            const double e = rates.gemm_efficiency(precision, pass, m, n, k);
            CHECK(e > 0.05);
            CHECK(e <= 1.0);
          }
  for (double heads : {8, 64})
    for (double seq : {2048, 16384})
      for (bool backward : {false, true}) {
        const double e = rates.attention_efficiency(heads, seq, backward);
        CHECK(e > 0.05);
        CHECK(e <= 1.0);
      }
  // Large GEMMs reach more of the peak than small ones; long sequences more than short ones.
  CHECK(rates.gemm_efficiency(MatmulPrecision::bf16, GemmPass::forward, 8192, 8192, 8192) >
        rates.gemm_efficiency(MatmulPrecision::bf16, GemmPass::forward, 1024, 1024, 1024));
  CHECK(rates.attention_efficiency(32, 16384, false) > rates.attention_efficiency(32, 2048, false));
}

TEST_CASE("kernel rates: Hopper GPUs have measured rates and other architectures none") {
  for (const char* gpu : {"H100", "H200", "GH200", "H100-PCIe"})
    CHECK(KernelRates::for_compute_capability(compute_capability(gpu)) != nullptr);
  for (const char* gpu : {"A100", "V100", "B200", "MI300X"})
    CHECK(KernelRates::for_compute_capability(compute_capability(gpu)) == nullptr);
}
