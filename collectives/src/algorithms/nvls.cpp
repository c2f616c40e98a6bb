#include "nvls.hpp"

#include "phases.hpp"

#include <algorithm>
#include <vector>

namespace ddlsim::coll::gen {
namespace {

// Chunks of one shard in the switch at a time. Two: enough that a chunk's round trip to the
// switch (the latency of its group) overlaps the transfer of the chunk before. NCCL keeps up to
// NCCL_STEPS = 8 slots per connection (src/include/device.h, 2.30.7), but they drain in order;
// eight fair-shared flows would instead finish together, delaying the first multicast by eight
// chunks.
constexpr int kInFlight = 2;

// Chunks each stage of the multi-node pipeline works on at once: NCCL_STEPS, the slots of one
// connection (src/include/device.h, NCCL 2.30.7). NCCL's NVLS-Tree kernel
// (src/device/all_reduce.h, RunWorkColl<..., NCCL_ALGO_NVLS_TREE, NCCL_PROTO_SIMPLE>) runs its
// scatter, gather, reduce-and-send-up and receive-and-broadcast parts in separate warp groups,
// each looping over the chunks and handing them on through such slots, so a stage runs up to
// NCCL_STEPS chunks ahead of the next instead of waiting for each chunk's round trip.
constexpr int kStageWindow = 8;

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

// The first chunk of each block of the multi-node pipeline, then the chunk count. Blocks grow
// 1, 2, 4, ... up to kStageWindow from the front and shrink likewise towards the back, so that
// the pipeline fills and drains chunk by chunk (as NCCL's stages hand on single chunks) while
// the full blocks in the middle keep kStageWindow chunks of each stage in flight.
std::vector<int> stage_blocks(int chunks) {
  std::vector<int> front, back;
  int left = chunks;
  for (int size = 1; left > 0; size = std::min(2 * size, kStageWindow)) {
    front.push_back(std::min(size, left));
    left -= front.back();
    if (left == 0) break;
    back.push_back(std::min(size, left));
    left -= back.back();
  }
  std::vector<int> starts{0};
  for (int size : front) starts.push_back(starts.back() + size);
  for (auto it = back.rbegin(); it != back.rend(); ++it) starts.push_back(starts.back() + *it);
  return starts;
}

// Several nodes: a software pipeline of 2N stages over blocks of chunks (stage_blocks). Stage 0 is
// the switch reduce of every shard of the block's chunks (a copy for L = 1); stages 1..N-1 the
// N-1 reduce-scatter steps and stages N..2N-2 the N-1 all-gather steps of the ring of this
// rank's shard across the nodes; stage 2N-1 the multicasts. In round k, stage t works on block
// k - t, so the stages of different blocks overlap (the in-node reduce of later chunks runs
// while earlier ones cross the nodes) and a ring step's latency is paid once per round for the
// whole block, not once per chunk: each send waits only for the receive of the same chunk one
// stage before, which the previous round started. A round posts, in order: the block's switch
// reduces (no waits), the ring's receives (oldest block first), its sends (same order, which is
// also the order the left neighbour sends in, rule 2 of step.hpp), then the multicasts.
StepStream nvls_all_reduce_nodes(Shape s, int L, int N) {
  Program prog(s.channel);
  const int node = s.rank / L, local = s.rank % L, first = node * L;
  const Ring ring = strided_ring(s.rank, node, N, L);
  const ElementRange slice = s.channel_share(s.all());
  const auto chunks = std::uint64_t(s.chunks), shards = std::uint64_t(L), parts = std::uint64_t(N);
  const Place out{Buffer::output, 0, s.e}, in{Buffer::input, 0, s.e};
  auto shard = [&](int j, int i) {
    return sub(sub(slice, chunks, std::uint64_t(j)), shards, std::uint64_t(i));
  };
  auto part = [&](int j, long long q) {
    return sub(shard(j, local), parts, std::uint64_t(ring.mod(q)));
  };
  // Per chunk: the step after which this rank's shard holds its node's sum (stage 0), the last
  // receive of the ring (what the next send of the chunk waits for), and the last reduce-scatter
  // send (an all-gather receive overwrites a part that send read; its completion means every
  // earlier send of the chunk to the same peer has been received too, as they match in order).
  // `posted` holds the receive a chunk's stage posted this round until its send (which waits for
  // the previous stage's) has been emitted.
  std::vector<std::uint32_t> own(chunks, kNoStep), last(chunks, kNoStep), sent(chunks, kNoStep),
      posted(chunks, kNoStep);
  const std::vector<int> starts = stage_blocks(s.chunks);
  const int blocks = int(starts.size()) - 1;
  // Stage 0: reduce; 1..N-1: reduce-scatter; N..2N-2: all-gather; 2N-1: multicast.
  const int stages = 2 * N;
  auto block_of = [&](int k, int t, int& begin, int& end) {
    const int b = k - t;
    if (b < 0 || b >= blocks) return false;
    begin = starts[std::size_t(b)];
    end = starts[std::size_t(b) + 1];
    return true;
  };
  int begin = 0, end = 0;
  Step step;
  for (int k = 0; k < blocks + stages - 1; ++k) {
    if (block_of(k, 0, begin, end))
      for (int j = begin; j < end; ++j)
        for (int i = 0; i < L; ++i) {
          const ElementRange r = shard(j, i);
          if (r.size() == 0) continue; // every rank skips it alike
          if (L == 1)
            step = copy_step(in.at(r), out.at(r));
          else
            step =
                switch_reduce_step(first + i, in.at(r), i == local ? out.at(r) : BufferRange{}, L);
          co_yield prog.emit(std::move(step));
          if (i == local) own[std::size_t(j)] = prog.last();
        }
    // The ring's receives, then its sends: stage t runs reduce-scatter step t - 1 (t < N) or
    // all-gather step t - N.
    for (int pass = 0; pass < 2; ++pass)
      for (int t = stages - 2; t >= 1; --t) {
        if (!block_of(k, t, begin, end)) continue;
        const bool scatter = t < N;
        const long long u = scatter ? t - 1 : t - N;
        for (int j = begin; j < end; ++j) {
          if (shard(j, local).size() == 0) continue;
          const auto c = std::size_t(j);
          if (pass == 0) {
            if (scatter) {
              const ElementRange r = part(j, ring.pos - u - 2);
              co_yield prog.emit(recv_reduce_step(ring.left, out.at(r), out.at(r)), own[c]);
            } else {
              co_yield prog.emit(recv_step(ring.left, out.at(part(j, ring.pos - u - 1))), sent[c]);
            }
            posted[c] = prog.last();
            continue;
          }
          if (!scatter && u == 0 && s.avg()) { // the part this rank finished, before it is shared
            co_yield prog.emit(scale_step(out.at(part(j, ring.pos)), 1.0 / s.p), last[c]);
            last[c] = prog.last();
          }
          const ElementRange r = part(j, scatter ? ring.pos - u - 1 : ring.pos - u);
          co_yield prog.emit(send_step(ring.right, out.at(r)),
                             u == 0 && scatter ? own[c] : last[c]);
          if (scatter && u == N - 2) sent[c] = prog.last();
          last[c] = posted[c];
        }
      }
    if (block_of(k, stages - 1, begin, end))
      for (int j = begin; j < end; ++j)
        for (int i = 0; i < L && L > 1; ++i) {
          const ElementRange r = shard(j, i);
          if (r.size() == 0) continue;
          if (i != local)
            step = switch_multicast_step(first + i, {}, out.at(r), r.size() * s.e, L);
          else
            step = switch_multicast_step(s.rank, out.at(r), {}, r.size() * s.e, L);
          co_yield prog.emit(std::move(step), i == local ? last[std::size_t(j)] : kNoStep);
        }
  }
}

} // namespace

StepStream nvls_all_reduce(Shape s, int L, int N) {
  return N > 1 ? nvls_all_reduce_nodes(s, L, N) : nvls_all_reduce_node(s, L, N);
}

} // namespace ddlsim::coll::gen
