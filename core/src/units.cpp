#include "ddlsim/core/units.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace ddlsim {

Picoseconds ns_to_ps(double ns) {
  return static_cast<Picoseconds>(std::llround(ns * 1e3));
}
double ps_to_seconds(Picoseconds ps) {
  return static_cast<double>(ps) / 1e12;
}
double ps_to_us(Picoseconds ps) {
  return static_cast<double>(ps) / 1e6;
}

namespace {

struct Suffix {
  std::string_view text;
  double factor;
};

// Longest suffixes first so "KiB" is not read as "B".
constexpr std::array kSuffixes{
    Suffix{"kib", 1024.0},
    Suffix{"mib", 1048576.0},
    Suffix{"gib", 1073741824.0},
    Suffix{"tib", 1099511627776.0},
    Suffix{"ki", 1024.0},
    Suffix{"mi", 1048576.0},
    Suffix{"gi", 1073741824.0},
    Suffix{"ti", 1099511627776.0},
    Suffix{"kb", 1e3},
    Suffix{"mb", 1e6},
    Suffix{"gb", 1e9},
    Suffix{"tb", 1e12},
    Suffix{"k", 1e3},
    Suffix{"m", 1e6},
    Suffix{"g", 1e9},
    Suffix{"t", 1e12},
    Suffix{"b", 1.0},
};

std::string lowercase_without_spaces(std::string_view text) {
  std::string out;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c)))
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  return out;
}

} // namespace

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  std::string s = lowercase_without_spaces(text);
  double factor = 1.0;
  for (const Suffix& suffix : kSuffixes) {
    if (s.size() > suffix.text.size() && s.ends_with(suffix.text)) {
      factor = suffix.factor;
      s.resize(s.size() - suffix.text.size());
      break;
    }
  }
  if (s.empty()) return std::nullopt;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.') return std::nullopt;
  if (s.front() == '.' || s.back() == '.' || s.find('.') != s.rfind('.')) return std::nullopt;
  char* end = nullptr;
  const double mantissa = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  const double bytes = mantissa * factor;
  if (!std::isfinite(bytes) || bytes < 0 || bytes >= 9.2e18) return std::nullopt;
  if (bytes != std::floor(bytes)) return std::nullopt; // "1.3B" is not a byte count
  return static_cast<std::uint64_t>(bytes);
}

std::string format_bytes(std::uint64_t bytes) {
  constexpr std::array<const char*, 5> kUnits{"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < kUnits.size()) {
    value /= 1024.0;
    ++unit;
  }
  char buf[48];
  if (value == std::floor(value))
    std::snprintf(buf, sizeof buf, "%.0f %s", value, kUnits[unit]);
  else
    std::snprintf(buf, sizeof buf, "%.2f %s", value, kUnits[unit]);
  return buf;
}

std::string format_gbps(double bytes_per_second) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g Gb/s", bytes_per_second * 8.0 / 1e9);
  return buf;
}

std::string format_gigabytes_per_second(double bytes_per_second) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g GB/s", bytes_per_second / 1e9);
  return buf;
}

std::string format_fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

std::string format_significant(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*g", digits, value);
  return text;
}

} // namespace ddlsim
