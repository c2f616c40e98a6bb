// Runs one all-reduce through the packet engine on nodes of 8 A100 (one 200 Gb/s NIC per GPU)
// joined by a fat tree (k=16 up to 1,024 GPUs, k=32 up to 8,192), and prints events, events per
// second, wall seconds, peak RSS and the simulated time; a progress line on stderr every ten CPU
// seconds. One configuration per process so that peak RSS is its own; scripts/bench runs the
// table.
//
//   bench_packet_scale RANKS [BYTES] [ALGORITHM] [ACK_EVERY]
//   e.g. bench_packet_scale 1024 268435456 ring 4   (ACK_EVERY: coalesced ACKs, default 1)
//        bench_packet_scale 4096 67108864            (the k=32 fat tree)
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
  if (ranks < 8 || ranks % 8 != 0 || ranks > 8192) {
    std::fprintf(stderr, "RANKS must be a multiple of 8, at most 8192 (the k=32 fat tree)\n");
    return 2;
  }
  const int k = ranks <= 1024 ? 16 : 32; // a k-ary fat tree holds k^3/4 hosts
  try {
    topo::ClusterSpec spec;
    spec.node_groups.push_back({*topo::find_node_preset("dgx-a100"), ranks / 8});
    spec.fabric.type = topo::FabricType::fat_tree;
    spec.fabric.k = k;
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
    double next_report = cpu_built + 10;
    options.progress = [&](Picoseconds simulated, std::uint64_t events) {
      if (const double cpu = bench::cpu_seconds(); cpu >= next_report) {
        std::fprintf(stderr, "progress: %llu events, simulated %.3f ms, %.0f s CPU, %.1f MiB\n",
                     static_cast<unsigned long long>(events), ps_to_seconds(simulated) * 1e3,
                     cpu - cpu_built, bench::peak_rss_mib());
        next_report = cpu + 10;
      }
      return true;
    };
    const sim::packet::PacketTiming timing =
        sim::packet::simulate_packet(topology, router, coll::Schedule::make(call), options);
    const auto done = std::chrono::steady_clock::now();

    // The machine may be shared: events per CPU second is the engine's speed on one core.
    const double simulate = std::chrono::duration<double>(done - built).count();
    const double cpu = bench::cpu_seconds() - cpu_built;
    std::printf("packet %s ranks %5d  k=%d  %s  ack every %d  events %11llu  "
                "events/s %8.3g (per CPU s %8.3g)  data packets %10llu  tx_done %llu (idle %llu)  "
                "simulate %7.2f s wall, %7.2f s CPU  peak RSS %6.1f MiB  simulated %.3f ms\n",
                algorithm.c_str(), ranks, k, format_bytes(bytes).c_str(), ack_every,
                static_cast<unsigned long long>(timing.events),
                static_cast<double>(timing.events) / simulate,
                static_cast<double>(timing.events) / cpu,
                static_cast<unsigned long long>(timing.data_packets),
                static_cast<unsigned long long>(timing.tx_done_events),
                static_cast<unsigned long long>(timing.idle_tx_done_events), simulate, cpu,
                bench::peak_rss_mib(), ps_to_seconds(timing.time) * 1e3);
  } catch (const InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
