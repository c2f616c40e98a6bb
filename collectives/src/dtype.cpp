#include "dtype.hpp"

#include <bit>
#include <cmath>
#include <cstring>

namespace ddlsim::coll::detail {

std::uint16_t float_to_fp16(float value) {
  const std::uint32_t f = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (f >> 16) & 0x8000u;
  const std::uint32_t abs = f & 0x7fffffffu;
  if (abs >= 0x7f800000u) // inf or NaN (keep NaN quiet and non-zero)
    return static_cast<std::uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  // 65520 is the halfway point between the largest fp16 (65504) and 2^16: it rounds to inf.
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (abs < 0x38800000u) {
    // Subnormal or zero in fp16: scale to units of 2^-24 and round to nearest even in float,
    // which is exact here because the float has more precision than the result needs.
    const float units = std::bit_cast<float>(abs) * 16777216.0f; // 2^24
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::nearbyint(units)));
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped mantissa bits to even.
  std::uint32_t bits = abs - (112u << 23);
  const std::uint32_t lsb = (bits >> 13) & 1u;
  bits += 0xfffu + lsb;
  return static_cast<std::uint16_t>(sign | (bits >> 13));
}

float fp16_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  const std::uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24
    const float magnitude = static_cast<float>(mantissa) / 16777216.0f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

std::uint16_t float_to_bf16(float value) {
  const std::uint32_t f = std::bit_cast<std::uint32_t>(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((f >> 16) | 0x40u);
  const std::uint32_t lsb = (f >> 16) & 1u;
  return static_cast<std::uint16_t>((f + 0x7fffu + lsb) >> 16);
}

float bf16_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

float round_to(DataType type, float value) {
  switch (type) {
  case DataType::fp32:
    return value;
  case DataType::fp16:
    return fp16_to_float(float_to_fp16(value));
  case DataType::bf16:
    return bf16_to_float(float_to_bf16(value));
  }
  return value;
}

float load(DataType type, const std::byte* at) {
  if (type == DataType::fp32) {
    float value;
    std::memcpy(&value, at, sizeof value);
    return value;
  }
  std::uint16_t bits;
  std::memcpy(&bits, at, sizeof bits);
  return type == DataType::fp16 ? fp16_to_float(bits) : bf16_to_float(bits);
}

void store(DataType type, std::byte* at, float value) {
  if (type == DataType::fp32) {
    std::memcpy(at, &value, sizeof value);
    return;
  }
  const std::uint16_t bits = type == DataType::fp16 ? float_to_fp16(value) : float_to_bf16(value);
  std::memcpy(at, &bits, sizeof bits);
}

double epsilon(DataType type) {
  switch (type) {
  case DataType::fp32:
    return 0x1p-23;
  case DataType::fp16:
    return 0x1p-10;
  case DataType::bf16:
    return 0x1p-7;
  }
  return 0x1p-23;
}

} // namespace ddlsim::coll::detail
