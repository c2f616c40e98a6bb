// all_reduce "hierarchical_topk": the hierarchical top-k all-reduce of Shi et al. 2021 ("Towards
// scalable distributed training of deep learning on public cloud clusters", MLSys 2021, the
// Tencent public-cloud paper, HiTopKComm): dense inside the node, sparse across nodes.
//   1. ring reduce-scatter inside the node (L GPUs): local rank l holds the node's sum of part l
//      of the buffer (partition(n, L, l));
//   2. l keeps the k_l = ceil(density·|part l|) largest-magnitude elements of that sum
//      (Codec::topk, ties by the lower index);
//   3. ring all-gather of the pairs across the N nodes among the ranks with the same local
//      index l, each set scatter-added into the zeroed part l of the output as it arrives;
//   4. ring all-gather of the parts inside the node.
// Nodes come from call.node_of_rank and must all have the same size (empty = one rank per
// node, which is the flat topk with a ring all-gather).
//
// The defined approximation (expected_outputs): part l of every rank's output is
// Σ_nodes topk(node sum of part l), where the node sum is the ring's sum with the executor's
// rounding (so the selection is reproduced exactly); avg divides by p.
//
// Cost, with w = k_l(4 + e) bytes of pairs, intra-node α_i, β_i, inter-node α_o, β_o:
//   2(L-1)α_i + 2n(L-1)/L·β_i + n(L-1)/L·γ + n/L·γ_c + (N-1)(α_o + w·β_o) + N·w·γ_c.
// All L ranks of a node exchange across nodes at once, so the node's NIC carries
// L·(N-1)·w ≈ density·n·(N-1)(4+e)/e bytes each way instead of the 2n(N-1)/N of a dense
// hierarchical ring. Scratch: N·w bytes. Uses params.density; chunks and channels must be 1.
#include "registry.hpp"
#include "sparse.hpp"

namespace ddlsim::coll::gen {

namespace {

StepStream hierarchical_topk(Shape s, NodeOf node, std::uint64_t k) {
  Program prog(s.channel);
  Step step;
  const int L = node.size, N = node.nodes, l = s.rank - node.first, m = node.node;
  const Place in{Buffer::input, 0, s.e}, out{Buffer::output, 0, s.e};
  const Place slots{Buffer::scratch, 0, k * (4 + s.e)}; // slot q: node q's pairs
  auto slot = [](int q) { return ElementRange{std::uint64_t(q), std::uint64_t(q) + 1}; };
  const ElementRange part = sub(s.all(), std::uint64_t(L), std::uint64_t(l));
  const BufferRange shard = out.at(part);

  // 1. dense reduce-scatter inside the node (a node of one rank keeps its input).
  const Ring inside = strided_ring(s.rank, l, L, 1);
  std::uint32_t reduced = kNoStep;
  for (StepStream phase = ring_reduce_scatter(prog, inside, s.all(), in, out, kNoStep, reduced);
       phase.next(step);)
    co_yield step;
  const BufferRange sum = L > 1 ? shard : in.at(part);
  // 2. top-k of the node's sum of part l, then zero part l and add the own pairs back.
  co_yield prog.emit(codec_step(StepKind::compress, Codec::topk, sum, slots.at(slot(m))), reduced);
  std::uint32_t have = prog.last();
  co_yield prog.emit(zero_step(sum, shard), have);
  co_yield prog.emit(codec_step(StepKind::decompress, Codec::topk, slots.at(slot(m)), shard),
                     prog.last(), have);
  std::uint32_t added = prog.last();
  // 3. sparse ring all-gather across nodes among the ranks with local index l.
  const Ring across = strided_ring(s.rank, m, N, L);
  for (int t = 0; t < N - 1; ++t) {
    co_yield prog.emit(send_step(across.right, slots.at(slot(across.mod(m - t)))), have);
    const int q = across.mod(m - t - 1);
    co_yield prog.emit(recv_step(across.left, slots.at(slot(q))));
    have = prog.last();
    co_yield prog.emit(codec_step(StepKind::decompress, Codec::topk, slots.at(slot(q)), shard),
                       have, added);
    added = prog.last();
  }
  if (s.avg()) {
    co_yield prog.emit(scale_step(shard, 1.0 / s.p), added);
    added = prog.last();
  }
  // 4. dense all-gather inside the node.
  for (StepStream phase = ring_all_gather(prog, inside, s.all(), out, added, added);
       phase.next(step);)
    co_yield step;
}

class HierarchicalTopK final : public SparseGenerator {
public:
  HierarchicalTopK()
      : SparseGenerator("hierarchical_topk", Op::all_reduce,
                        "lossy: dense ring reduce-scatter in the node, top k = ceil(density·n/L) "
                        "of each shard, sparse ring all-gather across nodes, dense all-gather in "
                        "the node (equal nodes); 2(L-1)α_i + 2n(L-1)/L·β_i + (N-1)(α_o + "
                        "k(4+e)β_o) + codec; uses density (Shi et al. 2021)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, false, false);
    check_params(call, kUsesDensity);
    check_node_layout(call);
    if (uniform_node_size(call) == 0)
      reject("hierarchical_topk needs nodes of equal size (node_of_rank has nodes of different "
             "sizes); use equal nodes, or hierarchical / topk");
    check_pair_indices(call.elements() / std::uint64_t(node_of(call, 0).size) + 1);
  }
  std::uint64_t scratch_bytes(const CollectiveCall& call, int rank) const override {
    const NodeOf node = node_of(call, rank);
    return std::uint64_t(node.nodes) * k(call, node, rank) * (4 + element_size(call.dtype));
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    const NodeOf node = node_of(call, rank);
    return hierarchical_topk(shape_of(call, rank, channel), node, k(call, node, rank));
  }
  std::vector<std::vector<double>>
  expected_outputs(const CollectiveCall& call,
                   const std::vector<std::vector<double>>& inputs) const override {
    const NodeOf first = node_of(call, 0);
    const int L = first.size, N = first.nodes;
    const ElementRange all{0, call.elements()};
    std::vector<double> sum(call.elements(), 0.0);
    for (int l = 0; l < L; ++l) {
      const ElementRange part = sub(all, std::uint64_t(L), std::uint64_t(l));
      const std::uint64_t k = topk_count(call.params.density, part.size());
      for (int m = 0; m < N; ++m)
        add_topk(ring_sum(call, inputs, m * L, L, 1, all, l), k, sum, part.begin);
    }
    finish_average(call, sum);
    return std::vector<std::vector<double>>(std::size_t(call.ranks), sum);
  }

private:
  static std::uint64_t k(const CollectiveCall& call, const NodeOf& node, int rank) {
    const ElementRange part =
        partition(call.elements(), std::uint64_t(node.size), std::uint64_t(rank - node.first));
    return topk_count(call.params.density, part.size());
  }
};

} // namespace

const Algorithm& all_reduce_hierarchical_topk() {
  static const HierarchicalTopK algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
