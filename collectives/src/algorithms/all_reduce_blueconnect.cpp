// all_reduce "blueconnect": the all-reduce decomposed along a factorisation of the ranks (Cho,
// Finkler, Kung & Hunter 2019, "BlueConnect: decomposing all-reduce for deep learning on
// heterogeneous network hierarchy", SysML 2019).
//
// params.group_sizes = {g0, g1, ..., gL-1}, innermost first, product = ranks (e.g. {4, 2, 24}:
// 4 GPUs behind a PCIe switch, 2 switches per server, 24 servers); ranks are numbered in mixed
// radix, rank = c0 + g0·(c1 + g1·(c2 + ...)), so group i joins the ranks that differ only in
// digit i. Reduce-scatter rings run from the innermost group outwards, each on the part the
// previous stage left (n, n/g0, n/(g0·g1), ...); then all-gather rings run back in reverse
// order. Each stage is a ring within its group, so each stage maps onto its own level of the
// fabric. Default when group_sizes is empty: {ranks per node, nodes} from call.node_of_rank
// (nodes of equal size; otherwise give group_sizes).
//
// Cost, with n_i = n / (g0·...·g{i-1}) the bytes entering stage i and α_i, β_i its link:
//   Σ_i 2(g_i - 1)α_i + 2·n_i(g_i - 1)/g_i·β_i + n_i(g_i - 1)/g_i·γ.
// The bytes crossing the outer (slow) levels shrink by the product of the inner group sizes,
// which is the whole point on a hierarchy. params.channels runs independent copies on slices of
// the buffer; no chunk pipelining (chunks must be 1). avg: the last part is scaled by 1/p
// before the all-gathers.
#include "phases.hpp"
#include "registry.hpp"

namespace ddlsim::coll::gen {

namespace {

class BlueConnect final : public PhasedGenerator {
public:
  BlueConnect()
      : PhasedGenerator("blueconnect", Op::all_reduce,
                        "reduce-scatter rings down a factorisation of the ranks (group_sizes, "
                        "innermost first; default {ranks per node, nodes}), all-gather rings back "
                        "up; Σ 2(g_i-1)α_i + 2n_i(g_i-1)/g_i·β_i; uses group_sizes, channels (Cho "
                        "et al. 2019)") {}
  void check(const CollectiveCall& call) const override {
    check_common(call, false, true);
    check_params(call, kUsesGroupSizes);
    check_groups(call, groups(call));
  }
  StepStream program(const CollectiveCall& call, int rank, int channel) const override {
    return staged_ring_all_reduce(shape_of(call, rank, channel), checked_groups(call));
  }

private:
  // check(): validates the node layout of the default (O(p)).
  std::vector<int> groups(const CollectiveCall& call) const {
    return call.params.group_sizes.empty() ? default_groups(call, "factorisation")
                                           : call.params.group_sizes;
  }
};

} // namespace

const Algorithm& all_reduce_blueconnect() {
  static const BlueConnect algorithm;
  return algorithm;
}

} // namespace ddlsim::coll::gen
