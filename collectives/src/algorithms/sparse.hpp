// Shared by the lossy generators (topk, hierarchical_topk, coarse_sparse): the checks of their
// parameters and the pieces of their expected_outputs, which recompute the defined
// approximation with the same selection rules (and, where the selection depends on sums, the
// same rounding) as the codecs of step.hpp.
#pragma once

#include "phases.hpp"

#include <span>
#include <vector>

namespace ddlsim::coll::gen {

class SparseGenerator : public PhasedGenerator {
public:
  using PhasedGenerator::PhasedGenerator;

protected:
  // Rejects dense ranges that a top-k pair's uint32 index cannot address.
  void check_pair_indices(std::uint64_t elements) const;
};

// The indices of the k elements of `values` with the largest magnitude, ties broken by the lower
// index (the order of Codec::topk and Codec::chunk_select), in ascending order.
std::vector<std::uint64_t> top_indices(std::span<const double> values, std::uint64_t k);
// Adds the k elements of `values` with the largest magnitude (ties: the lower index, as
// Codec::topk) into sum[offset + i].
void add_topk(std::span<const double> values, std::uint64_t k, std::vector<double>& sum,
              std::uint64_t offset);
// Divides by the rank count for avg.
void finish_average(const CollectiveCall& call, std::vector<double>& sum);
// The sum that ring_reduce_scatter leaves in part `part` of `range` among the ring of ranks
// first + i·stride (i < size), with the executor's rounding: the chain starts at member part+1
// and adds members part+2, ..., part (each addition done in float and stored in the dtype).
std::vector<double> ring_sum(const CollectiveCall& call,
                             const std::vector<std::vector<double>>& inputs, int first, int size,
                             int stride, ElementRange range, int part);

} // namespace ddlsim::coll::gen
