// Element encodings of the reference executor: fp32, and fp16 / bf16 as their 16-bit patterns,
// so that every stored value is rounded exactly as a device buffer of that type would round it.
#pragma once

#include "ddlsim/collectives/call.hpp"

#include <cstddef>
#include <cstdint>

namespace ddlsim::coll::detail {

// IEEE binary16 and bfloat16 conversions, round to nearest even; overflow gives infinity and
// NaN stays NaN.
std::uint16_t float_to_fp16(float value);
float fp16_to_float(std::uint16_t bits);
std::uint16_t float_to_bf16(float value);
float bf16_to_float(std::uint16_t bits);

// `value` rounded to what `type` can hold.
float round_to(DataType type, float value);

// Reads / writes one element of `type` at `at` (unaligned, host byte order).
float load(DataType type, const std::byte* at);
void store(DataType type, std::byte* at, float value);

// Machine epsilon of `type` (2^-23, 2^-10, 2^-7): the spacing of values just above 1.
double epsilon(DataType type);

} // namespace ddlsim::coll::detail
