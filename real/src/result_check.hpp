// The #wrong column every real backend prints: how many output elements differ from what the
// collective defines (coll::expected_real_outputs: the reference executor's result of the same
// schedule where that agrees with the definition, so a correct run matches bit for bit, and the
// definition where it does not, so a wrong schedule is counted, not copied).
#pragma once

#include "dtype.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
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

// The error of a run with wrong elements: how many, on which ranks (when known), and whether the
// schedule itself computes something else than the collective (`schedule_error`, from
// coll::expected_real_outputs) rather than the backend moving bytes wrongly.
inline std::string wrong_result_message(std::uint64_t wrong, const std::vector<int>& ranks,
                                        const std::string& schedule_error) {
  std::string text = std::to_string(wrong) + " output elements differ from the collective's result";
  if (!ranks.empty()) {
    text += ranks.size() == 1 ? " on rank " : " on ranks ";
    for (std::size_t i = 0; i < ranks.size() && i < 16; ++i)
      text += (i ? ", " : "") + std::to_string(ranks[i]);
    if (ranks.size() > 16) text += ", ... (" + std::to_string(ranks.size()) + " ranks)";
  }
  if (!schedule_error.empty())
    text += "; the schedule itself computes a different result (" + schedule_error +
            "): is the schedule dump corrupted or its generator wrong?";
  return text;
}

} // namespace ddlsim::real
