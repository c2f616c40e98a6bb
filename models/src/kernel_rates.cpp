#include "kernel_rates.hpp"

#include "bundled_kernel_rates.hpp"
#include "ddlsim/models/gpu.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <stdexcept>

namespace ddlsim::models {
namespace {

struct Row {
  std::vector<std::string> fields;
};

// The data rows of a bundled TSV (comment lines start with '#'; the first other line names the
// columns, which must be `columns`).
std::vector<Row> rows_of(std::string_view name, const std::vector<std::string>& columns) {
  const auto text = detail::bundled_kernel_rates_text(name);
  if (!text) throw std::logic_error("kernel rates: no bundled table " + std::string(name));
  std::istringstream in{std::string(*text)};
  std::vector<Row> rows;
  bool header = true;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.front() == '#') continue;
    Row row;
    std::istringstream fields(line);
    for (std::string f; std::getline(fields, f, '\t');) row.fields.push_back(f);
    if (header) {
      if (row.fields != columns)
        throw std::logic_error("kernel rates: " + std::string(name) + " has unexpected columns");
      header = false;
      continue;
    }
    if (row.fields.size() != columns.size())
      throw std::logic_error("kernel rates: " + std::string(name) + ": short row: " + line);
    rows.push_back(std::move(row));
  }
  return rows;
}

// A grid over the distinct values of three keys, filled from (key, value) points; every point of
// the product must be present.
class GridBuilder {
public:
  void add(double a, double b, double c, double value) { points_[{a, b, c}] = value; }
  KernelRates::Grid build(const std::string& what) const {
    KernelRates::Grid grid;
    std::array<std::set<double>, 3> keys;
    for (const auto& [key, value] : points_) {
      keys[0].insert(std::get<0>(key));
      keys[1].insert(std::get<1>(key));
      keys[2].insert(std::get<2>(key));
    }
    for (std::size_t i = 0; i < 3; ++i) grid.axes[i].assign(keys[i].begin(), keys[i].end());
    for (double a : grid.axes[0])
      for (double b : grid.axes[1])
        for (double c : grid.axes[2]) {
          const auto it = points_.find({a, b, c});
          if (it == points_.end()) throw std::logic_error("kernel rates: " + what + " has a hole");
          grid.values.push_back(it->second);
        }
    return grid;
  }

private:
  std::map<std::tuple<double, double, double>, double> points_;
};

// Index and weight of x between the two neighbouring axis values, in log2 (clamped).
std::pair<std::size_t, double> bracket(const std::vector<double>& axis, double x) {
  if (axis.size() == 1 || x <= axis.front()) return {0, 0.0};
  if (x >= axis.back()) return {axis.size() - 2, 1.0};
  const std::size_t hi =
      static_cast<std::size_t>(std::upper_bound(axis.begin(), axis.end(), x) - axis.begin());
  const double lo_v = std::log2(axis[hi - 1]), hi_v = std::log2(axis[hi]);
  return {hi - 1, (std::log2(x) - lo_v) / (hi_v - lo_v)};
}

} // namespace

double KernelRates::Grid::at(double a, double b, double c) const {
  const std::array<std::pair<std::size_t, double>, 3> w{bracket(axes[0], a), bracket(axes[1], b),
                                                        bracket(axes[2], c)};
  double sum = 0;
  for (int corner = 0; corner < 8; ++corner) {
    std::array<std::size_t, 3> index{};
    double weight = 1;
    for (std::size_t d = 0; d < 3; ++d) {
      const bool upper = (corner >> d) & 1;
      if (axes[d].size() == 1) {
        if (upper) weight = 0;
        index[d] = 0;
        continue;
      }
      index[d] = w[d].first + (upper ? 1 : 0);
      weight *= upper ? w[d].second : 1 - w[d].second;
    }
    if (weight == 0) continue;
    sum += weight * values[(index[0] * axes[1].size() + index[1]) * axes[2].size() + index[2]];
  }
  return sum;
}

