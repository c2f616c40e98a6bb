// Traffic workloads: point-to-point flows (src, dst, bytes) posted all at once, lowered to one
// Schedule so that every executor (the reference executor, and every engine) runs them.
//
// A flow list comes from the user, or from a named pattern:
//  - permutation: every rank sends `bytes` to one other rank and receives from one, a random
//    derangement drawn from a seed (permutation_targets documents the draw, so that it does not
//    depend on the standard library's distributions);
//  - incast: `senders` ranks send `bytes` each to one receiver;
//  - all_to_all_v: a ranks x ranks matrix of bytes (CSV), entry [i][j] from rank i to rank j.
#pragma once

#include "ddlsim/collectives/schedule.hpp"

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace ddlsim::coll {

struct Flow {
  int src = 0;
  int dst = 0;
  std::uint64_t bytes = 0;
  bool operator==(const Flow&) const = default;
};

// The target of each rank in a random derangement of 0..ranks-1 (no rank maps to itself),
// deterministic from `seed`: std::mt19937_64 seeded with `seed` draws a Fisher-Yates shuffle
// (for i = n-1 down to 1: swap a[i] with a[j], j uniform in [0, i] by rejection sampling of the
// raw 64-bit draws, then j = draw mod (i + 1)); a shuffle with a fixed point is thrown away and
// the next one drawn from the same generator (about e = 2.7 shuffles on average). ranks >= 2.
std::vector<int> permutation_targets(int ranks, std::uint64_t seed);

std::vector<Flow> permutation_flows(int ranks, std::uint64_t bytes, std::uint64_t seed);
// `senders` ranks (the first ones, skipping the receiver) each send `bytes` to `receiver`.
std::vector<Flow> incast_flows(int ranks, int senders, int receiver, std::uint64_t bytes);
// A ranks x ranks CSV matrix of byte counts (non-negative integers; "#" starts a comment line;
// zero entries make no flow; the diagonal must be zero). `where` names it in errors.
std::vector<Flow> matrix_flows(std::istream& csv, int ranks, const std::string& where);

// Throws InputError at `where` + "/<index>" for a flow whose src or dst is out of [0, ranks),
// whose src equals its dst, whose bytes are zero or not a multiple of `dtype`'s element size;
// at `where` for an empty list.
void check_flows(const std::vector<Flow>& flows, int ranks, DataType dtype,
                 const std::string& where);

// One program per rank, channel 0: in flow order, a send for each flow the rank sends (from
// consecutive ranges of its input buffer) and a receive for each it receives (into consecutive
// ranges of its output buffer), with no dependencies, so every step is posted at once. The k-th
// flow from a to b matches the k-th receive at b from a (rule 2 of step.hpp). The flows must
// pass check_flows.
Schedule traffic_schedule(const std::vector<Flow>& flows, int ranks, DataType dtype);

// Where flow f's bytes are: its range in the sender's input and in the receiver's output
// buffer, as traffic_schedule lays them out (for checking a reference run).
struct FlowRanges {
  BufferRange in, out;
};
std::vector<FlowRanges> flow_ranges(const std::vector<Flow>& flows, int ranks);

} // namespace ddlsim::coll
