// The links a job's transfers can cross, and the split of a group of co-running jobs into sets
// that share none (the contention cache of shared_cluster.cpp simulates each set on its own).
//
// Every transfer of a job's iteration goes from one of its GPUs to another, over one of the
// routes the engines choose from: Router::channel_paths for its channel (the ECMP set, bound to
// the GPUs' NICs for that channel), or for an in-switch (NVLS) step the links between its
// members and their switch, which lie on Router::paths between two of them
// (sim/src/switch_routes.hpp). So the union, over every ordered pair of the job's GPUs, of every
// path of Router::paths and of Router::channel_paths for the channels that meet every NIC pair
// (0 .. lcm of the two GPUs' NIC counts - 1: channel c leaves GPU g by gpu_nics[g][c % size]),
// holds every link the job can load. A job on one GPU has no transfers and no links.
//
// A job on two or more GPUs is also kept with every job on a node it uses: on the 1,000-job
// trace of `scripts/bench jobs`, jobs that shared a node but, by these link sets, no link still
// changed each other's times on the analytic engine (in the last digits, and by 1% once), so
// sharing a node is treated as meeting. A job on one GPU has no transfers and meets no one.
// So a job's resources are its links and, on two or more GPUs, its nodes. Jobs whose resources
// are disjoint do not meet on the analytic engine: its fluid model (sim/flow_network.hpp)
// recomputes rates only among flows connected through shared links, a component's rates do not
// depend on flows outside it, and a GPU's compute is its own job's. Each set of jobs that share
// resources then runs exactly as in a simulation of the whole group (tests/jobs assert identical
// job figures with and without the split).
#pragma once

#include "ddlsim/topologies/router.hpp"
#include "ddlsim/topologies/topology.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ddlsim::jobs {

// What the job on `gpus` (global ranks) can share with another (sorted, each once): the links
// its transfers can cross (their ids), and with two or more GPUs its nodes (-1 - node).
std::vector<std::int64_t> job_resources(const topo::Topology& topology, topo::Router& router,
                                        const std::vector<int>& gpus);

// `resources[i]`: job i's resources (job_resources). The jobs split into sets, each closed under
// sharing a resource (connected components of "shares one with"); each set in increasing index
// order, the sets in the order of their first member.
std::vector<std::vector<std::size_t>>
resource_components(const std::vector<const std::vector<std::int64_t>*>& resources);

} // namespace ddlsim::jobs
