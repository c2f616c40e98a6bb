// Coroutine frames of StepStream generators, packed into chunks backed by huge pages.
//
// Why: the analytic engine at 16k ranks resumes thousands of generators in turn, each frame 2 to
// 5 KiB with g++ 12 and each, from malloc, on pages of its own among the other allocations.
// Packed on huge pages they cost far fewer misses of the translation buffer (the analytic
// engine's 16k-rank hierarchical all-reduce takes about 10% less CPU time). Frames are bumped out
// of a thread's current chunk in allocation order; a chunk counts its live frames (plus one while
// it is some thread's current chunk) and is freed when the count falls to zero, from whichever
// thread frees the last frame. Memory is thus the live frames plus the chunks they pin (a
// thread's first chunk is a small one without huge pages, see kSmallChunk).
#include "ddlsim/collectives/step_stream.hpp"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ddlsim::coll::detail {
namespace {

constexpr std::size_t kHugeChunk = std::size_t{2} << 20; // one huge page on x86-64 Linux
// A thread's first chunk is small and gets no huge page: a thread that makes only a few frames
// (a simulation's actor thread resuming nested phase generators) then pins 4 KiB pages, not a
// 2 MiB huge page. Once it has filled one, its chunks are huge.
constexpr std::size_t kSmallChunk = std::size_t{64} << 10;
constexpr std::size_t kLine = 64;
// Larger frames (none of ddlsim's generators) come from operator new.
constexpr std::size_t kLargestFrame = kSmallChunk / 4;

struct alignas(kLine) ChunkHeader {
  std::atomic<std::uint32_t> live{0};
};
static_assert(sizeof(ChunkHeader) == kLine);

// A frame of `size` bytes takes its size rounded to a word, then a pointer to its chunk (so that
// freeing finds the chunk whatever its size), rounded to a cache line.
std::size_t link_offset(std::size_t size) {
  return (size + 7) & ~std::size_t{7};
}
std::size_t footprint(std::size_t size) {
  return (link_offset(size) + sizeof(ChunkHeader*) + kLine - 1) & ~(kLine - 1);
}
ChunkHeader*& chunk_link(void* frame, std::size_t size) {
  return *reinterpret_cast<ChunkHeader**>(static_cast<char*>(frame) + link_offset(size));
}

void release(ChunkHeader* chunk) {
  if (chunk->live.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    chunk->~ChunkHeader();
    std::free(chunk);
  }
}

// The chunk this thread bumps frames out of; its reference is dropped when the thread ends.
struct CurrentChunk {
  ChunkHeader* chunk = nullptr;
  std::size_t used = 0;
  std::size_t bytes = 0; // of the chunk
  ~CurrentChunk() {
    if (chunk != nullptr) release(chunk);
  }
};
thread_local CurrentChunk current;

ChunkHeader* new_chunk(std::size_t bytes) {
  void* memory = bytes == kHugeChunk ? std::aligned_alloc(kHugeChunk, kHugeChunk)
                                     : std::aligned_alloc(kLine, bytes);
  if (memory == nullptr) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
  // A hint: without huge pages it still works.
  if (bytes == kHugeChunk) madvise(memory, kHugeChunk, MADV_HUGEPAGE);
#endif
  auto* chunk = new (memory) ChunkHeader;
  chunk->live.store(1, std::memory_order_relaxed); // the current-chunk reference
  return chunk;
}

} // namespace

void* allocate_frame(std::size_t size) {
  const std::size_t bytes = footprint(size);
  if (bytes > kLargestFrame) return ::operator new(size);
  if (current.chunk == nullptr || current.used + bytes > current.bytes) {
    const std::size_t chunk_bytes = current.chunk == nullptr ? kSmallChunk : kHugeChunk;
    ChunkHeader* fresh = new_chunk(chunk_bytes);
    if (current.chunk != nullptr) release(current.chunk);
    current.chunk = fresh;
    current.used = sizeof(ChunkHeader);
    current.bytes = chunk_bytes;
  }
  current.chunk->live.fetch_add(1, std::memory_order_relaxed);
  void* frame = reinterpret_cast<char*>(current.chunk) + current.used;
  current.used += bytes;
  chunk_link(frame, size) = current.chunk;
  return frame;
}

void free_frame(void* frame, std::size_t size) noexcept {
  if (footprint(size) > kLargestFrame) {
    ::operator delete(frame);
    return;
  }
  release(chunk_link(frame, size));
}

} // namespace ddlsim::coll::detail
