#include "codecs.hpp"

#include "dtype.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace ddlsim::coll::detail {

namespace {

std::uint64_t chunk_count(std::uint64_t bytes, std::uint64_t chunk) {
  return (bytes + chunk - 1) / chunk;
}

std::string sizes(const Step& step) {
  return "src " + std::to_string(step.src.bytes) + " B, dst " + std::to_string(step.dst.bytes) +
         " B";
}

// The indices of the `count` largest values of `norms`, ties by lower index, ascending.
std::vector<std::uint64_t> top_chunks(const std::vector<float>& norms, std::uint64_t count) {
  std::vector<std::uint64_t> order(norms.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint64_t a, std::uint64_t b) { return norms[a] > norms[b]; });
  order.resize(count);
  std::sort(order.begin(), order.end());
  return order;
}

std::vector<float> read_norms(std::span<const std::byte> aux) {
  std::vector<float> norms(aux.size() / 4);
  std::memcpy(norms.data(), aux.data(), norms.size() * 4);
  return norms;
}

} // namespace

std::string codec_problem(const Step& step, DataType dtype) {
  const std::uint64_t e = element_size(dtype), pair = 4 + e;
  const bool down = step.kind == StepKind::compress;
  if (step.bytes != step.src.bytes)
    return "processes " + std::to_string(step.bytes) + " B but src has " +
           std::to_string(step.src.bytes) + " B";
  const auto chunk = static_cast<std::uint64_t>(step.param);
  switch (step.codec) {
  case Codec::topk:
    if (down ? (step.src.bytes % e || step.dst.bytes % pair ||
                step.dst.bytes / pair > step.src.bytes / e)
             : (step.src.bytes % pair || step.dst.bytes % e))
      return "topk needs whole elements and (index, value) pairs of " + std::to_string(pair) +
             " B, at most one pair per element: " + sizes(step);
    return {};
  case Codec::fp16_cast:
    if (down ? (step.src.bytes % e || step.dst.bytes != step.src.bytes / e * 2)
             : (step.src.bytes % 2 || step.dst.bytes != step.src.bytes / 2 * e))
      return "fp16_cast needs 2 B per element on the compressed side: " + sizes(step);
    return {};
  case Codec::chunk_norms:
    if (!down) return "chunk_norms has no decompress";
    if (step.param <= 0 || double(chunk) != step.param || chunk % e || step.src.bytes % e ||
        step.dst.bytes != 4 * chunk_count(step.src.bytes, chunk))
      return "chunk_norms needs a whole-element chunk size and one fp32 norm per chunk: " +
             sizes(step);
    return {};
  case Codec::chunk_select: {
    const std::uint64_t dense = down ? step.src.bytes : step.dst.bytes;
    const std::uint64_t packed = down ? step.dst.bytes : step.src.bytes;
    if (step.param <= 0 || double(chunk) != step.param || chunk % e || dense % chunk ||
        packed % chunk || packed > dense || step.aux.bytes != 4 * (dense / chunk))
      return "chunk_select needs whole chunks on both sides and one fp32 norm per chunk in "
             "aux: " +
             sizes(step) + ", aux " + std::to_string(step.aux.bytes) + " B";
    return {};
  }
  case Codec::none:
    break;
  }
  return "unknown codec";
}

void compress(const Step& step, DataType dtype, std::span<const std::byte> src,
              std::span<const std::byte> aux, std::span<std::byte> dst) {
  const std::size_t e = element_size(dtype);
  switch (step.codec) {
  case Codec::topk: {
    const std::size_t n = src.size() / e, k = dst.size() / (4 + e);
    std::vector<std::uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    // Largest magnitude first; stable sort keeps the lower index first among equals.
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return std::fabs(load(dtype, &src[a * e])) > std::fabs(load(dtype, &src[b * e]));
    });
    order.resize(k);
    std::sort(order.begin(), order.end());
    for (std::size_t i = 0; i < k; ++i) {
      std::memcpy(&dst[i * (4 + e)], &order[i], 4);
      std::memcpy(&dst[i * (4 + e) + 4], &src[order[i] * e], e);
    }
    return;
  }
  case Codec::fp16_cast:
    for (std::size_t i = 0; i < src.size() / e; ++i)
      store(DataType::fp16, &dst[i * 2], load(dtype, &src[i * e]));
    return;
  case Codec::chunk_norms: {
    const auto chunk = static_cast<std::size_t>(step.param);
    for (std::size_t c = 0; c * chunk < src.size(); ++c) {
      double sum = 0;
      for (std::size_t at = c * chunk; at < std::min(src.size(), (c + 1) * chunk); at += e) {
        const double v = load(dtype, &src[at]);
        sum += v * v;
      }
      store(DataType::fp32, &dst[c * 4], static_cast<float>(std::sqrt(sum)));
    }
    return;
  }
  case Codec::chunk_select: {
    const auto chunk = static_cast<std::size_t>(step.param);
    const auto chosen = top_chunks(read_norms(aux), dst.size() / chunk);
    for (std::size_t i = 0; i < chosen.size(); ++i)
      std::memcpy(&dst[i * chunk], &src[chosen[i] * chunk], chunk);
    return;
  }
  case Codec::none:
    break;
  }
  throw std::runtime_error("compress without a codec");
}

void decompress(const Step& step, DataType dtype, std::span<const std::byte> src,
                std::span<const std::byte> aux, std::span<std::byte> dst) {
  const std::size_t e = element_size(dtype);
  switch (step.codec) {
  case Codec::topk:
    for (std::size_t at = 0; at < src.size(); at += 4 + e) {
      std::uint32_t index;
      std::memcpy(&index, &src[at], 4);
      if (std::uint64_t(index) * e >= dst.size())
        throw std::runtime_error("topk index " + std::to_string(index) + " is outside dst of " +
                                 std::to_string(dst.size() / e) + " elements");
      store(dtype, &dst[index * e], load(dtype, &dst[index * e]) + load(dtype, &src[at + 4]));
    }
    return;
  case Codec::fp16_cast:
    for (std::size_t i = 0; i < dst.size() / e; ++i)
      store(dtype, &dst[i * e], load(dtype, &dst[i * e]) + load(DataType::fp16, &src[i * 2]));
    return;
  case Codec::chunk_select: {
    const auto chunk = static_cast<std::size_t>(step.param);
    const auto chosen = top_chunks(read_norms(aux), src.size() / chunk);
    for (std::size_t i = 0; i < chosen.size(); ++i)
      std::memcpy(&dst[chosen[i] * chunk], &src[i * chunk], chunk);
    return;
  }
  case Codec::chunk_norms:
  case Codec::none:
    break;
  }
  throw std::runtime_error("decompress without an invertible codec");
}

} // namespace ddlsim::coll::detail
