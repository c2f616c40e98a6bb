#include "nvls.hpp"

#include "phases.hpp"

#include <vector>

namespace ddlsim::coll::gen {

StepStream nvls_all_reduce(Shape s, int L, int N) {
  Program prog(s.channel);
  const int node = s.rank / L, local = s.rank % L, first = node * L;
  const Ring ring = strided_ring(s.rank, node, N, L);
  const ElementRange slice = s.channel_share(s.all());
  const auto chunks = std::uint64_t(s.chunks), shards = std::uint64_t(L);
  const Place in{Buffer::input, 0, s.e}, out{Buffer::output, 0, s.e};
  auto shard = [&](int j, int i) {
    return sub(sub(slice, chunks, std::uint64_t(j)), shards, std::uint64_t(i));
  };
  // The latest reduce of each owner's shard: the next chunk's reduce of that shard waits for it,
  // so that one chunk per shard is in the switch at a time (NCCL's NVLS buffer slots) and the
  // reduce of chunk j+1 overlaps the rest of chunk j.
  std::vector<std::uint32_t> reduced(std::size_t(L), kNoStep);
  Step step;
  for (int j = 0; j <= s.chunks; ++j) {
    const std::uint32_t own_reduced = reduced[std::size_t(local)]; // chunk j-1's
    if (j < s.chunks)
      for (int i = 0; i < L; ++i) {
        const ElementRange r = shard(j, i);
        if (r.size() == 0) continue; // every rank skips it alike
        if (L == 1)
          step = copy_step(in.at(r), out.at(r));
        else
          step = switch_reduce_step(first + i, in.at(r), i == local ? out.at(r) : BufferRange{}, L);
        co_yield prog.emit(std::move(step), reduced[std::size_t(i)]);
        reduced[std::size_t(i)] = prog.last();
      }
    if (j == 0) continue;
    const int k = j - 1; // finish chunk k: ring across nodes, then multicast in the node
    for (int i = 0; i < L; ++i) {
      const ElementRange r = shard(k, i);
      if (r.size() == 0) continue;
      if (i != local) {
        step = switch_multicast_step(first + i, {}, out.at(r), r.size() * s.e, L);
        co_yield prog.emit(std::move(step));
        continue;
      }
      std::uint32_t ready = own_reduced;
      for (StepStream phase = ring_reduce_scatter(prog, ring, r, out, out, ready, ready);
           phase.next(step);)
        co_yield step;
      if (s.avg()) { // the part this rank finished, before it is shared
        step = scale_step(out.at(sub(r, std::uint64_t(N), std::uint64_t(ring.pos))), 1.0 / s.p);
        co_yield prog.emit(std::move(step), ready);
        ready = prog.last();
      }
      for (StepStream phase = ring_all_gather(prog, ring, r, out, ready, ready); phase.next(step);)
        co_yield step;
      if (L > 1) {
        step = switch_multicast_step(s.rank, out.at(r), {}, r.size() * s.e, L);
        co_yield prog.emit(std::move(step), ready);
      }
    }
  }
}

} // namespace ddlsim::coll::gen
