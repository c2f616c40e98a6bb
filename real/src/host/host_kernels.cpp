#include "host_kernels.hpp"

#include "codecs.hpp"
#include "dtype.hpp"

#include <cstring>

namespace ddlsim::real::host {

namespace {

// fp32 sum without per-element calls: the loop the compiler vectorizes.
void add_fp32(const std::byte* a, const std::byte* b, std::byte* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    float x, y;
    std::memcpy(&x, a + 4 * i, 4);
    std::memcpy(&y, b + 4 * i, 4);
    const float z = x + y;
    std::memcpy(out + 4 * i, &z, 4);
  }
}

} // namespace

void combine(coll::Reduction reduction, coll::DataType type, std::span<const std::byte> a,
             std::span<const std::byte> b, std::span<std::byte> out) {
  using coll::detail::load;
  using coll::detail::store;
  const std::size_t e = coll::element_size(type), n = out.size() / e;
  if (reduction != coll::Reduction::adasum) {
    if (type == coll::DataType::fp32) return add_fp32(a.data(), b.data(), out.data(), n);
    for (std::size_t i = 0; i < n; ++i)
      store(type, &out[i * e], load(type, &a[i * e]) + load(type, &b[i * e]));
    return;
  }
  // Adasum: the same sums in double, in the same order, as the reference executor.
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

void scale(coll::DataType type, double factor, std::span<const std::byte> src,
           std::span<std::byte> dst) {
  using coll::detail::load;
  using coll::detail::store;
  const std::size_t e = coll::element_size(type);
  for (std::size_t i = 0; i < dst.size() / e; ++i)
    store(type, &dst[i * e], static_cast<float>(double(load(type, &src[i * e])) * factor));
}

void run_local_step(const coll::Step& step, coll::Reduction reduction, coll::DataType type,
                    std::span<const std::byte> src, std::span<const std::byte> aux,
                    std::span<std::byte> dst) {
  switch (step.kind) {
  case coll::StepKind::copy:
    if (!dst.empty()) std::memmove(dst.data(), src.data(), dst.size());
    return;
  case coll::StepKind::reduce:
    return combine(reduction, type, dst, src, dst);
  case coll::StepKind::scale:
    return scale(type, step.param, src, dst);
  case coll::StepKind::compress:
    return coll::detail::compress(step, type, src, aux, dst);
  case coll::StepKind::decompress:
    return coll::detail::decompress(step, type, src, aux, dst);
  default:
    return;
  }
}

} // namespace ddlsim::real::host
