// Runs one all-reduce through the packet engine on nodes of 8 A100 (one 200 Gb/s NIC per GPU)
// joined by a k=16 fat tree, and prints events, events per second, wall seconds, peak RSS and
// the simulated time. One configuration per process so that peak RSS is its own; scripts/bench
// runs the table.
//
//   bench_packet_scale RANKS [BYTES] [ALGORITHM] [ACK_EVERY]
//   e.g. bench_packet_scale 1024 268435456 ring 4   (ACK_EVERY: coalesced ACKs, default 1)
#include "bench_support.hpp"
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/sim/packet/packet_engine.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "ddlsim/topologies/presets.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace ddlsim;

namespace {} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s RANKS [BYTES] [ALGORITHM] [ACK_EVERY]\n", argv[0]);
    return 2;
  }
  const int ranks = std::atoi(argv[1]);
  const std::uint64_t bytes = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 256ull << 20;
  const std::string algorithm = argc > 3 ? argv[3] : "ring";
  const int ack_every = argc > 4 ? std::atoi(argv[4]) : 1;
  if (ack_every < 1) {
    std::fprintf(stderr, "ACK_EVERY must be at least 1\n");
    return 2;
  }
  if (ranks < 8 || ranks % 8 != 0 || ranks > 1024) {
    std::fprintf(stderr, "RANKS must be a multiple of 8, at most 1024 (the k=16 fat tree)\n");
    return 2;
  }
  try {
    topo::ClusterSpec spec;
    spec.node_groups.push_back({*topo::find_node_preset("dgx-a100"), ranks / 8});
    spec.fabric.type = topo::FabricType::fat_tree;
    spec.fabric.k = 16;
    spec.fabric.link_bytes_per_second = gbps_to_bytes_per_second(200);
    spec.fabric.link_latency = ns_to_ps(500);
    const topo::Topology topology = topo::build_topology(spec);
    topo::Router router(topology);
    const auto built = std::chrono::steady_clock::now();
    const double cpu_built = bench::cpu_seconds();

    coll::CollectiveCall call;
    call.op = coll::Op::all_reduce;
    call.ranks = ranks;
    call.bytes = bytes;
    call.algorithm = algorithm;
    for (int r = 0; r < ranks; ++r) call.node_of_rank.push_back(r / 8);
    sim::packet::PacketOptions options; // 4 KiB MTU, reliable transport, per-flow ECMP
    options.spec.transport.ack_every_packets = static_cast<std::uint32_t>(ack_every);
    const sim::packet::PacketTiming timing =
        sim::packet::simulate_packet(topology, router, coll::Schedule::make(call), options);
    const auto done = std::chrono::steady_clock::now();

    // The machine may be shared: events per CPU second is the engine's speed on one core.
    const double simulate = std::chrono::duration<double>(done - built).count();
    const double cpu = bench::cpu_seconds() - cpu_built;
    std::printf(
        "packet %s ranks %5d  %s  ack every %d  events %11llu  events/s %8.3g (per CPU s %8.3g)  "
        "data packets %10llu  simulate %7.2f s wall, %7.2f s CPU  peak RSS %6.1f MiB  "
        "simulated %.3f ms\n",
        algorithm.c_str(), ranks, format_bytes(bytes).c_str(), ack_every,
        static_cast<unsigned long long>(timing.events),
        static_cast<double>(timing.events) / simulate, static_cast<double>(timing.events) / cpu,
        static_cast<unsigned long long>(timing.data_packets), simulate, cpu, bench::peak_rss_mib(),
        ps_to_seconds(timing.time) * 1e3);
  } catch (const InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
