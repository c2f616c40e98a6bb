#include "ddlsim/core/units.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;

TEST_CASE("byte sizes parse binary and decimal suffixes") {
  CHECK(parse_byte_size("256MiB") == 256ull << 20);
  CHECK(parse_byte_size("1GB") == 1'000'000'000ull);
  CHECK(parse_byte_size("4 KiB") == 4096u);
  CHECK(parse_byte_size("4k") == 4000u);
  CHECK(parse_byte_size("1.5GiB") == 3ull << 29);
  CHECK(parse_byte_size("512") == 512u);
  CHECK(parse_byte_size("8B") == 8u);
  CHECK(parse_byte_size("0") == 0u);
}

TEST_CASE("byte sizes reject what is not a whole byte count") {
  CHECK_FALSE(parse_byte_size(""));
  CHECK_FALSE(parse_byte_size("MiB"));
  CHECK_FALSE(parse_byte_size("-4KiB"));
  CHECK_FALSE(parse_byte_size("1.3B"));
  CHECK_FALSE(parse_byte_size("12 parsecs"));
  CHECK_FALSE(parse_byte_size("1e3"));
  CHECK_FALSE(parse_byte_size("1..5MB"));
  CHECK_FALSE(parse_byte_size("99999999999TiB"));
}

TEST_CASE("bandwidth and time conversions") {
  CHECK(gbps_to_bytes_per_second(100) == 12.5e9);
  CHECK(gigabytes_to_bytes_per_second(25) == 25e9);
  CHECK(ns_to_ps(1.5) == 1500);
  CHECK(ps_to_seconds(kPsPerSecond) == 1.0);
  CHECK(format_bytes(256ull << 20) == "256 MiB");
  CHECK(format_bytes(1536) == "1.50 KiB");
}

TEST_CASE("figures print with fixed decimals or significant digits") {
  CHECK(format_fixed(12.5, 3) == "12.500");
  CHECK(format_fixed(0.0004, 2) == "0.00");
  CHECK(format_significant(0.00021983) == "0.0002198");
  CHECK(format_significant(13920.1) == "1.392e+04");
  CHECK(format_significant(30.93, 3) == "30.9");
}
