// Fabric planning: the counts, port assignments and link rates of each fabric, and the checks
// that reject a spec before anything is built.
#include "fabric_common.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/topologies/spec_parser.hpp"

#include <algorithm>
#include <cmath>

namespace ddlsim::topo::detail {
namespace {

constexpr int kMaxLinksPerPair = 64;

std::string dims_text(const std::vector<int>& dims) {
  std::string text;
  for (std::size_t i = 0; i < dims.size(); ++i) text += (i ? "x" : "") + std::to_string(dims[i]);
  return text;
}

void check_fabric_size(long links, const std::string& where) {
  if (links > kMaxFabricLinks)
    throw InputError(where, "this fabric would have " + std::to_string(links) +
                                " switch-to-switch links, more than the " +
                                std::to_string(kMaxFabricLinks) + " ddlsim builds");
}

} // namespace

ClusterShape shape_of(const ClusterSpec& spec) {
  ClusterShape shape;
  for (const NodeGroup& group : spec.node_groups)
    for (int i = 0; i < group.count; ++i) {
      const int node = static_cast<int>(shape.nics_per_node.size());
      // The NIC ports build_node makes: one per device of the plugin (nic_devices).
      const NicDevices devices = nic_devices(group.spec);
      const double rate = devices.rails * group.spec.nic_bytes_per_second;
      shape.nics_per_node.push_back(devices.count);
      for (int n = 0; n < devices.count; ++n) {
        shape.nic_rates.push_back(rate);
        shape.nic_local.push_back(n);
        shape.nic_node.push_back(node);
        shape.fastest_nic = std::max(shape.fastest_nic, rate);
      }
    }
  return shape;
}

double default_link_rate(const FabricSpec& spec, const ClusterShape& shape) {
  if (spec.link_bytes_per_second > 0) return spec.link_bytes_per_second;
  return shape.fastest_nic > 0 ? shape.fastest_nic : gbps_to_bytes_per_second(100);
}

UplinkPlan plan_uplinks(const FabricSpec& spec, const ClusterShape& shape, double downlink,
                        int spines, const std::string& where) {
  UplinkPlan plan;
  const bool rate_given = spec.link_bytes_per_second > 0;
  const bool ratio_given = spec.oversubscription > 0;
  if (rate_given && ratio_given) {
    if (spec.links_per_pair > 0)
      throw InputError(where + "/links_per_pair",
                       "bandwidth_gbps and oversubscription together set the links per "
                       "leaf-spine pair; give at most two of the three");
    plan.rate = spec.link_bytes_per_second;
    const double needed = downlink / (spec.oversubscription * spines * plan.rate);
    const double links = std::max(1.0, std::ceil(needed - 1e-9));
    if (links > kMaxLinksPerPair)
      throw InputError(where + "/oversubscription",
                       "reaching this ratio with " + format_gbps(plan.rate) + " links needs " +
                           std::to_string(static_cast<long>(links)) +
                           " links per leaf-spine pair, more than " +
                           std::to_string(kMaxLinksPerPair) + "; raise bandwidth_gbps");
    plan.links_per_pair = static_cast<int>(links);
    return plan;
  }
  plan.links_per_pair = spec.links_per_pair > 0 ? spec.links_per_pair : 1;
  if (rate_given || downlink <= 0) {
    plan.rate = default_link_rate(spec, shape);
    return plan;
  }
  const double ratio = ratio_given ? spec.oversubscription : 1.0;
  plan.rate = downlink / (ratio * spines * plan.links_per_pair);
  return plan;
}

LeafSpinePlan plan_leaf_spine(const FabricSpec& spec, const ClusterShape& shape,
                              const std::string& where) {
  const long nics = static_cast<long>(shape.nic_rates.size());
  if (spec.spines < 1) throw InputError(where, "leaf_spine needs \"spines\" (at least 1)");
  if (spec.leaves <= 0 && spec.nics_per_leaf <= 0)
    throw InputError(where, "leaf_spine needs \"leaves\", \"nics_per_leaf\" or both");
  LeafSpinePlan plan;
  const long leaves = spec.leaves > 0
                          ? spec.leaves
                          : std::max(1L, (nics + spec.nics_per_leaf - 1) / spec.nics_per_leaf);
  if (leaves > kMaxSwitchesPerTier)
    throw InputError(where + "/nics_per_leaf", "this needs " + std::to_string(leaves) +
                                                   " leaves, more than " +
                                                   std::to_string(kMaxSwitchesPerTier));
  plan.leaves = static_cast<int>(leaves);
  if (spec.nics_per_leaf > 0 && leaves * spec.nics_per_leaf < nics)
    throw InputError(where + "/nics_per_leaf",
                     "too many NICs: the cluster has " + std::to_string(nics) + " NICs but " +
                         std::to_string(leaves) + " leaves of " +
                         std::to_string(spec.nics_per_leaf) + " NIC ports hold only " +
                         std::to_string(leaves * spec.nics_per_leaf));
  std::vector<double> downlink(static_cast<std::size_t>(plan.leaves), 0.0);
  plan.leaf_of_nic.resize(static_cast<std::size_t>(nics));
  for (long n = 0; n < nics; ++n) {
    const long leaf = spec.nics_per_leaf > 0 ? n / spec.nics_per_leaf : n * leaves / nics;
    plan.leaf_of_nic[static_cast<std::size_t>(n)] = static_cast<int>(leaf);
    downlink[static_cast<std::size_t>(leaf)] += shape.nic_rates[static_cast<std::size_t>(n)];
  }
  const double max_downlink = *std::max_element(downlink.begin(), downlink.end());
  plan.uplinks = plan_uplinks(spec, shape, max_downlink, spec.spines, where);
  check_fabric_size(leaves * spec.spines * plan.uplinks.links_per_pair, where);
  return plan;
}

RailPlan plan_rails(const FabricSpec& spec, const ClusterShape& shape, const std::string& where) {
  RailPlan plan;
  for (int nics : shape.nics_per_node) plan.rails = std::max(plan.rails, nics);
  if (spec.rail_spines <= 0) {
    if (spec.oversubscription > 0 || spec.links_per_pair > 0)
      throw InputError(where, "oversubscription and links_per_pair need rail_spines > 0 "
                              "(without spines the rails are isolated)");
    return plan;
  }
  std::vector<double> downlink(static_cast<std::size_t>(plan.rails), 0.0);
  for (std::size_t n = 0; n < shape.nic_rates.size(); ++n)
    downlink[static_cast<std::size_t>(shape.nic_local[n])] += shape.nic_rates[n];
  const double max_downlink =
      downlink.empty() ? 0.0 : *std::max_element(downlink.begin(), downlink.end());
  plan.uplinks = plan_uplinks(spec, shape, max_downlink, spec.rail_spines, where);
  check_fabric_size(static_cast<long>(plan.rails) * spec.rail_spines * plan.uplinks.links_per_pair,
                    where);
  return plan;
}

std::vector<int> torus_dims(const FabricSpec& spec, std::size_t nodes, const std::string& where) {
  const char* type = spec.type == FabricType::ring      ? "ring"
                     : spec.type == FabricType::torus2d ? "torus2d"
                                                        : "torus3d";
  const std::size_t rank = spec.type == FabricType::ring      ? 1
                           : spec.type == FabricType::torus2d ? 2
                                                              : 3;
  if (spec.type == FabricType::ring && spec.dims.empty()) return {static_cast<int>(nodes)};
  if (spec.dims.size() != rank)
    throw InputError(where + "/dims", std::string(type) + " needs " + std::to_string(rank) +
                                          " dimension" + (rank > 1 ? "s" : "") + ", found " +
                                          std::to_string(spec.dims.size()));
  long positions = 1;
  for (int d : spec.dims) {
    if (d < 1) throw InputError(where + "/dims", "every dimension must be at least 1");
    positions *= d;
    if (positions > kMaxTotalGpus) break;
  }
  if (positions != static_cast<long>(nodes))
    throw InputError(where + "/dims",
                     std::string(type) + " " + dims_text(spec.dims) + " has " +
                         std::to_string(positions) + " switch positions but the cluster has " +
                         std::to_string(nodes) +
                         " nodes; the product of dims must equal the number of nodes (one node "
                         "per switch)");
  return spec.dims;
}

void check_fabric(const ClusterSpec& spec, const ClusterShape& shape, const std::string& where) {
  const FabricSpec& fabric = spec.fabric;
  switch (fabric.type) {
  case FabricType::single_switch:
    return;
  case FabricType::leaf_spine:
    (void)plan_leaf_spine(fabric, shape, where);
    return;
  case FabricType::rail_optimized:
    (void)plan_rails(fabric, shape, where);
    return;
  case FabricType::torus2d:
  case FabricType::torus3d:
  case FabricType::ring:
    (void)torus_dims(fabric, shape.nics_per_node.size(), where);
    return;
  case FabricType::custom:
    check_custom_fabric(fabric, shape, where);
    return;
  case FabricType::fat_tree: {
    const int k = fabric.k;
    if (k < 2 || k > kMaxFatTreeK || k % 2 != 0)
      throw InputError(where + "/k", "a fat tree needs an even k from 2 to " +
                                         std::to_string(kMaxFatTreeK) + ", found " +
                                         std::to_string(k));
    const long ports = static_cast<long>(k) * k * k / 4;
    const long nics = static_cast<long>(shape.nic_rates.size());
    if (nics > ports) {
      int needed = k;
      while (static_cast<long>(needed) * needed * needed / 4 < nics) needed += 2;
      throw InputError(where + "/k", "too many NICs: a k=" + std::to_string(k) + " fat tree has " +
                                         std::to_string(ports) +
                                         " host ports but the cluster has " + std::to_string(nics) +
                                         " NICs; k=" + std::to_string(needed) + " would hold them");
    }
    return;
  }
  }
}

} // namespace ddlsim::topo::detail
