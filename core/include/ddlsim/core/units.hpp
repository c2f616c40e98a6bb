// Units used throughout ddlsim.
//
// Inside engines time is an integer count of picoseconds, so that event ordering is exact and
// reports are byte-identical across runs; seconds appear only at the edges (reports, JSON).
// Bandwidth is bytes per second (double). Sizes are bytes (uint64).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ddlsim {

using Picoseconds = std::int64_t;

inline constexpr Picoseconds kPsPerNs = 1'000;
inline constexpr Picoseconds kPsPerUs = 1'000'000;
inline constexpr Picoseconds kPsPerSecond = 1'000'000'000'000;

// Bytes per second from gigabits per second (10^9 bit/s), the unit of NIC and fabric specs.
constexpr double gbps_to_bytes_per_second(double gbps) {
  return gbps * 1e9 / 8.0;
}
// Bytes per second from gigabytes per second (10^9 B/s), the unit of NVLink and PCIe specs.
constexpr double gigabytes_to_bytes_per_second(double gigabytes) {
  return gigabytes * 1e9;
}

// Rounds a non-negative nanosecond count to picoseconds.
Picoseconds ns_to_ps(double ns);
double ps_to_seconds(Picoseconds ps);
double ps_to_us(Picoseconds ps);

// Parses "256MiB", "1GB", "4 KiB", "512", "1.5GiB" (binary and decimal suffixes, B optional on
// K/M/G/T, case-insensitive). Returns nullopt for anything else, or a value that is not a whole
// byte count or does not fit in 2^63.
std::optional<std::uint64_t> parse_byte_size(std::string_view text);

// "256 MiB", "1.5 GiB", "100 B": exact binary units where they divide evenly, else two decimals.
std::string format_bytes(std::uint64_t bytes);
// "25 Gb/s" style for a bandwidth in bytes/s, in bits (networks) or bytes (GPU links).
std::string format_gbps(double bytes_per_second);
std::string format_gigabytes_per_second(double bytes_per_second);
// printf's "%.*f": `digits` decimals ("12.500").
std::string format_fixed(double value, int digits);
// printf's "%.*g": `digits` significant digits, for figures spanning orders of magnitude.
std::string format_significant(double value, int digits = 4);

} // namespace ddlsim
