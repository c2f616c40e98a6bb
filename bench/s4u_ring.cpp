// The peer of the flow engine: a bare SimGrid S4U ring all-reduce, written the way SimGrid's own
// examples drive comms (one actor per rank, put_async to the right neighbour's mailbox, a
// blocking get from its own, both waited on and released each step). ddlsim's flow engine runs
// the same ring on the same platform, so the CPU and memory of the two are the cost of ddlsim's
// engine layer over SimGrid's own (scripts/bench prints both).
//
//   bench_s4u_ring RANKS [BYTES] [GBPS]
//
// RANKS hosts on one switch (a star zone: one split-duplex link of GBPS per host, default 100,
// 0.5 us), LV08 network model; every rank holds BYTES (default 100 MiB) and runs the ring
// all-reduce: 2 (RANKS - 1) steps, each sending BYTES / RANKS to the next rank and receiving as
// much from the previous one. Prints the simulated time and the CPU seconds.
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <xbt/log.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

namespace sg = simgrid::s4u;

namespace {

void rank_actor(int rank, int ranks, double chunk_bytes, std::vector<sg::Mailbox*>* boxes) {
  sg::Mailbox* mine = (*boxes)[static_cast<std::size_t>(rank)];
  sg::Mailbox* next = (*boxes)[static_cast<std::size_t>((rank + 1) % ranks)];
  static int token = 0; // the payload is only a size; nothing is copied
  for (int step = 0; step < 2 * (ranks - 1); ++step) {
    sg::CommPtr send = next->put_async(&token, static_cast<uint64_t>(chunk_bytes));
    mine->get<int>();
    send->wait();
  }
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s RANKS [BYTES] [GBPS]\n", argv[0]);
    return 2;
  }
  const int ranks = std::atoi(argv[1]);
  const double bytes = argc > 2 ? std::atof(argv[2]) : 100.0 * (1 << 20);
  const double gbps = argc > 3 ? std::atof(argv[3]) : 100.0;
  if (ranks < 2 || bytes <= 0 || gbps <= 0) {
    std::fprintf(stderr, "RANKS must be at least 2, BYTES and GBPS positive\n");
    return 2;
  }
  xbt_log_control_set("root.thres:critical");
  int sg_argc = 2;
  char name[] = "s4u_ring";
  char model[] = "--cfg=network/model:LV08";
  char* sg_argv[] = {name, model, nullptr};
  sg::Engine engine(&sg_argc, sg_argv);
  sg::NetZone* zone = sg::create_star_zone("switch");
  std::vector<sg::Host*> hosts;
  std::vector<sg::Mailbox*> boxes;
  for (int i = 0; i < ranks; ++i) {
    sg::Host* host = zone->create_host("h" + std::to_string(i), 1e12)->seal();
    sg::Link* link = zone->create_split_duplex_link("l" + std::to_string(i), gbps * 1e9 / 8)
                         ->set_latency(0.5e-6)
                         ->seal();
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                    {{link, sg::LinkInRoute::Direction::UP}}, true);
    hosts.push_back(host);
    boxes.push_back(sg::Mailbox::by_name("r" + std::to_string(i)));
  }
  zone->seal();
  const double chunk = bytes / ranks;
  for (int i = 0; i < ranks; ++i)
    sg::Actor::create("rank" + std::to_string(i), hosts[static_cast<std::size_t>(i)], rank_actor, i,
                      ranks, chunk, &boxes);
  const std::clock_t start = std::clock();
  engine.run();
  const double cpu = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  std::printf("s4u ring all-reduce: %d ranks, %.0f bytes, simulated %.9f s, %.2f s CPU\n", ranks,
              bytes, sg::Engine::get_clock(), cpu);
  return 0;
}
