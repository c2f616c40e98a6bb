// all_reduce "torus2d": the 2D-torus all-reduce of Mikami et al. 2018 ("Massively distributed
// SGD: ImageNet/ResNet-50 training in a flash", arXiv:1811.05233): the ranks form a grid of rows
// of X ranks (a row is typically the GPUs of one node) and Y = p / X rows;
//   1. reduce-scatter along each row (ring of X): rank x of a row holds the row's sum of part x;
//   2. all-reduce along each column (ring of Y, reduce-scatter + all-gather) on that part;
//   3. all-gather along each row.
// params.group_sizes = {X, Y} with X·Y = ranks; row y holds ranks y·X .. y·X + X-1. Default when
// empty: X = ranks per node from call.node_of_rank (GPUs of one node form a row; nodes must be
// of equal size, else give group_sizes), Y = nodes.
//
// Cost: 2(X-1)α_row + 2n(X-1)/X·β_row + 2(Y-1)α_col + 2(n/X)(Y-1)/Y·β_col
//       + n(X-1)/X·γ + (n/X)(Y-1)/Y·γ.
// Only n/X bytes per rank cross the column (inter-node) links, against n for a flat ring, and
// the latency term is 2(X+Y-2)α instead of 2(p-1)α. The schedule is the two-level case of the
// staged rings of BlueConnect (phases.hpp). params.channels runs independent copies on slices
// of the buffer; chunks must be 1. avg scales each rank's part between steps 2a and 2b.
#include "phases.hpp"
#include "registry.hpp"

namespace ddlsim::coll::gen {

namespace {

class Torus2d final : public PhasedGenerator {
public:
  Torus2d()
      : PhasedGenerator("torus2d", Op::all_reduce,
                        "reduce-scatter along rows, all-reduce along columns, all-gather along "
                        "rows (group_sizes {row, columns}; default {ranks per node, nodes}); "
                        "2(X+Y-2)α + 2n(X-1)/X·β_row + 2(n/X)(Y-1)/Y·β_col; uses group_sizes, "
                        "channels (Mikami et al. 2018)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, false, true);
    check_params(call, kUsesGroupSizes);
    const std::vector<int> grid = groups(call);
    if (grid.size() != 2)
      reject("torus2d needs group_sizes {row size, number of rows}, two numbers, not " +
             std::to_string(grid.size()) + "; use blueconnect for deeper factorisations");
    check_groups(call, grid);
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return staged_ring_all_reduce(shape_of(call, rank, channel), checked_groups(call));
  }

private:
  // check(): validates the node layout of the default (O(p)).
  std::vector<int> groups(const CollectiveCall& call) const {
    return call.params.group_sizes.empty() ? default_groups(call, "grid") : call.params.group_sizes;
  }
};

} // namespace

const Algorithm& all_reduce_torus2d() {
  static const Torus2d algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
