// Helpers shared by the generators, so that each generator file reads like its algorithm:
// the call's shape copied by value (coroutine frames keep no reference to the call), element
// ranges and their byte ranges, Step builders, a step counter for deps, the non-power-of-two
// fold of MPICH, and the parameter checks every generator repeats.
#pragma once

#include "ddlsim/collectives/algorithm.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

namespace ddlsim::coll::gen {

// "No step": a dep that does not exist yet (e.g. before the first receive); emit() skips it.
inline constexpr std::uint32_t kNoStep = UINT32_MAX;

// i modulo m in [0, m), for negative i too, with one division.
inline int floor_mod(long long i, int m) {
  const auto r = static_cast<int>(i % m);
  return r < 0 ? r + m : r;
}

// What a program needs from the call. Small and copied into every coroutine frame.
struct Shape {
  int p = 1;    // ranks
  int rank = 0; // this program's rank
  int channel = 0;
  int channels = 1;
  int chunks = 1;
  int root = 0;
  std::uint64_t n = 0; // elements of the call
  std::uint64_t e = 4; // bytes per element
  Reduction reduction = Reduction::sum;

  // n / p and n % p, set by shape_of: block() runs at every step of a ring and a division costs
  // more than the rest of it.
  std::uint64_t block_base = 0;
  std::uint64_t block_extra = 0;

  // Rank arithmetic modulo p.
  int mod(long long i) const { return floor_mod(i, p); }
  // Block i of the p blocks of n elements (as partition(n, p, i)).
  ElementRange block(long long i) const {
    const auto index = std::uint64_t(i);
    const std::uint64_t begin = index * block_base + std::min(index, block_extra);
    return {begin, begin + block_base + (index < block_extra ? 1 : 0)};
  }
  ElementRange all() const { return {0, n}; }
  BufferRange at(Buffer buffer, ElementRange range) const {
    return {buffer, range.begin * e, range.size() * e};
  }
  bool avg() const { return reduction == Reduction::avg; }
  // This channel's share of `range` (the channels split every range alike).
  ElementRange channel_share(ElementRange range) const;
  // Chunk j of this channel's share of block b: what a pipelined ring moves per step.
  ElementRange ring_piece(long long b, int j) const;
};
Shape shape_of(const CollectiveCall& call, int rank, int channel);

// Part `index` of `parts` of `range`, split as partition() splits. Inline: called per step, and
// most calls split into one part (one chunk, one channel), which needs no division.
inline ElementRange sub(ElementRange range, std::uint64_t parts, std::uint64_t index) {
  if (parts == 1 && index == 0) return range;
  const ElementRange part = partition(range.size(), parts, index);
  return {range.begin + part.begin, range.begin + part.end};
}
inline ElementRange Shape::channel_share(ElementRange range) const {
  return sub(range, std::uint64_t(channels), std::uint64_t(channel));
}
inline ElementRange Shape::ring_piece(long long b, int j) const {
  return sub(channel_share(block(mod(b))), std::uint64_t(chunks), std::uint64_t(j));
}
// `range` moved so that `origin` becomes 0 (a global range in a buffer holding one block).
ElementRange shift(ElementRange range, std::uint64_t origin);
// [begin of part a, begin of part b) when `total` is split into `parts` parts (a <= b <= parts).
ElementRange parts_span(std::uint64_t total, std::uint64_t parts, std::uint64_t a, std::uint64_t b);

// The steps every generator emits. Inline: they run once per step, and out of line each
// BufferRange went through the coroutine frame and the stack (a store-forwarding stall per copy).
inline Step send_step(int peer, BufferRange src) {
  Step step;
  step.kind = StepKind::send;
  step.peer = peer;
  step.src = src;
  step.bytes = src.bytes;
  return step;
}

inline Step recv_step(int peer, BufferRange dst) {
  Step step;
  step.kind = StepKind::recv;
  step.peer = peer;
  step.dst = dst;
  step.bytes = dst.bytes;
  return step;
}

inline Step recv_reduce_step(int peer, BufferRange src, BufferRange dst) {
  Step step;
  step.kind = StepKind::recv_reduce;
  step.peer = peer;
  step.src = src;
  step.dst = dst;
  step.bytes = dst.bytes;
  return step;
}

inline Step copy_step(BufferRange src, BufferRange dst) {
  Step step;
  step.kind = StepKind::copy;
  step.src = src;
  step.dst = dst;
  step.bytes = dst.bytes;
  return step;
}

inline Step scale_step(BufferRange range, double factor) {
  Step step;
  step.kind = StepKind::scale;
  step.src = range;
  step.dst = range;
  step.bytes = range.bytes;
  step.param = factor;
  return step;
}

// What a one-rank call does on this channel: copy its share of the input to the output.
inline Step own_share_copy(const Shape& s) {
  const ElementRange share = s.channel_share(s.all());
  return copy_step(s.at(Buffer::input, share), s.at(Buffer::output, share));
}

// Numbers the steps of one (rank, channel) program as they are emitted, and stamps the channel
// and the deps on each:  co_yield prog.emit(send_step(...), last_recv);  then prog.last().
// (Deps are plain parameters, not an initializer_list: g++ 12 cannot keep the list's array alive
// across a co_yield, "array used as initializer".)
class Program {
public:
  explicit Program(int channel) : channel_(channel) {}
  // kNoStep and repeated deps are dropped.
  // Stamps the step in place and hands the same object on: g++ gives every temporary of a
  // co_yield its own slot in the coroutine frame, so returning a copy would add a 120-byte
  // frame slot, and its cache misses, to every call site.
  // Inline, so that the deps a call site never passes (kNoStep defaults) cost nothing: emit
  // runs once per step, in the executors' inner loops.
  Step&& emit(Step&& step, std::uint32_t dep0 = kNoStep, std::uint32_t dep1 = kNoStep,
              std::uint32_t dep2 = kNoStep, std::uint32_t dep3 = kNoStep) {
    step.channel = static_cast<std::uint16_t>(channel_);
    step.dep_count = 0;
    step.deps = {};
    add_dep(step, dep0);
    add_dep(step, dep1);
    add_dep(step, dep2);
    add_dep(step, dep3);
    ++next_;
    return std::move(step);
  }
  std::uint32_t last() const { return next_ - 1; }

private:
  static void add_dep(Step& step, std::uint32_t dep) {
    if (dep == kNoStep) return;
    for (std::uint8_t i = 0; i < step.dep_count; ++i)
      if (step.deps[i] == dep) return;
    step.deps[step.dep_count++] = dep;
  }

