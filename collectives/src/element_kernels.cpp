#include "element_kernels.hpp"

#include "codecs.hpp"
#include "dtype.hpp"

#include <cstring>

namespace ddlsim::coll::detail {

namespace {

// fp32 sum without per-element calls: the loop the compiler vectorizes. It rounds as the generic
// loop does: a sum of two floats computed in double and rounded to float is their float sum.
void add_fp32(const std::byte* a, const std::byte* b, std::byte* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    float x, y;
    std::memcpy(&x, a + 4 * i, 4);
    std::memcpy(&y, b + 4 * i, 4);
    const float z = x + y;
    std::memcpy(out + 4 * i, &z, 4);
  }
}

// Adasum (Maleki et al.): a' = (1 - a.b / 2|a|^2) a + (1 - a.b / 2|b|^2) b, sums in double.
void adasum(DataType type, std::span<const std::byte> a, std::span<const std::byte> b,
            std::span<std::byte> out) {
  const std::size_t e = element_size(type), n = out.size() / e;
  double dot = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = load(type, &a[i * e]), y = load(type, &b[i * e]);
    dot += x * y;
    aa += x * x;
    bb += y * y;
  }
  const double ca = aa > 0 ? 1 - dot / (2 * aa) : 1, cb = bb > 0 ? 1 - dot / (2 * bb) : 1;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = load(type, &a[i * e]), y = load(type, &b[i * e]);
    store(type, &out[i * e], static_cast<float>(ca * x + cb * y));
  }
}

} // namespace

void combine(Reduction reduction, DataType type, std::span<const std::byte> a,
             std::span<const std::byte> b, std::span<std::byte> out) {
  if (reduction == Reduction::adasum) return adasum(type, a, b, out);
  const std::size_t e = element_size(type), n = out.size() / e;
  if (type == DataType::fp32) return add_fp32(a.data(), b.data(), out.data(), n);
  for (std::size_t i = 0; i < n; ++i)
    store(type, &out[i * e], load(type, &a[i * e]) + load(type, &b[i * e]));
}

void scale(DataType type, double factor, std::span<const std::byte> src, std::span<std::byte> dst) {
  const std::size_t e = element_size(type);
  for (std::size_t i = 0; i < dst.size() / e; ++i)
    store(type, &dst[i * e], static_cast<float>(double(load(type, &src[i * e])) * factor));
}

void run_local_step(const Step& step, Reduction reduction, DataType type,
                    std::span<const std::byte> src, std::span<const std::byte> aux,
                    std::span<std::byte> dst) {
  switch (step.kind) {
  case StepKind::copy:
    if (!dst.empty()) std::memmove(dst.data(), src.data(), dst.size());
    return;
  case StepKind::reduce:
    return combine(reduction, type, dst, src, dst);
  case StepKind::scale:
    return scale(type, step.param, src, dst);
  case StepKind::compress:
    return compress(step, type, src, aux, dst);
  case StepKind::decompress:
    return decompress(step, type, src, aux, dst);
  default:
    return;
  }
}

} // namespace ddlsim::coll::detail
