// HugePageAllocator: a std::allocator for the engine's big per-rank and per-link arrays that
// asks for huge pages (2 MiB) for allocations of at least one huge page.
//
// Why: at 16k ranks the analytic engine touches program states and link states all over arrays
// of several MiB, one or two cache lines per page visited; with 4 KiB pages nearly every such
// touch (and every prefetch of one) also misses the translation buffer. Small allocations, and
// systems without transparent huge pages, get ordinary memory: the advice is only a hint.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ddlsim::sim {

template <typename T> class HugePageAllocator {
public:
  using value_type = T;

  HugePageAllocator() = default;
  template <typename U> HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePage)
      return static_cast<T*>(::operator new (bytes, std::align_val_t{alignof(T)}));
    void* memory = std::aligned_alloc(kHugePage, rounded(bytes));
    if (memory == nullptr) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
    madvise(memory, rounded(bytes), MADV_HUGEPAGE);
#endif
    return static_cast<T*>(memory);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < kHugePage)
      ::operator delete (p, std::align_val_t{alignof(T)});
    else
      std::free(p);
  }

  template <typename U> bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }

private:
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;
  static std::size_t rounded(std::size_t bytes) {
    return (bytes + kHugePage - 1) & ~(kHugePage - 1);
  }
};

} // namespace ddlsim::sim
