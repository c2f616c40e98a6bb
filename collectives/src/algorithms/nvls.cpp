#include "nvls.hpp"

#include "phases.hpp"

#include <algorithm>
#include <vector>

namespace ddlsim::coll::gen {
namespace {

// The chunks of one shard in the switch at a time: nvls.hpp, kSwitchInFlight.
constexpr int kInFlight = kSwitchInFlight;

// One node (N = 1): the switch reduces run kInFlight chunks ahead of the multicasts.
StepStream nvls_all_reduce_node(Shape s, int L, int N) {
  Program prog(s.channel);
  const int node = s.rank / L, local = s.rank % L, first = node * L;
  const Ring ring = strided_ring(s.rank, node, N, L);
  const ElementRange slice = s.channel_share(s.all());
  const auto chunks = std::uint64_t(s.chunks), shards = std::uint64_t(L);
  const Place in{Buffer::input, 0, s.e}, out{Buffer::output, 0, s.e};
  auto shard = [&](int j, int i) {
    return sub(sub(slice, chunks, std::uint64_t(j)), shards, std::uint64_t(i));
  };
  // The reduces of each owner's shard in flight: the reduce of chunk j waits for that of chunk
  // j - kInFlight, so the switch's round trip for one chunk hides behind the transfer of the one
  // before, and the reduces run kInFlight - 1 chunks ahead of the rest (ring, multicast).
  std::vector<std::uint32_t> reduced(std::size_t(L) * kInFlight, kNoStep);
  auto slot = [&](int j, int i) -> std::uint32_t& {
    return reduced[std::size_t(j % kInFlight) * std::size_t(L) + std::size_t(i)];
  };
  Step step;
  for (int j = 0; j < s.chunks + kInFlight - 1; ++j) {
    if (j < s.chunks)
      for (int i = 0; i < L; ++i) {
        const ElementRange r = shard(j, i);
        if (r.size() == 0) continue; // every rank skips it alike
        if (L == 1)
          step = copy_step(in.at(r), out.at(r));
        else
          step = switch_reduce_step(first + i, in.at(r), i == local ? out.at(r) : BufferRange{}, L);
        co_yield prog.emit(std::move(step), slot(j, i));
        slot(j, i) = prog.last();
      }
    const int k = j - (kInFlight - 1); // finish chunk k: ring across nodes, then multicast
    if (k < 0) continue;
    const std::uint32_t own_reduced = slot(k, local);
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

} // namespace

StepStream nvls_all_reduce(Shape s, int L, int N) {
  return nvls_all_reduce_node(s, L, N);
}

} // namespace ddlsim::coll::gen
