#include "sparse.hpp"

#include "dtype.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ddlsim::coll::gen {

void SparseGenerator::check_pair_indices(std::uint64_t elements) const {
  if (elements > std::uint64_t(UINT32_MAX))
    reject(std::to_string(elements) +
           " elements are more than the uint32 index of a top-k pair "
           "can address; split the buffer into calls of at most " +
           std::to_string(UINT32_MAX) + " elements");
}

std::vector<std::uint64_t> top_indices(std::span<const double> values, std::uint64_t k) {
  std::vector<std::uint64_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::uint64_t a, std::uint64_t b) {
    return std::fabs(values[a]) > std::fabs(values[b]);
  });
  order.resize(std::min<std::size_t>(order.size(), k));
  std::sort(order.begin(), order.end());
  return order;
}

void add_topk(std::span<const double> values, std::uint64_t k, std::vector<double>& sum,
              std::uint64_t offset) {
  for (std::uint64_t i : top_indices(values, k)) sum[offset + i] += values[i];
}

void finish_average(const CollectiveCall& call, std::vector<double>& sum) {
  if (call.reduction == Reduction::avg)
    for (double& x : sum) x /= call.ranks;
}

std::vector<double> ring_sum(const CollectiveCall& call,
                             const std::vector<std::vector<double>>& inputs, int first, int size,
                             int stride, ElementRange range, int part) {
  const ElementRange cut = sub(range, std::uint64_t(size), std::uint64_t(part));
  auto member = [&](int i) -> const std::vector<double>& {
    return inputs[std::size_t(first + ((part + i) % size) * stride)];
  };
  std::vector<double> out(cut.size());
  for (std::uint64_t i = 0; i < cut.size(); ++i) {
    float acc = static_cast<float>(member(1)[cut.begin + i]);
    for (int m = 2; m <= size; ++m)
      acc = detail::round_to(call.dtype, static_cast<float>(member(m)[cut.begin + i]) + acc);
    out[i] = acc;
  }
  return out;
}

} // namespace ddlsim::coll::gen
