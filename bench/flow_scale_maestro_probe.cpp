// Why the flow engine keeps one SimGrid actor per program: the cost of the alternative, in which
// SimGrid's maestro itself starts host-to-host comms (Comm::sendto_init) and reacts to their
// completion (Activity::on_completion), with no actor and no simcall at all. SimGrid 3.32 keeps
// every such comm in maestro's activity list (a std::list) and takes it out with list::remove,
// which walks the whole list, so a comm costs time linear in the comms in flight.
//
//   bench_flow_scale_maestro_probe FLOWS_IN_FLIGHT [TOTAL_FLOWS]
//
// FLOWS_IN_FLIGHT hosts on a star (one 25 GB/s, 1 us link each) run a ring: host i sends 1 MB
// to host i+1 and sends again as soon as it arrived, TOTAL_FLOWS flows in all (default 409,600).
// Prints the CPU time per flow.
#include <simgrid/s4u/Activity.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <xbt/log.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

namespace sg = simgrid::s4u;

namespace {

// Which host a comm left from, and its round.
struct Flow {
  int from = 0;
  long round = 0;
};

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FLOWS_IN_FLIGHT [TOTAL_FLOWS]\n", argv[0]);
    return 2;
  }
  const int hosts_count = std::atoi(argv[1]);
  const long total = argc > 2 ? std::atol(argv[2]) : 409'600;
  if (hosts_count < 2 || total < hosts_count) {
    std::fprintf(stderr, "FLOWS_IN_FLIGHT must be at least 2 and TOTAL_FLOWS at least that\n");
    return 2;
  }
  xbt_log_control_set("root.thres:critical");
  int sg_argc = 1;
  char name[] = "probe";
  char* sg_argv[] = {name, nullptr};
  sg::Engine engine(&sg_argc, sg_argv);
  sg::NetZone* zone = sg::create_star_zone("star");
  std::vector<sg::Host*> hosts;
  for (int i = 0; i < hosts_count; ++i) {
    sg::Host* host = zone->create_host("h" + std::to_string(i), 1e12)->seal();
    sg::Link* link =
        zone->create_split_duplex_link("l" + std::to_string(i), 25e9)->set_latency(1e-6)->seal();
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                    {{link, sg::LinkInRoute::Direction::UP}}, true);
    hosts.push_back(host);
  }
  zone->seal();

  const long rounds = total / hosts_count;
  std::vector<Flow> flows(static_cast<std::size_t>(hosts_count));
  std::vector<sg::ActivityPtr> in_flight(static_cast<std::size_t>(hosts_count));
  sg::ActivityPtr ended; // kept alive until its completion handling has returned
  long done = 0;
  auto send = [&](int from, long round) {
    Flow& flow = flows[static_cast<std::size_t>(from)];
    flow = Flow{from, round};
    sg::CommPtr comm =
        sg::Comm::sendto_init(hosts[static_cast<std::size_t>(from)],
                              hosts[static_cast<std::size_t>((from + 1) % hosts_count)]);
    comm->set_payload_size(1'000'000);
    comm->set_data(&flow);
    comm->start();
    in_flight[static_cast<std::size_t>(from)] = comm;
  };
  sg::Activity::on_completion_cb([&](const sg::Activity& activity) {
    const Flow& flow = *activity.get_data<Flow>();
    ++done;
    ended = in_flight[static_cast<std::size_t>(flow.from)];
    if (flow.round + 1 < rounds) send(flow.from, flow.round + 1);
  });
  const std::clock_t start = std::clock();
  for (int i = 0; i < hosts_count; ++i) send(i, 0);
  engine.run();
  const double cpu = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  std::printf("%d flows in flight: %ld flows, %.2f s CPU, %.2f us per flow, simulated %.6f s\n",
              hosts_count, done, cpu, cpu / static_cast<double>(done) * 1e6,
              sg::Engine::get_clock());
  return 0;
}
