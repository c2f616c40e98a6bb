#include "platform.hpp"

#include "ddlsim/core/sim_time.hpp"
#include "ddlsim/sim/protocol_cost.hpp"
#include "ddlsim/topologies/ecmp.hpp"

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <xbt/config.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace ddlsim::sim::flow {

namespace sg = simgrid::s4u;
namespace routing = simgrid::kernel::routing;
using LinkImpl = simgrid::kernel::resource::StandardLinkImpl;

// Hosts have this many cores and this speed (one flop is one picosecond of work). The programs
// time their local work themselves (flow_run.cpp); work_seconds() converts a duration the way an
// execution on such a host would take it.
constexpr int kCoresPerHost = 1024;
constexpr double kHostSpeed = 1e12;

void start_simgrid(const FlowEngineSpec& spec, std::size_t actors) {
  // Silence SimGrid before anything can log (configuration changes log at INFO).
  if (!spec.simgrid_log) xbt_log_control_set("root.thres:critical");
  int argc = 1;
  char name[] = "ddlsim-flow";
  char* argv[] = {name, nullptr};
  new sg::Engine(&argc, argv); // lives until the process exits
  sg::Engine::set_config(std::string("network/model:") +
                         (spec.network_model == NetworkModel::cm02 ? "CM02" : "LV08"));
  if (spec.tcp_gamma_bytes) sg::Engine::set_config("network/TCP-gamma", *spec.tcp_gamma_bytes);
  if (spec.crosstraffic) sg::Engine::set_config("network/crosstraffic", *spec.crosstraffic);
  sg::Engine::set_config("contexts/factory", std::string(to_string(spec.context_factory)));
  // Time resolution of the models: SimGrid's default (1 ns) drops latencies and durations
  // below a nanosecond; ddlsim counts picoseconds.
  sg::Engine::set_config("surf/precision", 1e-12);
  // Our actors keep their state on the heap; small stacks keep thousands of them cheap. Without
  // guard pages (below) SimGrid takes stacks from the heap with calloc, which touches them: at
  // 16,384 actors 256 KiB stacks made 2.5 GiB of the peak RSS, 64 KiB ones 1.4 GiB. The actors'
  // deepest calls (generators, SimGrid's simcalls, exceptions) fit in 32 KiB (checked).
  sg::Engine::set_config("contexts/stack-size", 64);
  // Guard pages cost two memory mappings per actor, and Linux allows ~65k mappings.
  if (actors > 16'000) sg::Engine::set_config("contexts/guard-size", 0);
}

// The netzone: every host (one per program) and link of the platform, routes from ddlsim's
// Router chosen per flow by the ECMP hash.
class Platform::Zone : public routing::NetZoneImpl {
public:
  Zone(const topo::Topology& topology, topo::Router& router, int ranks, int channels,
       std::uint64_t seed, Picoseconds per_step_overhead)
      : NetZoneImpl("ddlsim"), topology_(topology), router_(router), seed_(seed),
        channels_(channels), overhead_(per_step_overhead) {
    sg::NetZone* zone = get_iface();
    links_.reserve(topology.link_count());
    for (std::size_t id = 0; id < topology.link_count(); ++id) {
      const topo::Link& link = topology.link(static_cast<topo::LinkId>(id));
      sg::Link* created =
          zone->create_link("l" + std::to_string(id), link.bandwidth_bytes_per_second)
              ->set_latency(ps_to_seconds(link.latency))
              ->seal();
      links_.push_back(created->get_impl());
    }
    // SimGrid refuses a route with no link and no latency, so the messages between two programs
    // of one GPU (cross-program wake-ups, 0 bytes) cross a loopback link that costs nothing.
    for (int r = 0; r < ranks; ++r)
      loopbacks_.push_back(zone->create_link("loopback" + std::to_string(r), 1e18)
                               ->set_sharing_policy(sg::Link::SharingPolicy::FATPIPE)
                               ->seal()
                               ->get_impl());
    hosts_.reserve(static_cast<std::size_t>(ranks) * static_cast<std::size_t>(channels));
    for (int r = 0; r < ranks; ++r)
      for (int c = 0; c < channels; ++c) {
        const topo::Vertex& gpu = topology.vertex(topology.gpus()[static_cast<std::size_t>(r)]);
        sg::Host* host = zone->create_host(gpu.name + "#" + std::to_string(c), kHostSpeed)
                             ->set_core_count(kCoresPerHost)
                             ->seal();
        const std::size_t point = host->get_netpoint()->id();
        if (program_of_point_.size() <= point) program_of_point_.resize(point + 1, -1);
        program_of_point_[point] = static_cast<std::int32_t>(hosts_.size());
        hosts_.push_back(host);
      }
    route_cache_.resize(hosts_.size());
    flows_on_link_.assign(topology.link_count(), 0);
    counted_.assign(topology.link_count(), false);
    zone->seal();
  }

  sg::Host* host(int rank, int channel) const {
    return hosts_[static_cast<std::size_t>(rank * channels_ + channel)];
  }
  const std::string& routing_error() const { return routing_error_; }

  // SimGrid asks for the route of every flow when its bytes start to move (latency != nullptr),
  // and, with crosstraffic, for the reverse route its acks take (latency == nullptr).
  void get_local_route(const routing::NetPoint* src, const routing::NetPoint* dst,
                       routing::Route* into, double* latency) override {
    const CachedRoute& route = route_of(program_of_point_[src->id()], program_of_point_[dst->id()]);
    into->link_list_.insert(into->link_list_.end(), route.links.begin(), route.links.end());
    if (latency) {
      *latency += route.latency;
      for (topo::LinkId link : route.ids) {
        ++flows_on_link_[link];
        if (!counted_[link]) {
          counted_[link] = true;
          to_count_.push_back(link);
        }
      }
    }
  }

  // Time is about to move on: the flows on a link now are those that were on it together since
  // the last instant, so the links that gained a flow at that instant count towards the peak.
  // Counting here rather than at each start means that a flow ending at the instant another
  // starts on its link is not counted with it, whatever order SimGrid's actors handle the two.
  void count_peak() {
    for (topo::LinkId link : to_count_) {
      peak_flows_ = std::max<std::size_t>(peak_flows_, flows_on_link_[link]);
      counted_[link] = false;
    }
    to_count_.clear();
  }

  Platform::RouteFacts route_facts(int rank, int peer, int channel) {
    const CachedRoute& route = route_of(rank * channels_ + channel, peer * channels_ + channel);
    return {route.crosses_network, route.latency * (latency_factor_ == 0 ? 1.0 : latency_factor_)};
  }

  // The flow of (rank, channel) to `peer` has finished: it leaves its links.
  void flow_finished(int rank, int peer, int channel) {
    const CachedRoute& route = route_of(rank * channels_ + channel, peer * channels_ + channel);
    for (topo::LinkId link : route.ids) --flows_on_link_[link];
  }
  std::size_t peak_flows_per_link() {
    count_peak();
    return peak_flows_;
  }

private:
  // The routes a program's host used last: rings and trees send to the same peer over and over,
  // and the second entry keeps the reverse route of the flows it receives from evicting it.
  struct CachedRoute {
    std::int32_t to = -1;
    std::vector<LinkImpl*> links;
    std::vector<topo::LinkId> ids;
    double latency = 0; // seconds
    bool crosses_network = false;
  };
  struct RouteCache {
    std::array<CachedRoute, 2> entries;
    std::uint8_t next = 0; // the entry to replace
  };

  const CachedRoute& route_of(std::int32_t from, std::int32_t to) {
    RouteCache& cache = route_cache_[static_cast<std::size_t>(from)];
    for (const CachedRoute& entry : cache.entries)
      if (entry.to == to) return entry;
    CachedRoute& entry = cache.entries[cache.next];
    cache.next ^= 1;
    choose(from, to, entry);
    return entry;
  }

  void choose(std::int32_t from, std::int32_t to, CachedRoute& route) {
    const std::int32_t sender = from / channels_, receiver = to / channels_;
    const auto channel = static_cast<std::uint16_t>(from % channels_);
    const std::vector<topo::Path>& paths = router_.channel_paths(sender, receiver, channel);
    route.to = to;
    route.links.clear();
    route.ids = {};
    route.crosses_network = false;
    if (sender == receiver) { // messages between two programs of one GPU cost nothing
      route.links.push_back(loopbacks_[static_cast<std::size_t>(sender)]);
      route.latency = 0;
      return;
    }
    if (paths.empty()) {
      if (routing_error_.empty())
        routing_error_ =
            "no route from " +
            topology_.vertex(topology_.gpus()[static_cast<std::size_t>(sender)]).name + " to " +
            topology_.vertex(topology_.gpus()[static_cast<std::size_t>(receiver)]).name;
      route.latency = 0;
      return;
    }
    const topo::Path& path =
        paths[topo::ecmp_path_index(seed_, sender, receiver, channel, paths.size())];
    Picoseconds total = 0;
    route.ids = path;
    route.crosses_network = sim::crosses_network(topology_, path);
    for (topo::LinkId link : path) {
      route.links.push_back(links_[link]);
      total += topology_.link(link).latency;
    }
    // The model multiplies route latencies by its latency factor (LV08: 13.01); the per-step
    // overhead is a software cost, so it is divided by it beforehand to stay what was asked.
    if (latency_factor_ == 0)
      latency_factor_ = simgrid::config::get_value<double>("network/latency-factor");
    route.latency = ps_to_seconds(total) + ps_to_seconds(overhead_) / latency_factor_;
  }

  const topo::Topology& topology_;
  topo::Router& router_;
  std::uint64_t seed_;
  int channels_;
  Picoseconds overhead_;
  double latency_factor_ = 0;
  std::vector<LinkImpl*> links_;
  std::vector<LinkImpl*> loopbacks_; // per rank
  std::vector<sg::Host*> hosts_;
  std::vector<std::int32_t> program_of_point_; // netpoint id -> program (rank * channels + c)
  std::vector<RouteCache> route_cache_;        // per program
  std::vector<std::uint32_t> flows_on_link_;   // flows whose bytes are moving, per link
  std::vector<bool> counted_;                  // per link: in to_count_
  std::vector<topo::LinkId> to_count_;         // links that gained a flow at this instant
  std::size_t peak_flows_ = 0;
  std::string routing_error_;
};

Platform::Platform(const topo::Topology& topology, topo::Router& router, int ranks, int channels,
                   std::uint64_t seed, Picoseconds per_step_overhead)
    : zone_(new Zone(topology, router, ranks, channels, seed, per_step_overhead)) {
  Zone* zone = zone_;
  sg::Engine::on_time_advance_cb([zone](double) { zone->count_peak(); });
}

Platform::~Platform() = default;

sg::Host* Platform::host(int rank, int channel) const {
  return zone_->host(rank, channel);
}
const std::string& Platform::routing_error() const {
  return zone_->routing_error();
}

Platform::RouteFacts Platform::route_facts(int rank, int peer, int channel) {
  return zone_->route_facts(rank, peer, channel);
}

void Platform::flow_finished(int rank, int peer, int channel) {
  zone_->flow_finished(rank, peer, channel);
}
std::size_t Platform::peak_flows_per_link() const {
  return zone_->peak_flows_per_link();
}

void Platform::run() {
  sg::Engine::get_instance()->run();
}

double Platform::clock() {
  return sg::Engine::get_clock();
}

double Platform::work_seconds(Picoseconds work) {
  return static_cast<double>(work) / kHostSpeed;
}

Picoseconds Platform::now() {
  return checked_ps(sg::Engine::get_clock() * 1e12);
}

} // namespace ddlsim::sim::flow
