// Where a job of a shared cluster runs: the cluster as placement sees it (nodes, the leaf
// switch each hangs off, which leaves are oversubscribed), the GPUs free now and the jobs
// running, and the placement policies. Each policy is a small class behind one interface, so a
// new one is one class and one line in make_placement.
//
// A policy returns the global ranks (Topology::gpus() indices) of the job's GPUs, in the order
// the job's ranks take them, or nothing when it cannot place the job now (the job waits).
#pragma once

#include "ddlsim/topologies/topology.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddlsim::jobs {

// The cluster as placement sees it, read from the built topology.
struct ClusterView {
  int gpus = 0;
  std::vector<int> node_of_gpu;  // per global rank
  std::vector<int> local_of_gpu; // index of the GPU in its node
  std::vector<int> first_gpu;    // per node: its first global rank (ranks are node-major)
  std::vector<int> gpus_of_node; // per node
  // Per node: the tier-0 network switches its NICs attach to (sorted); empty without NICs.
  std::vector<std::vector<int>> switches_of_node;
  std::vector<int> leaf_of_node; // the first of them, or -1: the group packing keeps together
  int leaves = 0;                // leaf ids are 0..leaves-1
  // Per leaf: its NIC-facing capacity exceeds its uplinks' (a job crossing it competes there).
  std::vector<char> oversubscribed;
  // Switches above the leaves that jobs on different leaves share whatever their leaves (a
  // third tier, or switches of no tier: tori, custom fabrics): then every job that crosses
  // leaves may meet every other one.
  bool shared_upper_fabric = false;
};
ClusterView view_of(const topo::Topology& topology);

// The cluster now: free GPUs and the placements of the running jobs.
struct ClusterState {
  const ClusterView* view = nullptr;
  std::vector<char> free; // per global rank
  std::vector<std::vector<int>> running;
  int free_count() const;
};

// The leaves a placement's traffic leaves its leaf through: empty when all its nodes hang off
// one leaf (its traffic stays under that leaf), else every leaf it touches.
std::vector<int> crossed_leaves(const ClusterView& view, const std::vector<int>& gpus);

class Placement {
public:
  virtual ~Placement() = default;
  virtual std::string_view name() const = 0;
  virtual std::optional<std::vector<int>> place(const ClusterState& state, int gpus) const = 0;
};

// packed: fewest leaves, then fewest nodes (best fit: the fullest leaf or node that holds it).
class PackedPlacement : public Placement {
public:
  std::string_view name() const override { return "packed"; }
  std::optional<std::vector<int>> place(const ClusterState& state, int gpus) const override;
};

// spread: one GPU per node in turn, nodes taken leaf by leaf in turn (most nodes and leaves).
class SpreadPlacement : public Placement {
public:
  std::string_view name() const override { return "spread"; }
  std::optional<std::vector<int>> place(const ClusterState& state, int gpus) const override;
};

// rail_aligned: the same local GPU indices on every node of the job (k of them, the largest
// divisor of the job's size a node holds, in an aligned block), so that the job's rank i of
// every node uses the same NIC rail; fewest leaves first. Waits rather than break alignment.
class RailAlignedPlacement : public Placement {
public:
  std::string_view name() const override { return "rail_aligned"; }
  std::optional<std::vector<int>> place(const ClusterState& state, int gpus) const override;
};

// network_aware: of the candidates (packed, rail-aligned, and packed over the leaves the fewest
// running jobs cross), the one that puts the fewest job flows on oversubscribed leaf uplinks:
// the sum over the oversubscribed leaves it crosses of 1 + the running jobs crossing them.
// Ties keep the earlier candidate (packed first), so it only leaves packing for a gain.
class NetworkAwarePlacement : public Placement {
public:
  std::string_view name() const override { return "network_aware"; }
  std::optional<std::vector<int>> place(const ClusterState& state, int gpus) const override;
};

// The policy of that name ("packed", "spread", "rail_aligned", "network_aware").
std::unique_ptr<Placement> make_placement(std::string_view name);

} // namespace ddlsim::jobs
