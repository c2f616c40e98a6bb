// The pipelined binary-tree all-reduce shared by `double_binary_tree` and `nccl_tree`: NCCL's
// binary tree over virtual ranks (src/graph/trees.cc, ncclGetBtree), its depth and subtree
// heights, and the program of one rank on one tree, reducing a slice up and broadcasting it
// back down, pipelined in chunks. The generators differ only in which ranks they link (which
// tree, which GPU heads a node, the chain inside the node) and which slice a channel carries.
#pragma once

#include "phases.hpp"

#include <array>

namespace ddlsim::coll::gen {

// NCCL's binary tree on virtual ranks 0..p-1 (ncclGetBtree): node v's parent and children found
// from its lowest set bit, root 0 with a single child; -1 where there is none.
struct Btree {
  int parent = -1, child0 = -1, child1 = -1;
};
Btree btree(int p, int v);
// Hops from v up to the root 0.
int tree_depth(int p, int v);
// Height of v's subtree (hops down to its deepest leaf); tree_height(p, 0) is the tree's.
int tree_height(int p, int v);

// A rank's neighbours in one tree: where its partial sums go (-1 at the root), the ranks it
// reduces from and broadcasts to (its chain successor, then its child nodes' heads; -1 where
// none), and `lag`: how many chunks after reducing chunk j up it issues the broadcast of chunk
// j (about the hops a chunk takes from this rank to the root and back, less the hops it waited
// for from below), so that in-order issue never holds the upward stream behind a broadcast.
struct TreeLinks {
  int up = -1;
  std::array<int, 3> down{-1, -1, -1}; // an array: an initializer_list cannot cross co_yield
  int lag = 0;
  int children() const;
};

// The program of one rank on one tree over `slice` (elements) of the buffers, pipelined in
// s.chunks chunks: a rank receives chunk j from all the ranks below it at once (the first is
// receive-reduced into the output, the others land in scratch slots, indexed like the buffer,
// one per child beyond the first, and are added locally, as NCCL receives into per-peer
// buffers), sends the sum up, and later receives the final chunk j and sends it down; the root
// (avg: after scaling by 1/p) sends it straight down. One rank alone copies its slice.
StepStream pipelined_tree(Shape s, ElementRange slice, TreeLinks links);

} // namespace ddlsim::coll::gen
