// The #wrong column every real backend prints: how many output elements differ from the
// reference executor's (same inputs, same schedule, so a correct run matches bit for bit).
#pragma once

#include "dtype.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ddlsim::real {

// Elements of `output` (`bytes` long, of `type`) that differ from `want`; NaN matches NaN. A
// length mismatch counts every element of the longer side as wrong.
inline std::uint64_t count_wrong_elements(coll::DataType type, const std::byte* output,
                                          std::size_t bytes, const std::vector<double>& want) {
  const std::size_t e = coll::element_size(type);
  if (bytes / e != want.size()) return std::max(bytes / e, want.size());
  std::uint64_t wrong = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double got = coll::detail::load(type, output + i * e);
    if (!(got == want[i] || (std::isnan(got) && std::isnan(want[i])))) ++wrong;
  }
  return wrong;
}

} // namespace ddlsim::real
