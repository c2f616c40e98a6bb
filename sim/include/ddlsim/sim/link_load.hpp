// Per-link load of a finished simulation: which links carried how many bytes, for how long, and
// how close to their capacity. A trace hook in the style of ns-3's: it reads the step records an
// engine already makes (CommonOptions::record_steps) and the routes the engines share (the
// seeded ECMP choice of topologies/ecmp.hpp), so it works the same for every engine and costs
// nothing when it is not asked for.
//
// For each point-to-point transfer (a send record: rank, peer, channel, bytes, start, end) it
// charges the schedule's payload bytes to every link of the path the engines put that transfer
// on (Router::ecmp_path with the run's seed), and marks the link busy from the send's start to
// its end. A link's figures:
//   bytes        the payload bytes of the transfers that crossed it (a protocol's wire overhead,
//                e.g. LL's flags, is not added: the schedule's bytes, as bytes_sent reports them);
//   busy         the time during which at least one of those transfers was in progress (the
//                union of their [start, end] intervals);
//   load         bytes / capacity: the least time the link needs for its bytes alone;
//   utilisation  load / the run's time: 1 means the link alone explains the run's duration.
// The busiest link by utilisation is the run's bandwidth bottleneck when its utilisation is near
// 1; a run whose busiest link is far below 1 is bound by latency or by dependencies.
//
// Not included: in-switch (NVLS) steps, whose bytes go up to and down from the switch on several
// links at once (reported as switch_bytes, unattributed), and local steps (no link).
#pragma once

#include "ddlsim/core/units.hpp"
#include "ddlsim/sim/analytic_engine.hpp"
#include "ddlsim/topologies/router.hpp"
#include "ddlsim/topologies/topology.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace ddlsim::sim {

struct LinkLoad {
  topo::LinkId link = 0;
  std::uint64_t bytes = 0;     // payload bytes carried
  std::uint64_t transfers = 0; // transfers that crossed it
  Picoseconds busy = 0;        // time with at least one of them in progress
  double load_seconds = 0;     // bytes / capacity
  double utilisation = 0;      // load / the run's time (0 when the run took no time)
};

struct LinkLoadReport {
  Picoseconds time = 0;           // the run's time the utilisations are relative to
  std::vector<LinkLoad> links;    // links that carried bytes, by utilisation (highest first),
                                  // ties by link id
  std::uint64_t switch_bytes = 0; // bytes of in-switch (NVLS) steps, not attributed to links
};

// The load of every link from a run's step records (`steps`, in any order) on `topology`, with
// the run's `seed` and `time`. Throws InputError at "topology" when a transfer has no route.
LinkLoadReport link_loads(const topo::Topology& topology, topo::Router& router, std::uint64_t seed,
                          std::span<const StepRecord> steps, Picoseconds time);

} // namespace ddlsim::sim
