// Validators for numeric flags that, unlike CLI11's PositiveNumber / NonNegativeNumber / Range,
// refuse NaN and infinities (which compare false with every bound, so CLI11 lets them through:
// `--max-wall-seconds nan` used to mean no deadline) and print their bounds readably (CLI11's
// NonNegativeNumber printed DBL_MAX in 309 digits).
#pragma once

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace ddlsim::cli::checks {

namespace detail {

inline std::string bound(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", value);
  return text;
}

// The value as a number in [lo, hi], or a message; lo_open excludes lo.
inline std::string in_bounds(const std::string& text, double lo, bool lo_open, double hi) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const long double value = std::strtold(begin, &end);
  if (end == begin || *end != '\0') return "\"" + text + "\" is not a number";
  if (!std::isfinite(value)) return "\"" + text + "\" is not a finite number";
  if ((lo_open ? value <= lo : value < lo) || value > hi) {
    if (std::isinf(hi))
      return "\"" + text + "\" must be " + (lo_open ? "above " : "at least ") + bound(lo);
    return "\"" + text + "\" must be in " + (lo_open ? "(" : "[") + bound(lo) + ", " + bound(hi) +
           "]";
  }
  return "";
}

} // namespace detail

// A finite number above 0.
inline CLI::Validator positive() {
  return CLI::Validator(
      [](std::string& text) { return detail::in_bounds(text, 0, true, INFINITY); }, "POSITIVE");
}

// A finite number of at least 0.
inline CLI::Validator non_negative() {
  return CLI::Validator(
      [](std::string& text) { return detail::in_bounds(text, 0, false, INFINITY); }, "NONNEGATIVE");
}

// A finite number in [lo, hi].
inline CLI::Validator range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) { return detail::in_bounds(text, lo, false, hi); },
      "[" + detail::bound(lo) + " - " + detail::bound(hi) + "]");
}

} // namespace ddlsim::cli::checks
