#include "ddlsim/core/suggest.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace ddlsim {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment distance, case-insensitive: a typo in case is still a typo.
  auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (std::size_t j = 0; j <= m; ++j) prev[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1]))
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

std::string nearest_match(std::string_view word, std::span<const std::string> candidates) {
  std::string best;
  std::size_t best_distance = SIZE_MAX;
  for (const std::string& candidate : candidates) {
    const std::size_t d = edit_distance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  // Plausible typo: at most a third of the longer word changed (and at least one edit allowed).
  const std::size_t longest = std::max(word.size(), best.size());
  const std::size_t allowed = std::max<std::size_t>(1, longest / 3);
  if (best.empty() || best_distance > allowed) return {};
  return best;
}

std::string did_you_mean(std::string_view word, std::span<const std::string> candidates) {
  const std::string match = nearest_match(word, candidates);
  return match.empty() ? std::string{} : " (did you mean \"" + match + "\"?)";
}

std::string join_choices(std::span<const std::string> choices) {
  std::string out;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) out += (i + 1 == choices.size()) ? " or " : ", ";
    out += choices[i];
  }
  return out;
}

} // namespace ddlsim
