// What a call's protocol (coll::Protocol: NCCL's LL, LL128 or Simple) adds to the cost of its
// transfers: the rules every engine charges, written once (docs/engines.md#protocols).
//
//  - Wire bytes: a transfer of b payload bytes puts ceil(b / payload_efficiency) bytes on the
//    wire (LL: a 4-byte flag with every 4 bytes of data, so twice the bytes; LL128: 128 per 120).
//    The bandwidth term, the fluid flows and the packets all carry wire bytes; the reports'
//    bytes_sent stays the schedule's payload. A switch step (NVLS's multimem traffic) puts
//    ceil(b / (payload_efficiency * switch_efficiency)) on its links: NCCL rates multimem
//    traffic at nvlsEfficiency of the unicast NVLink rate (coll::Protocol).
//  - Hop latency: a transfer's latency is max(hop, path latency), hop = intra_hop_ps (its path
//    stays inside a node) or inter_hop_ps (its path crosses the network: it has a NIC link), so
//    an engine that already charges the path's latency waits max(0, hop - path latency) more,
//    where the per-step overhead is charged. NCCL's per-hop latencies (src/graph/tuning.cc,
//    hwLatencies) are the whole time of one step over that hardware, the link's flight time
//    included: adding them on top of the path would count the wire twice.
//  - Reduction in flight: a recv_reduce reduces the data as it arrives (NCCL's kernels reduce
//    each slice while the next one is on the wire, src/device/prims_*.h), so it ends at
//    max(arrival, first byte + reduce time) instead of arrival + reduce time; the reduce time is
//    the engine's own (the GPU's reduction rate).
//  - Network post (ProxyPosts): a transfer whose path crosses the network first occupies its
//    sending rank's proxy thread for net_post_ps; a rank's proxy posts one step at a time, in
//    the order the steps become ready, over all its channels, and the transfer's latency starts
//    when its post ends. NCCL's proxy thread (one per GPU, src/proxy.cc progressOps, NCCL 2.30)
//    round-robins over every network connection of the GPU and posts each step
//    (src/transport/net.cc, sendProxyProgress: isend per step); NCCL's model charges one net
//    overhead per step (src/graph/tuning.cc, getNetOverhead). Only the send side is charged:
//    NCCL's model has one figure per step, and the receiver's irecv is posted ahead of the data
//    (recvProxyProgress posts up to NCCL_STEPS receives before their sends arrive).
//  - Network flush (ProxyPosts::flush): where the GPU needs a GPUDirect RDMA flush
//    (net_flush_ps > 0), a transfer whose path crosses the network is handed to its receiver
//    only once the receiving rank's proxy has flushed it: the flush queues on that proxy, with its
//    posts, at the transfer's arrival and takes net_flush_ps; the receive (and a recv_reduce's
//    reduction) counts from its end, and the send completes with it (rule 3 of step.hpp). NCCL's
//    proxy flushes every received Simple step before it hands it to the GPU
//    (src/transport/net.cc, recvProxyProgress).
// The default Protocol{} adds nothing: efficiency 1 keeps the byte count exact (no floating
// point), zero hop latencies, reduction after arrival.
#pragma once

#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/core/units.hpp"
#include "ddlsim/topologies/router.hpp"
#include "ddlsim/topologies/topology.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddlsim::sim {

// When a recv_reduce ends whose bytes all arrived at `arrival`, the first of them at
// `bytes_start`, and whose reduction takes `reduce_time`: after the arrival, or overlapped with it
// (in flight). A plain receive has reduce_time 0 and ends at its arrival either way.
inline Picoseconds receive_end(Picoseconds arrival, Picoseconds bytes_start,
                               Picoseconds reduce_time, bool reduce_in_flight) {
  return reduce_in_flight ? std::max(arrival, bytes_start + reduce_time) : arrival + reduce_time;
}

struct ProtocolCost {
  double payload_efficiency = 1.0;
  double switch_efficiency = 1.0;
  Picoseconds intra_hop = 0;
  Picoseconds inter_hop = 0;
  Picoseconds net_post = 0;
  Picoseconds net_flush = 0;
  bool reduce_in_flight = false;

  bool operator==(const ProtocolCost&) const = default;
  explicit ProtocolCost(const coll::Protocol& protocol = {})
      : payload_efficiency(protocol.payload_efficiency),
        switch_efficiency(protocol.switch_efficiency), intra_hop(protocol.intra_hop_ps),
        inter_hop(protocol.inter_hop_ps), net_post(protocol.net_post_ps),
        net_flush(protocol.net_flush_ps), reduce_in_flight(protocol.reduce_in_flight) {}
  // Whether a transfer that crosses the network waits for its receiver's flush (ProxyPosts).
  bool flushes(bool crosses_network) const { return net_flush > 0 && crosses_network; }

