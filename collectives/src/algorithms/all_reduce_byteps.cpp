// all_reduce "byteps": BytePS's push/pull with summation servers co-located on every node (Jiang
// et al., "A Unified Architecture for Accelerating Distributed DNN Training in Heterogeneous
// GPU/CPU Clusters", OSDI 2020, §4: k = 0 CPU-only machines, one summation service per GPU
// machine; intra-machine: reduce inside the machine first, then push/pull, then broadcast inside
// the machine).
//
// Nodes come from call.node_of_rank and must have the same number L of GPUs (N nodes). On each
// channel's slice of the buffer:
//  1. node-local reduce: a ring reduce-scatter among the node's L GPUs leaves GPU j (its local
//     index) with part j of the node's sum (BytePS reduces over NVLink/PCIe before anything
//     leaves the machine, so only one copy of each byte crosses the NIC per node);
//  2. push/pull: part j is cut into N shards, shard k served by node k's summation service; GPU
//     j of node m pushes shard k to node k (k != m), node m's server sums the N-1 pushes of its
//     shard into its own one after another (the pushes of a round go to different servers, as
//     the parameter_server generator orders them), then sends the sum back to GPU j of every
//     other node (pull). The server of shard k of part j is reached through GPU j of node k, so
//     the parts a node serves spread over its GPUs' NICs as BytePS's servers spread over the
//     machine's NICs;
//  3. node-local broadcast: a ring all-gather among the node's GPUs.
// Bytes leaving a node: 2n(N-1)/N each way, as the hierarchical all-reduce and the bandwidth
// optimum of the paper's Theorem 1 at k = 0; a parameter server whose S servers are GPUs and
// whose every worker pushes through its node's NIC moves L·2n(S-1)/S per node instead.
// Cost ≈ 2(L-1)(α_i + n/L·β_i) + (L-1)n/L·γ + 2(N-1)(α_o + n/(LN)·β_o) + (N-1)n/(LN)·γ.
//
// Not modelled here: the summation on the server's CPU at its memory rate (it is charged at the
// engine's reduction rate), the copies between GPU and host memory, dedicated CPU-only server
// machines (k > 0), and BytePS's 4 MB partitions and their priority scheduling (the framework's
// job, not one all-reduce's). params.channels runs independent copies on slices of the buffer.
// avg: each server scales its shard.
#include "phases.hpp"
#include "registry.hpp"

namespace ddlsim::coll::gen {

namespace {

StepStream byteps(Shape s, int L) {
  Program prog(s.channel);
  Step step;
  const ElementRange slice = s.channel_share(s.all());
  const Place in{Buffer::input, 0, s.e}, out{Buffer::output, 0, s.e};
  if (s.p == 1) {
    co_yield prog.emit(copy_step(in.at(slice), out.at(slice)));
    co_return;
  }
  const int N = s.p / L, m = s.rank / L, j = s.rank % L;
  const Ring node_ring = strided_ring(s.rank, j, L, 1);
  std::uint32_t ready = kNoStep;
  Place own = in; // the data stays in the input until the node-local reduce
  if (L > 1) {
    for (StepStream phase = ring_reduce_scatter(prog, node_ring, slice, in, out, ready, ready);
         phase.next(step);)
      co_yield step;
    own = out;
  }
  const ElementRange part = sub(slice, std::uint64_t(L), std::uint64_t(j));
  auto shard = [&part, N](int k) { return sub(part, std::uint64_t(N), std::uint64_t(k)); };
  auto peer = [L, j](int k) { return k * L + j; };
  if (N > 1) {
    // Push: round i goes to node m+i, so in each round every server gets one push.
    std::uint32_t pushed = kNoStep;
    for (int i = 1; i < N; ++i) {
      co_yield prog.emit(send_step(peer((m + i) % N), own.at(shard((m + i) % N))), ready);
      pushed = prog.last();
    }
    // Serve shard m: in round i the push comes from node m-i.
    std::uint32_t served = ready;
    for (int i = 1; i < N; ++i) {
      const int from = floor_mod(m - i, N);
      const Place src = i == 1 ? own : out;
      co_yield prog.emit(recv_reduce_step(peer(from), src.at(shard(m)), out.at(shard(m))), served,
                         ready);
      served = prog.last();
    }
    if (s.avg()) {
      co_yield prog.emit(scale_step(out.at(shard(m)), 1.0 / s.p), served);
      served = prog.last();
    }
    for (int i = 1; i < N; ++i)
      co_yield prog.emit(send_step(peer((m + i) % N), out.at(shard(m))), served);
    // Pull the other shards into the output once their pushes have left it; one after another,
    // so that the last one done means the whole part is.
    std::uint32_t pulled = served;
    for (int i = 1; i < N; ++i) {
      co_yield prog.emit(recv_step(peer((m + i) % N), out.at(shard((m + i) % N))), pulled, pushed);
      pulled = prog.last();
    }
    ready = pulled;
  } else if (s.avg()) {
    co_yield prog.emit(scale_step(out.at(part), 1.0 / s.p), ready);
    ready = prog.last();
  }
  if (L > 1)
    for (StepStream phase = ring_all_gather(prog, node_ring, slice, out, ready, ready);
         phase.next(step);)
      co_yield step;
}

class BytePS final : public PhasedGenerator {
public:
  BytePS()
      : PhasedGenerator("byteps", Op::all_reduce,
                        "BytePS push/pull (k = 0): ring reduce-scatter in each node, push of each "
                        "GPU's part to summation servers on every node, pull, ring all-gather in "
                        "the node; ≈ 2(L-1)(α + n/L·β)_intra + 2(N-1)(α + n/(LN)·β)_inter, "
                        "2n(N-1)/N per node over the NIC; uses channels (Jiang et al. OSDI "
                        "2020)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, false, true);
    check_params(call, kUsesNone);
    check_node_layout(call);
    if (call.ranks > 1 && uniform_node_size(call) == 0)
      reject("every node must have the same number of GPUs (node_of_rank): BytePS's summation "
             "servers take one shard of every GPU's part; give each node the same GPU count");
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    const int L = call.ranks > 1 ? uniform_node_size(call) : 1;
    return byteps(shape_of(call, rank, channel), L);
  }
};

} // namespace

const Algorithm& all_reduce_byteps() {
  static const BytePS algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
