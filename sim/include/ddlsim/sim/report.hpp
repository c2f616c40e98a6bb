// Collective results as people compare them: nccl-tests columns (size, count, type, redop, time,
// algbw, busbw) on stdout, and the same rows as JSON for tools.
#pragma once

#include "ddlsim/collectives/call.hpp"
#include "ddlsim/core/json_reader.hpp"
#include "ddlsim/core/units.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace ddlsim::sim {

struct CollectiveRow {
  std::uint64_t bytes = 0;
  std::uint64_t count = 0; // elements
  coll::DataType dtype = coll::DataType::fp32;
  coll::Reduction reduction = coll::Reduction::sum;
  std::string algorithm;
  std::string why;          // for "auto": the ranking that chose it
  std::string nccl_choice;  // for "nccl": NCCL's choice, "tree/LL128, 16 channels"
  double nccl_model_us = 0; // for "nccl": NCCL's own modelled time of the call
  Picoseconds time = 0;
  std::uint64_t steps = 0;
  std::uint64_t transfers = 0;
  std::uint64_t bytes_sent = 0;
  std::size_t peak_flows_per_link = 0;
  Json engine_details; // engine-specific figures (packet engine: drops, links...); null = none

  double seconds() const { return ps_to_seconds(time); }
  double algbw_gbytes_per_second() const; // bytes / time, in 10^9 B/s
};

// nccl-tests' bus-bandwidth factor: 2(n-1)/n for all-reduce; (n-1)/n for reduce-scatter,
// all-gather and all-to-all; 1 for broadcast, reduce and send/recv.
double bus_bandwidth_factor(coll::Op op, int ranks);

struct CollectiveReport {
  std::string scenario;
  std::string engine;
  coll::Op op = coll::Op::all_reduce;
  int ranks = 0;
  std::uint64_t seed = 0;
  std::vector<CollectiveRow> rows;
};

void print_table(const CollectiveReport& report, std::ostream& out);
Json to_json(const CollectiveReport& report);

} // namespace ddlsim::sim
