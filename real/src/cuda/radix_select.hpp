// The radix select that finds the k-th largest magnitude for the GPU top-k codec, written once
// for the device kernels and for the host tests: a pass looks at one 8-bit digit of the keys that
// still match the prefix chosen so far, and narrow() picks the digit that holds the k-th largest
// from that pass's histogram. After the last pass `prefix` is the threshold key T: `greater` keys
// are above T, and the `need` lowest-indexed keys equal to T complete the k (ties by lower index,
// as step.hpp's top-k defines).
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define DDLSIM_HOST_DEVICE __host__ __device__
#else
#define DDLSIM_HOST_DEVICE
#endif

namespace ddlsim::real::cuda {

struct RadixSelectState {
  std::uint32_t prefix = 0;  // the digits chosen so far
  std::uint32_t mask = 0;    // which bits of a key the prefix covers
  std::uint32_t need = 0;    // how many more keys among those matching the prefix to take
  std::uint32_t greater = 0; // keys known to be above the threshold
};

// The order of magnitudes as unsigned keys: the sign bit cleared (fp32: 31 bits; fp16 and bf16:
// 15 bits). For non-NaN values a larger key is a larger magnitude, and +0 and -0 are equal.
DDLSIM_HOST_DEVICE inline std::uint32_t magnitude_key32(std::uint32_t bits) {
  return bits & 0x7fffffffu;
}
DDLSIM_HOST_DEVICE inline std::uint32_t magnitude_key16(std::uint16_t bits) {
  return std::uint32_t(bits) & 0x7fffu;
}

// Narrows `state` with the histogram of digit (key >> shift) & 255 over the keys that match the
// prefix: the digit d whose keys hold the need-th largest; keys of larger digits are all taken.
DDLSIM_HOST_DEVICE inline void radix_narrow(RadixSelectState& state, const std::uint32_t* histogram,
                                            int shift) {
  std::uint32_t above = 0;
  int digit = 255;
  for (; digit > 0; --digit) {
    if (above + histogram[digit] >= state.need) break;
    above += histogram[digit];
  }
  state.greater += above;
  state.need -= above;
  state.prefix |= std::uint32_t(digit) << shift;
  state.mask |= 255u << shift;
}

// The first shift for keys of `key_bits` bits (31 or 15, rounded up to whole digits).
DDLSIM_HOST_DEVICE inline int radix_first_shift(int key_bits) {
  return (key_bits + 7) / 8 * 8 - 8;
}

} // namespace ddlsim::real::cuda
