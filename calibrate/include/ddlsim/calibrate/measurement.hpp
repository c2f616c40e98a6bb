// Measurements as calibrate and validate read them: timed collective calls and what is known
// about the system that ran them. nccl-tests logs (nccl_log.hpp) and `ddlsim real --json`
// reports (real_report.hpp) both become a MeasuredSet.
#pragma once

#include "ddlsim/collectives/call.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ddlsim::calib {

// The system a set of measurements came from, as far as its source says. 0 = unknown.
struct MeasuredSystem {
  int ranks = 0;
  int nodes = 0;
  int gpus_per_node = 0;
  std::string gpu_name;           // e.g. "NVIDIA A10G", from nccl-tests' device lines
  std::vector<std::string> hosts; // distinct host names, in order of appearance
  std::string library_version;    // e.g. "NCCL 2.11.4+cuda11.4"
  std::string transport;          // e.g. "NET/Socket", "NET/IB", from NCCL_DEBUG lines
  // How each known field was found ("ranks 2 from the `Rank N ... on HOST` lines"), for the
  // user to check.
  std::vector<std::string> notes;
};

// One timed collective call.
struct MeasuredPoint {
  coll::Op op = coll::Op::all_reduce;
  std::uint64_t bytes = 0; // nccl-tests meaning (see coll::CollectiveCall::bytes)
  coll::DataType dtype = coll::DataType::fp32;
  coll::Reduction reduction = coll::Reduction::sum;
  int ranks = 0;
  double seconds = 0;
  // The algorithm that ran, when the source says (a ddlsim generator name); "" = the library
  // chose (NCCL), and the model assumes NCCL's choice.
  std::string algorithm;
  std::string where; // "file:line" of the row
};

struct MeasuredSet {
  std::string source; // the file
  std::string kind;   // "nccl-tests" or "ddlsim-report"
  MeasuredSystem system;
  std::vector<MeasuredPoint> points;
  // Rows skipped under --lenient, "file:line: why"; callers print them as warnings.
  std::vector<std::string> warnings;
};

} // namespace ddlsim::calib
