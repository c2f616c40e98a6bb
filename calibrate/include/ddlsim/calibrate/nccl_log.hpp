// Parser of nccl-tests output (all_reduce_perf, reduce_scatter_perf, all_gather_perf,
// broadcast_perf, reduce_perf, alltoall_perf, sendrecv_perf) as people keep it: with or without
// rank prefixes ("0: " from srun --label, "[1,0]<stdout>:" from mpirun --tag-output), old and
// new column layouts (with or without "root", "error" or "#wrong"), NCCL_DEBUG lines mixed in,
// several runs in one file, and as people publish them on web pages: rows elided with `...`,
// tables indented or put in markdown `| a | b |` rows, the `#` of the comment lines stripped,
// and bandwidth-only tables ("| Message Size | busbw (GB/s) |" with size labels such as "65K").
#pragma once

#include "ddlsim/calibrate/measurement.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddlsim::calib {

struct NcclRow {
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  std::string type;                  // "float", "half", ...
  std::string redop;                 // "sum", "none", ...
  int root = -1;                     // -1 where the layout has no root column
  double out_of_place_us = 0;        // 0 in a bandwidth-only table (NcclTable::timing)
  std::optional<double> in_place_us; // absent when the log prints N/A or has no in-place column
  double algbw = 0;                  // GB/s, out of place
  double busbw = 0;                  // GB/s, out of place
  int line = 0;
};

// Where a table's times come from: its time column, or (a table that publishes one bandwidth
// column per size and no time) size / algbw, with algbw = busbw / the op's bus factor once the
// rank count is known (to_measured_set).
enum class NcclTiming { measured, from_busbw, from_algbw };

// One results table and the run header above it.
struct NcclTable {
  std::string tool; // e.g. "all_reduce_perf"; "" when the log never names it
  std::optional<coll::Op> op;
  MeasuredSystem system; // from this run's header lines and the NCCL_DEBUG lines around it
  std::vector<NcclRow> rows;
  int header_line = 0;
  NcclTiming timing = NcclTiming::measured;
  // What the parser read into the table and the user should know: elided rows, size labels
  // taken as powers of two, an assumed bandwidth column.
  std::vector<std::string> notes;
};

struct NcclLog {
  std::string source;
  std::vector<NcclTable> tables;
  // lenient only: "source:line: why (row skipped)" for each row that did not parse.
  std::vector<std::string> warnings;
};

// Throws InputError naming "source:line" for a table row it cannot read (including a results
// row after its table ended, e.g. at a warning line in the middle of the table), and for a
// table header with no rows under it, and naming the source for a log without any results
// table. `lenient` (calibrate / validate --lenient): a row that does not parse is skipped with a
// warning in NcclLog::warnings instead.
NcclLog parse_nccl_log(std::string_view text, const std::string& source, bool lenient = false);
NcclLog parse_nccl_log_file(const std::filesystem::path& file, bool lenient = false);

// True when the text looks like nccl-tests output (a results table header), so that `calibrate`
// can tell logs from JSON reports.
bool looks_like_nccl_log(std::string_view text);

// Which time column a MeasuredPoint takes: nccl-tests times every size twice, out of place and
// in place; their mean halves the run-to-run scatter. Where a row has no in-place time
// (N/A), every choice takes the out-of-place one.
enum class NcclColumn { out_of_place, in_place, mean };

// What the user says about a log whose header does not (flags of `ddlsim calibrate`).
struct SystemHints {
  std::optional<coll::Op> op;
  int nodes = 0;         // 0 = infer
  int gpus_per_node = 0; // 0 = infer
};

// The log's points, one per row of size > 0 (0-byte rows time a launch, not a collective: left
// out with a note). Fills in the system from `hints` where the log is silent, infers the rank
// count from busbw / algbw when nothing else gives it, and throws InputError when a table's
// collective or rank count cannot be told. Several tables of the same collective on the same
// rank count (the same run repeated) are never merged: the one with the most rows is used (the
// first of equals) and a note names the tables left out. Bandwidth-only tables get their times
// from the bandwidth and the bus factor, with a note saying so.
// (The log's warnings become the set's.)
MeasuredSet to_measured_set(const NcclLog& log, const SystemHints& hints,
                            NcclColumn column = NcclColumn::out_of_place);

} // namespace ddlsim::calib
