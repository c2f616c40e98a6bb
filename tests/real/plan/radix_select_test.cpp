// The GPU top-k codec's algorithm (real/src/cuda/radix_select.hpp) run on the host: histogram
// passes narrowed by radix_narrow, then the same two scans the kernels do, must produce exactly
// the reference codec's output (k largest magnitudes, ties by lower index, ascending indices).
#include "radix_select.hpp"

#include "codecs.hpp"
#include "dtype.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

using namespace ddlsim;
using namespace ddlsim::real::cuda;

namespace {

std::uint32_t key_at(coll::DataType type, const std::vector<std::byte>& src, std::size_t i) {
  if (type == coll::DataType::fp32) {
    std::uint32_t bits;
    std::memcpy(&bits, &src[i * 4], 4);
    return magnitude_key32(bits);
  }
  std::uint16_t bits;
  std::memcpy(&bits, &src[i * 2], 2);
  return magnitude_key16(bits);
}

// What the kernels compute, step by step, on the host.
std::vector<std::byte> topk_like_the_kernels(coll::DataType type, const std::vector<std::byte>& src,
                                             std::size_t k) {
  const std::size_t e = coll::element_size(type), n = src.size() / e;
  std::vector<std::byte> dst(k * (4 + e));
  if (k == 0) return dst;
  RadixSelectState state;
  state.need = std::uint32_t(k);
  for (int shift = radix_first_shift(type == coll::DataType::fp32 ? 31 : 15); shift >= 0;
       shift -= 8) {
    std::uint32_t histogram[256] = {};
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t key = key_at(type, src, i);
      if ((key & state.mask) == state.prefix) ++histogram[(key >> shift) & 255u];
    }
    radix_narrow(state, histogram, shift);
  }
  std::uint32_t equal_before = 0, position = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t key = key_at(type, src, i);
    const bool equal = key == state.prefix;
    const bool chosen = key > state.prefix || (equal && equal_before < state.need);
    equal_before += equal ? 1 : 0;
    if (!chosen) continue;
    REQUIRE(position < k);
    const auto index = std::uint32_t(i);
    std::memcpy(&dst[position * (4 + e)], &index, 4);
    std::memcpy(&dst[position * (4 + e) + 4], &src[i * e], e);
    ++position;
  }
  CHECK(position == k);
  return dst;
}

} // namespace

TEST_CASE("radix select: the GPU top-k algorithm gives the reference codec's bytes") {
  std::mt19937 random(7);
  for (coll::DataType type : {coll::DataType::fp32, coll::DataType::fp16, coll::DataType::bf16})
    for (std::size_t n : {1u, 2u, 17u, 1000u, 4099u})
      for (int values : {3, 50, 100000}) { // few distinct magnitudes: many ties
        const std::size_t e = coll::element_size(type);
        std::vector<std::byte> src(n * e);
        std::uniform_int_distribution<int> pick(-values, values);
        for (std::size_t i = 0; i < n; ++i)
          coll::detail::store(type, &src[i * e], float(pick(random)) / 8);
        for (std::size_t k : {std::size_t(1), n / 7, n / 2, n}) {
          if (k == 0) continue;
          coll::Step step;
          step.kind = coll::StepKind::compress;
          step.codec = coll::Codec::topk;
          step.src = {coll::Buffer::input, 0, src.size()};
          step.dst = {coll::Buffer::scratch, 0, k * (4 + e)};
          step.bytes = src.size();
          std::vector<std::byte> want(k * (4 + e));
          coll::detail::compress(step, type, src, {}, want);
          INFO(coll::to_string(type) << " n=" << n << " k=" << k << " values=" << values);
          CHECK(topk_like_the_kernels(type, src, k) == want);
        }
      }
}

TEST_CASE("radix select: narrowing takes whole digits above and keeps the rest needed") {
  std::uint32_t histogram[256] = {};
  histogram[255] = 2;
  histogram[7] = 5;
  histogram[3] = 9;
  RadixSelectState state;
  state.need = 4; // 2 from digit 255, then 2 of the 5 in digit 7
  radix_narrow(state, histogram, 8);
  CHECK(state.greater == 2);
  CHECK(state.need == 2);
  CHECK(state.prefix == 7u << 8);
  CHECK(state.mask == 255u << 8);
  CHECK(radix_first_shift(31) == 24);
  CHECK(radix_first_shift(15) == 8);
}