// The tables models/kernel-rates/PREFIX-*.tsv, measured on the catalog GPU `gpu_name`. Rates
// become fractions of that GPU's catalog peaks (gpu_catalog.cpp; H100 SXM5 and H200: 989.5
// TFLOP/s bf16, 1,979 fp8, dense).
KernelRates load_rates(const std::string& prefix, const std::string& gpu_name, std::string source) {
  const GpuSpec measured = find_gpu(gpu_name, "kernel rates");
  KernelRates rates;
  rates.source_ = std::move(source);
  const std::vector<std::string> gemm_columns{"m", "n", "k", "layout", "seconds", "tflops"};
  for (const auto& [precision, name, peak] :
       {std::tuple{MatmulPrecision::bf16, prefix + "-gemm_bf16", measured.fp16_flops},
        std::tuple{MatmulPrecision::fp8, prefix + "-gemm_fp8", measured.fp8_flops}}) {
    std::map<std::string, GridBuilder> by_layout;
    for (const Row& row : rows_of(name, gemm_columns)) {
      const double m = std::stod(row.fields[0]), n = std::stod(row.fields[1]),
                   k = std::stod(row.fields[2]), seconds = std::stod(row.fields[4]);
      by_layout[row.fields[3]].add(m, n, k, 2 * m * n * k / seconds / peak);
    }
    // The fp8 table has the forward layout only: Transformer Engine runs the gradients' GEMMs in
    // FP8 too, with the same tiles, so its rates stand in for them.
    const KernelRates::Grid forward = by_layout.at("fwd").build(name);
    rates.gemm_[{precision, GemmPass::forward}] = forward;
    rates.gemm_[{precision, GemmPass::input_grad}] =
        by_layout.count("dgrad") ? by_layout.at("dgrad").build(name) : forward;
    rates.gemm_[{precision, GemmPass::weight_grad}] =
        by_layout.count("wgrad") ? by_layout.at("wgrad").build(name) : forward;
  }
  // Fused attention: cuDNN's kernel (what Transformer Engine runs on Hopper); the backward pass
  // is the forward-and-backward time less the forward time.
  std::map<std::pair<double, double>, double> forward_seconds, both_seconds;
  for (const Row& row :
       rows_of(prefix + "-attention", {"backend", "heads", "seq", "pass", "seconds", "tflops"})) {
    if (row.fields[0] != "CUDNN_ATTENTION") continue;
    const std::pair key{std::stod(row.fields[1]), std::stod(row.fields[2])};
    (row.fields[3] == "fwd" ? forward_seconds : both_seconds)[key] = std::stod(row.fields[4]);
  }
  GridBuilder forward, backward;
  for (const auto& [key, seconds] : forward_seconds) {
    const auto [heads, seq] = key;
    const double flops = 2 * seq * seq * 128 * heads; // causal: half of 4 s^2 d per head
    forward.add(heads, seq, 1, flops / seconds / measured.fp16_flops);
    const double backward_seconds = both_seconds.at(key) - seconds;
    backward.add(heads, seq, 1, 2.5 * flops / backward_seconds / measured.fp16_flops);
  }
  rates.attention_forward_ = forward.build(prefix + "-attention");
  rates.attention_backward_ = backward.build(prefix + "-attention");
  return rates;
}

const KernelRates* KernelRates::for_gpu(const GpuSpec& gpu) {
  // Each table is parsed on first use; immutable afterwards (function-local statics:
  // thread-safe initialisation). Each GPU measured gets its own tables; other GPUs of a measured
  // architecture get those of its SXM part, whose kernels (cuBLAS, cuDNN) run the same tiles.
  if (gpu.compute_capability != 90) return nullptr;
  // The H200 and the GH200 (names with "H200") get the H200's tables; the H100 SXM5, PCIe and
  // NVL the H100 SXM5's.
  if (gpu.name.find("H200") != std::string::npos) {
    static const KernelRates h200 =
        load_rates("h200", "H200-SXM-141GB",
                   "measured on an H200 SXM at its 700 W cap (cuBLAS/cuDNN via PyTorch 2.11, "
                   "models/kernel-rates/h200-*)");
    return &h200;
  }
  static const KernelRates h100 =
      load_rates("h100", "H100-SXM5-80GB",
                 "measured on an H100 SXM5 at its 700 W cap (cuBLAS/cuDNN via PyTorch 2.11, "
                 "models/kernel-rates/h100-*)");
  return &h100;
}

double KernelRates::gemm_efficiency(MatmulPrecision precision, GemmPass pass, double m, double n,
                                    double k) const {
  return gemm_.at({precision, pass}).at(m, n, k);
}

double KernelRates::attention_efficiency(double heads, double seq, bool backward) const {
  return (backward ? attention_backward_ : attention_forward_).at(heads, seq, 1);
}

} // namespace ddlsim::models
