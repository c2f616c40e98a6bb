// The SimGrid side of the flow engine, behind one small adapter: configuration, the platform
// built from our Topology, and the routing of every flow. SimGrid 4 changes the C++ platform
// API; only platform.cpp calls it.
//
// The platform is one netzone whose routes come from ddlsim's Router on demand, not SimGrid's
// zones: SimGrid's fat-tree and torus zones route by their own rules, and a full zone stores a
// route per pair of hosts (16,384^2 entries), so neither gives the per-flow ECMP paths the
// analytic and packet engines use. Each (rank, channel) program gets its own host, so that the
// route of a flow can depend on its channel; every directed link of the topology is one SimGrid
// link (the two directions of a full-duplex cable never share, like SPLITDUPLEX).
#pragma once

#include "ddlsim/core/units.hpp"
#include "ddlsim/sim/flow/flow_spec.hpp"
#include "ddlsim/topologies/router.hpp"
#include "ddlsim/topologies/topology.hpp"

#include <memory>
#include <string>

namespace simgrid::s4u {
class Host;
}

namespace ddlsim::sim::flow {

// Starts SimGrid in this process with the model and settings of `spec`; must come before the
// platform. `actors` sizes the actor stacks. Call once per process.
void start_simgrid(const FlowEngineSpec& spec, std::size_t actors);

class Platform {
public:
  // Hosts for `ranks` x `channels` programs; rank r is the GPU topology.gpus()[r]. The per-step
  // overhead is added to every route's latency (divided by the model's latency factor, so that
  // it stays the overhead asked for).
  Platform(const topo::Topology& topology, topo::Router& router, int ranks, int channels,
           std::uint64_t seed, Picoseconds per_step_overhead);
  ~Platform();
  Platform(const Platform&) = delete;
  Platform& operator=(const Platform&) = delete;

  simgrid::s4u::Host* host(int rank, int channel) const;
  // The first routing failure (a flow with no path), or "" when every flow had a route.
  const std::string& routing_error() const;

  // What a protocol's charges need of the route from (rank, channel) to (peer, channel): whether
  // it crosses the network (a NIC link), and the latency SimGrid charges a flow on it (the
  // model's latency factor applied, per-step overhead included), in seconds.
  struct RouteFacts {
    bool crosses_network = false;
    double latency_seconds = 0;
  };
  RouteFacts route_facts(int rank, int peer, int channel);
  // A flow that SimGrid routed (when its bytes started to move) has finished.
  void flow_finished(int rank, int peer, int channel);
  // Largest number of flows whose bytes moved over one link at once (latency phase included).
  std::size_t peak_flows_per_link() const;
  // Runs the simulation until no actor can go on.
  static void run();
  // Simulated time now, in picoseconds.
  static Picoseconds now();
  // SimGrid's clock (seconds), unrounded.
  static double clock();
  // How long `work` picoseconds of local work take on a host, in SimGrid's seconds: the time an
  // execution of that work would take (one flop per picosecond).
  static double work_seconds(Picoseconds work);

  class Zone;

private:
  Zone* zone_; // owned by SimGrid
};

} // namespace ddlsim::sim::flow
