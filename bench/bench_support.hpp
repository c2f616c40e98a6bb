// What the scale benchmarks share: the process's own resource figures, and the cluster of the
// analytic and flow benchmarks, so that their tables describe the same machine.
#pragma once

#include "ddlsim/core/units.hpp"
#include "ddlsim/topologies/cluster_spec.hpp"
#include "ddlsim/topologies/presets.hpp"

#include <sys/resource.h>

namespace ddlsim::bench {

// Peak resident memory of this process (RUSAGE_SELF) or of its waited-for children.
inline double peak_rss_mib(int who = RUSAGE_SELF) {
  rusage usage{};
  getrusage(who, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0; // ru_maxrss is KiB on Linux
}

// CPU seconds (user + system) of this process or of its waited-for children: on a shared
// machine wall time also counts other people's work.
inline double cpu_seconds(int who = RUSAGE_SELF) {
  rusage usage{};
  getrusage(who, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

// Nodes of 8 A100 with 4 NICs on a k=32 fat tree of 200 Gb/s links (500 ns), so that 16,384
// GPUs fill its 8,192 ports. `gpus` must be a multiple of 8.
inline topo::ClusterSpec scale_cluster(int gpus) {
  topo::ClusterSpec spec;
  topo::NodeSpec node = *topo::find_node_preset("dgx-a100");
  node.nics = 4;
  spec.node_groups.push_back({node, gpus / 8});
  spec.fabric.type = topo::FabricType::fat_tree;
  spec.fabric.k = 32;
  spec.fabric.link_bytes_per_second = gbps_to_bytes_per_second(200);
  spec.fabric.link_latency = ns_to_ps(500);
  return spec;
}

} // namespace ddlsim::bench