  // The bytes a transfer of `bytes` payload puts on the wire.
  std::uint64_t wire_bytes(std::uint64_t bytes) const {
    if (payload_efficiency == 1.0) return bytes;
    return static_cast<std::uint64_t>(std::ceil(static_cast<double>(bytes) / payload_efficiency));
  }
  // The bytes a switch step (switch_reduce, switch_multicast) of `bytes` payload puts on its
  // links.
  std::uint64_t switch_wire_bytes(std::uint64_t bytes) const {
    const double efficiency = payload_efficiency * switch_efficiency;
    if (efficiency == 1.0) return bytes;
    return static_cast<std::uint64_t>(std::ceil(static_cast<double>(bytes) / efficiency));
  }
  // The protocol's latency of one hop, by where its path goes.
  Picoseconds hop_latency(bool crosses_network) const {
    return crosses_network ? inter_hop : intra_hop;
  }
  // What a transfer waits on top of its path's latency: the hop covers the path's own flight
  // time, so a transfer takes max(hop, path) in all.
  Picoseconds latency_beyond_path(bool crosses_network, Picoseconds path_latency) const {
    return std::max<Picoseconds>(0, hop_latency(crosses_network) - path_latency);
  }
  // sim::receive_end under this protocol.
  Picoseconds receive_end(Picoseconds arrival, Picoseconds bytes_start,
                          Picoseconds reduce_time) const {
    return sim::receive_end(arrival, bytes_start, reduce_time, reduce_in_flight);
  }
};

// Each rank's proxy thread, which posts the network steps of all its channels one at a time
// (the network post rule at the top). Engines call post() in time order, when a transfer is ready
// to start: it returns when the transfer's latency may start.
class ProxyPosts {
public:
  explicit ProxyPosts(std::size_t ranks = 0) : free_at_(ranks, 0) {}

  // A transfer of `sender` (< the ranks given) ready at `now` under `cost`: `now` if it does not
  // cross the network or its protocol has no post cost, else the end of its post, which waits
  // for the proxy.
  Picoseconds post(std::size_t sender, Picoseconds now, const ProtocolCost& cost,
                   bool crosses_network) {
    if (cost.net_post == 0 || !crosses_network) return now;
    Picoseconds& free_at = free_at_[sender];
    free_at = std::max(now, free_at) + cost.net_post;
    return free_at;
  }
  // A transfer to `receiver` that arrived at `now` and needs a flush of `flush_time` (> 0,
  // ProtocolCost::flushes): when the receiver's proxy has flushed it (the flush queues with that
  // proxy's posts).
  Picoseconds flush(std::size_t receiver, Picoseconds now, Picoseconds flush_time) {
    Picoseconds& free_at = free_at_[receiver];
    free_at = std::max(now, free_at) + flush_time;
    return free_at;
  }

private:
  std::vector<Picoseconds> free_at_; // by rank: when its proxy finishes the posts queued so far
};

// Whether any protocol of the schedule charges a network post or flush (ProxyPosts).
inline bool has_net_post(const std::vector<ProtocolCost>& costs) {
  return std::any_of(costs.begin(), costs.end(), [](const ProtocolCost& cost) {
    return cost.net_post != 0 || cost.net_flush != 0;
  });
}

// The costs of a schedule's protocols, indexed like Schedule::protocols() (Step::protocol).
inline std::vector<ProtocolCost> protocol_costs(const coll::Schedule& schedule) {
  std::vector<ProtocolCost> costs;
  for (const coll::Protocol& protocol : schedule.protocols()) costs.emplace_back(protocol);
  if (costs.empty()) costs.emplace_back();
  return costs;
}

// The cost of the protocol a step names; throws std::logic_error for an index the schedule lacks
// (a malformed composite: validate() and the step runner reject it in dumps and generators).
inline const ProtocolCost& protocol_cost(const std::vector<ProtocolCost>& costs,
                                         std::uint8_t index) {
  if (index >= costs.size())
    throw std::logic_error("a step names protocol " + std::to_string(index) +
                           " but the schedule has " + std::to_string(costs.size()));
  return costs[index];
}

// Whether a transfer over `path` crosses the network (one of its links is a NIC's).
inline bool crosses_network(const topo::Topology& topology, const topo::Path& path) {
  return std::any_of(path.begin(), path.end(), [&topology](topo::LinkId link) {
    return topology.link(link).link_class == topo::LinkClass::nic;
  });
}

// The sum of the latencies of `path`'s links (what ProtocolCost::latency_beyond_path compares).
inline Picoseconds path_latency(const topo::Topology& topology, const topo::Path& path) {
  Picoseconds sum = 0;
  for (topo::LinkId link : path) sum += topology.link(link).latency;
  return sum;
}

} // namespace ddlsim::sim