  int channel_;
  std::uint32_t next_ = 0;
};

// floor(log2(x)) and the largest power of two <= x, for x >= 1.
int log2_floor(int x);
int pow2_floor(int x);

// MPICH's fix-up for rank counts that are not a power of two (Thakur et al. 2005, sec. 4): with
// pow2 the largest power of two <= p and rem = p - pow2, ranks 0..2*rem-1 pair up as (2i, 2i+1);
// one of each pair hands its data to the other (the absorber) and sits out the power-of-two
// phase, in which new rank i stands for its pair (i < rem) or for rank i + rem. keep_odd says
// which of the pair stays (MPICH all-reduce keeps the odd one; reduce keeps the even one so that
// relative rank 0, the root, always stays).
struct Fold {
  int p, pow2, rem;
  bool keep_odd;
  Fold(int ranks, bool keep_odd_rank);
  bool leaves(int r) const { return r < 2 * rem && (r % 2 == 1) != keep_odd; }
  bool absorbs(int r) const { return r < 2 * rem && (r % 2 == 1) == keep_odd; }
  int newrank(int r) const { return r < 2 * rem ? r / 2 : r - rem; }
  int rank_of(int i) const { return i < rem ? 2 * i + (keep_odd ? 1 : 0) : i + rem; }
  // The ranks new rank i stands for: [first_rank(i), last_rank(i)].
  int first_rank(int i) const { return i < rem ? 2 * i : i + rem; }
  int last_rank(int i) const { return i < rem ? 2 * i + 1 : i + rem; }
};

// A generator with a fixed name, op and summary. Subclasses implement check() and program().
// The params a generator reads besides chunks and channels (check_common handles those).
enum ParamUse : unsigned {
  kUsesNone = 0,
  kUsesGroupSizes = 1,
  kUsesServers = 2, // servers and dedicated_servers
  kUsesDensity = 4,
  kUsesChunkBytes = 8,
};

class Generator : public Algorithm {
public:
  Generator(std::string_view name, Op op, std::string_view summary)
      : name_(name), op_(op), summary_(summary) {}
  std::string_view name() const override { return name_; }
  Op op() const override { return op_; }
  std::string_view summary() const override { return summary_; }

protected:
  // Throws InputError(where = "algorithm <name>", why).
  [[noreturn]] void reject(const std::string& why) const;
  // Rejects params.chunks / params.channels other than 1 when the generator does not use them,
  // and adasum unless it supports it.
  void check_common(const CollectiveCall& call, bool uses_chunks, bool uses_channels,
                    bool supports_adasum = false) const;
  // Rejects params the generator does not use (set to non-default values) and checks the
  // ranges of those it uses (density in (0, 1]).
  void check_params(const CollectiveCall& call, unsigned uses) const;

private:
  std::string_view name_;
  Op op_;
  std::string_view summary_;
};

} // namespace ddlsim::coll::gen
