// The generators, one function per file of this folder; registry.cpp lists them in the order
// `ddlsim schedule --list` shows them. Add a new generator here and in registry.cpp.
#pragma once

#include "ddlsim/collectives/algorithm.hpp"

namespace ddlsim::coll::gen {

const Algorithm& all_reduce_ring();
const Algorithm& all_reduce_nccl_ring();
const Algorithm& all_reduce_recursive_doubling();
const Algorithm& all_reduce_rabenseifner();
const Algorithm& all_reduce_double_binary_tree();
const Algorithm& all_reduce_nccl_tree();
const Algorithm& all_reduce_torus2d();
const Algorithm& all_reduce_hierarchical();
const Algorithm& all_reduce_blueconnect();
const Algorithm& all_reduce_parameter_server();
const Algorithm& all_reduce_byteps();
const Algorithm& all_reduce_topk();
const Algorithm& all_reduce_hierarchical_topk();
const Algorithm& all_reduce_coarse_sparse();
const Algorithm& all_reduce_nvls();
const Algorithm& all_reduce_nvls_tree();
const Algorithm& reduce_scatter_ring();
const Algorithm& reduce_scatter_nccl_ring();
const Algorithm& reduce_scatter_recursive_halving();
const Algorithm& reduce_scatter_pairwise();
const Algorithm& reduce_scatter_nvls();
const Algorithm& all_gather_ring();
const Algorithm& all_gather_nccl_ring();
const Algorithm& all_gather_recursive_doubling();
const Algorithm& all_gather_bruck();
const Algorithm& all_gather_nvls();
const Algorithm& broadcast_binomial();
const Algorithm& broadcast_scatter_allgather();
const Algorithm& broadcast_pipelined_chain();
const Algorithm& reduce_binomial();
const Algorithm& reduce_rabenseifner();
const Algorithm& all_to_all_pairwise();
const Algorithm& all_to_all_direct();
const Algorithm& send_recv_direct();

} // namespace ddlsim::coll::gen
