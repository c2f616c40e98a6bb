// The registry of generators: a fixed list (not self-registration at static-initialisation time,
// which a static library silently drops when nothing references the object file).
#include "ddlsim/collectives/algorithm.hpp"

#include "algorithms/registry.hpp"

#include <array>

namespace ddlsim::coll {

namespace {

const auto& registry() {
  static const std::array list{
      &gen::all_reduce_ring(),
      &gen::all_reduce_nccl_ring(),
      &gen::all_reduce_recursive_doubling(),
      &gen::all_reduce_rabenseifner(),
      &gen::all_reduce_double_binary_tree(),
      &gen::all_reduce_nccl_tree(),
      &gen::all_reduce_torus2d(),
      &gen::all_reduce_hierarchical(),
      &gen::all_reduce_blueconnect(),
      &gen::all_reduce_parameter_server(),
      &gen::all_reduce_byteps(),
      &gen::all_reduce_topk(),
      &gen::all_reduce_hierarchical_topk(),
      &gen::all_reduce_coarse_sparse(),
      &gen::all_reduce_nvls(),
      &gen::all_reduce_nvls_tree(),
      &gen::reduce_scatter_ring(),
      &gen::reduce_scatter_nccl_ring(),
      &gen::reduce_scatter_recursive_halving(),
      &gen::reduce_scatter_pairwise(),
      &gen::reduce_scatter_nvls(),
      &gen::all_gather_ring(),
      &gen::all_gather_nccl_ring(),
      &gen::all_gather_recursive_doubling(),
      &gen::all_gather_bruck(),
      &gen::all_gather_nvls(),
      &gen::broadcast_binomial(),
      &gen::broadcast_scatter_allgather(),
      &gen::broadcast_pipelined_chain(),
      &gen::reduce_binomial(),
      &gen::reduce_rabenseifner(),
      &gen::all_to_all_pairwise(),
      &gen::all_to_all_direct(),
      &gen::send_recv_direct(),
  };
  return list;
}

} // namespace

const Algorithm* find_algorithm(Op op, std::string_view name) {
  for (const Algorithm* a : registry())
    if (a->op() == op && a->name() == name) return a;
  return nullptr;
}

std::vector<const Algorithm*> algorithms_for(Op op) {
  std::vector<const Algorithm*> out;
  for (const Algorithm* a : registry())
    if (a->op() == op) out.push_back(a);
  return out;
}

std::vector<const Algorithm*> all_algorithms() {
  return {registry().begin(), registry().end()};
}

} // namespace ddlsim::coll
