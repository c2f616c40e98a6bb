#include "tree.hpp"

#include <algorithm>
#include <bit>

namespace ddlsim::coll::gen {

Btree btree(int p, int v) {
  Btree t;
  if (v == 0) {
    if (p > 1) t.child1 = int(std::bit_ceil(unsigned(p)) >> 1);
    return t;
  }
  const int bit = v & -v;
  t.parent = (v ^ bit) | (bit << 1);
  if (t.parent >= p) t.parent = v ^ bit;
  int low = bit >> 1;
  if (low == 0) return t;
  t.child0 = v - low;
  while (low > 0 && v + low >= p) low >>= 1;
  if (low > 0) t.child1 = v + low;
  return t;
}

int tree_depth(int p, int v) {
  int d = 0;
  for (; v != 0; ++d) v = btree(p, v).parent;
  return d;
}

// v's left subtree is always complete, so its height is log2 of v's lowest set bit.
int tree_height(int p, int v) {
  return v == 0 ? std::bit_width(std::bit_ceil(unsigned(p))) - 1 : std::countr_zero(unsigned(v));
}

int TreeLinks::children() const {
  return int(std::count_if(down.begin(), down.end(), [](int k) { return k >= 0; }));
}

StepStream pipelined_tree(Shape s, ElementRange slice, TreeLinks links) {
  Program prog(s.channel);
  const int C = s.chunks;
  const Place in{Buffer::input, 0, s.e}, out{Buffer::output, 0, s.e};
  auto slot = [&s](int k, ElementRange range) {
    return Place{Buffer::scratch, std::uint64_t(k) * s.n * s.e, s.e}.at(range);
  };
  const int parent = links.up, lag = links.lag;
  const std::array<int, 3> kids = links.down;
  const int children = links.children();
  const bool root = parent < 0;
  if (root && children == 0) { // one rank
    co_yield prog.emit(copy_step(in.at(slice), out.at(slice)));
    co_return;
  }
  // Steps per chunk of each phase, so that step indices of earlier chunks are arithmetic.
  const int extra = std::max(0, children - 1); // children received into scratch
  const int up_steps = children + extra + (root ? (s.avg() ? 1 : 0) : 1);
  const int down_steps = (root ? 0 : 1) + children;
  // The last step of chunk j's reduce: its send up, or at the root the finished chunk.
  auto reduce_end = [=](int j) {
    return std::uint32_t(j * up_steps + std::max(0, j - lag) * down_steps + up_steps - 1);
  };
  auto piece = [slice, C](int j) { return sub(slice, std::uint64_t(C), std::uint64_t(j)); };

  for (int i = 0; i < C + lag; ++i) {
    if (i < C) { // reduce chunk i toward the root
      const BufferRange mine = in.at(piece(i)), acc = out.at(piece(i));
      // The first child is added as it arrives; the others land in scratch slots at the same
      // time and are added locally.
      std::uint32_t last = kNoStep;
      std::array<std::uint32_t, 3> got{kNoStep, kNoStep, kNoStep};
      int received = 0;
      for (int child : kids) {
        if (child < 0) continue;
        if (received == 0)
          co_yield prog.emit(recv_reduce_step(child, mine, acc));
        else
          co_yield prog.emit(recv_step(child, slot(received - 1, piece(i))));
        got[std::size_t(received++)] = prog.last();
      }
      last = got[0];
      for (int k = 1; k < received; ++k) {
        co_yield prog.emit(reduce_step(slot(k - 1, piece(i)), acc), last, got[std::size_t(k)]);
        last = prog.last();
      }
      const bool have = received > 0;
      if (root && s.avg()) co_yield prog.emit(scale_step(acc, 1.0 / s.p), last);
      if (!root) co_yield prog.emit(send_step(parent, have ? acc : mine), last);
    }
    if (i >= lag) { // broadcast chunk j down
      const int j = i - lag;
      const BufferRange acc = out.at(piece(j));
      std::uint32_t ready = reduce_end(j);
      if (!root) {
        // Overwrites the output the send up read (a leaf sent its input: no wait).
        co_yield prog.emit(recv_step(parent, acc), children > 0 ? ready : kNoStep);
        ready = prog.last();
      }
      for (int child : kids)
        if (child >= 0) co_yield prog.emit(send_step(child, acc), ready);
    }
  }
}

} // namespace ddlsim::coll::gen
