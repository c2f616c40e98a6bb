// From parsed nccl-tests tables to measured points (nccl_log.hpp: to_measured_set): the
// collective and rank count of each table, the choice among repeated runs, 0-byte rows, and the
// times of bandwidth-only tables.
#include "ddlsim/calibrate/nccl_log.hpp"
#include "ddlsim/core/input_error.hpp"

#include <cmath>
#include <cstdio>
#include <map>

namespace ddlsim::calib {
namespace {

std::optional<coll::DataType> dtype_of(const std::string& type) {
  if (type == "float") return coll::DataType::fp32;
  if (type == "half") return coll::DataType::fp16;
  if (type == "bfloat16") return coll::DataType::bf16;
  return std::nullopt;
}

// Rank count from busbw / algbw (nccl-tests' bus factor), on the largest row where both are
// printed with enough digits; 0 when they do not tell.
int ranks_from_bus_factor(coll::Op op, const std::vector<NcclRow>& rows) {
  const NcclRow* best = nullptr;
  for (const NcclRow& row : rows)
    if (row.algbw >= 1.0 && (!best || row.algbw > best->algbw)) best = &row;
  if (!best) return 0;
  const double ratio = best->busbw / best->algbw;
  double n = 0;
  if (op == coll::Op::all_reduce) {
    if (ratio >= 2.0 - 1e-9) return 0;
    n = 2.0 / (2.0 - ratio);
  } else if (op == coll::Op::reduce_scatter || op == coll::Op::all_gather ||
             op == coll::Op::all_to_all) {
    if (ratio >= 1.0 - 1e-9) return 0;
    n = 1.0 / (1.0 - ratio);
  } else {
    return 0;
  }
  const double rounded = std::round(n);
  // Two printed decimals: accept only a clear integer.
  return rounded >= 2 && std::abs(n - rounded) < 0.1 * rounded / 4 + 0.15
             ? static_cast<int>(rounded)
             : 0;
}

// nccl-tests' bus factor (busbw = algbw x factor): 2(n-1)/n for all-reduce, (n-1)/n for
// reduce-scatter, all-gather and all-to-all, 1 for broadcast, reduce and send/recv
// (nccl-tests doc/PERFORMANCE.md).
double bus_factor(coll::Op op, int ranks) {
  const double n = ranks;
  if (op == coll::Op::all_reduce) return 2 * (n - 1) / n;
  if (op == coll::Op::reduce_scatter || op == coll::Op::all_gather || op == coll::Op::all_to_all)
    return (n - 1) / n;
  return 1;
}

std::string factor_text(coll::Op op, int ranks) {
  char text[96];
  if (op == coll::Op::all_reduce)
    std::snprintf(text, sizeof text, "2(n-1)/n = %.4g for %d ranks", bus_factor(op, ranks), ranks);
  else if (bus_factor(op, ranks) == 1)
    std::snprintf(text, sizeof text, "1 for %s", std::string(coll::to_string(op)).c_str());
  else
    std::snprintf(text, sizeof text, "(n-1)/n = %.4g for %d ranks", bus_factor(op, ranks), ranks);
  return text;
}

// The collective and system of one table, hints filling in what the log leaves open.
MeasuredSystem system_of_table(const NcclTable& table, coll::Op op, const SystemHints& hints,
                               const std::string& where) {
  MeasuredSystem system = table.system;
  if (system.ranks == 0) {
    system.ranks = ranks_from_bus_factor(op, table.rows);
    if (system.ranks > 0)
      system.notes.push_back("ranks " + std::to_string(system.ranks) +
                             " inferred from busbw / algbw (nccl-tests' bus factor)");
  }
  if (system.ranks == 0 && hints.nodes > 0 && hints.gpus_per_node > 0) {
    system.ranks = hints.nodes * hints.gpus_per_node;
    system.notes.push_back("ranks " + std::to_string(system.ranks) +
                           " from --nodes x --gpus-per-node");
  }
  if (system.ranks == 0)
    throw InputError(where, "cannot tell how many ranks ran this table (no `Rank N ... on HOST` "
                            "lines, no NCCL_DEBUG nranks, busbw / algbw does not say); pass "
                            "--nodes and --gpus-per-node");
  // Hints fill in what the log leaves open; what it states stays (a log may hold a
  // single-GPU baseline run on a part of the cluster).
  if (system.nodes == 0 && hints.nodes > 0 && hints.gpus_per_node > 0 &&
      hints.nodes * hints.gpus_per_node == system.ranks) {
    system.nodes = hints.nodes;
    system.gpus_per_node = hints.gpus_per_node;
    system.notes.push_back("nodes " + std::to_string(system.nodes) + " x " +
                           std::to_string(system.gpus_per_node) +
                           " GPUs from --nodes / --gpus-per-node (or the scenario)");
  }
  if (system.nodes == 0 && hints.gpus_per_node > 0 && system.ranks % hints.gpus_per_node == 0) {
    system.gpus_per_node = hints.gpus_per_node;
    system.nodes = system.ranks / hints.gpus_per_node;
    system.notes.push_back("nodes " + std::to_string(system.nodes) + " from --gpus-per-node");
  }
  if (system.nodes == 0 && hints.nodes > 0 && system.ranks % hints.nodes == 0) {
    system.nodes = hints.nodes;
    system.gpus_per_node = system.ranks / hints.nodes;
    system.notes.push_back("GPUs per node " + std::to_string(system.gpus_per_node) +
                           " from --nodes");
  }
  return system;
}

} // namespace

MeasuredSet to_measured_set(const NcclLog& log, const SystemHints& hints, NcclColumn column) {
  MeasuredSet set;
  set.source = log.source;
  set.warnings = log.warnings;
  set.kind = "nccl-tests";
  struct Resolved {
    coll::Op op;
    MeasuredSystem system;
  };
  std::vector<Resolved> resolved;
  // What the data itself needs said (tables left out, elisions, 0-byte rows, inferred times),
  // whichever table it concerns; appended to the set's notes.
  std::vector<std::string> data_notes;
  for (const NcclTable& table : log.tables) {
    const std::string where = log.source + ":" + std::to_string(table.header_line);
    const std::optional<coll::Op> op = table.op ? table.op : hints.op;
    if (!op)
      throw InputError(where, "cannot tell which collective this table measures: the log never "
                              "names the nccl-tests tool (e.g. an `all_reduce_perf -b 8 ...` "
                              "command line); pass --op");
    resolved.push_back({*op, system_of_table(table, *op, hints, where)});
  }
  // Repeated runs of one collective on one rank count: the table with the most rows (the
  // first of equals) stands for them; merging would weigh every size twice without a word.
  std::map<std::pair<coll::Op, int>, std::size_t> chosen;
  for (std::size_t t = 0; t < log.tables.size(); ++t) {
    const auto key = std::make_pair(resolved[t].op, resolved[t].system.ranks);
    const auto [at, inserted] = chosen.emplace(key, t);
    if (!inserted && log.tables[t].rows.size() > log.tables[at->second].rows.size()) at->second = t;
  }
  for (std::size_t t = 0; t < log.tables.size(); ++t) {
    const NcclTable& table = log.tables[t];
    const Resolved& r = resolved[t];
    const std::size_t kept = chosen.at({r.op, r.system.ranks});
    MeasuredSystem system = r.system;
    if (kept != t) {
      data_notes.push_back("table at line " + std::to_string(table.header_line) + " (" +
                           std::to_string(table.rows.size()) + " rows) left out: another run of " +
                           std::string(coll::to_string(r.op)) + " on " +
                           std::to_string(r.system.ranks) +
                           " ranks in the same file, the table at line " +
                           std::to_string(log.tables[kept].header_line) + " (" +
                           std::to_string(log.tables[kept].rows.size()) + " rows), is used");
      continue;
    }
    for (const std::string& note : table.notes)
      data_notes.push_back("table at line " + std::to_string(table.header_line) + ": " + note);
    if (table.timing != NcclTiming::measured)
      data_notes.push_back("table at line " + std::to_string(table.header_line) +
                           " has no time column: time = size / algbw, algbw = " +
                           (table.timing == NcclTiming::from_busbw
                                ? "busbw / bus factor " + factor_text(r.op, r.system.ranks)
                                : std::string("the published column")) +
                           " (an inference from the published bandwidth, not a measured time)");
    std::size_t zero_rows = 0;
    for (const NcclRow& row : table.rows) {
      const std::string row_where = log.source + ":" + std::to_string(row.line);
      if (row.bytes == 0) {
        ++zero_rows; // times a kernel launch, not a collective of any size
        continue;
      }
      const auto dtype = dtype_of(row.type);
      if (!dtype)
        throw InputError(row_where, "data type \"" + row.type +
                                        "\" is not modelled (expected float, half or bfloat16)");
      MeasuredPoint point;
      point.op = r.op;
      point.bytes = row.bytes;
      point.dtype = *dtype;
      point.reduction = row.redop == "avg" ? coll::Reduction::avg : coll::Reduction::sum;
      point.ranks = system.ranks;
      double us = row.out_of_place_us;
      if (row.in_place_us && column == NcclColumn::in_place) us = *row.in_place_us;
      if (row.in_place_us && column == NcclColumn::mean) us = (us + *row.in_place_us) / 2;
      if (table.timing != NcclTiming::measured) {
        const double algbw = table.timing == NcclTiming::from_busbw
                                 ? row.busbw / bus_factor(r.op, system.ranks)
                                 : row.algbw;
        if (!(algbw > 0))
          throw InputError(row_where, "a bandwidth of 0 GB/s gives no time; is the row cut?");
        us = static_cast<double>(row.bytes) / (algbw * 1e9) * 1e6;
      }
      point.seconds = us * 1e-6;
      point.where = row_where;
      set.points.push_back(point);
    }
    if (zero_rows > 0)
      data_notes.push_back("table at line " + std::to_string(table.header_line) + ": " +
                           std::to_string(zero_rows) +
                           " row(s) of 0 bytes left out (they time a launch, not a collective)");
    // The set's system: the table with the most ranks (a log may hold single-GPU baselines).
    if (system.ranks >= set.system.ranks) set.system = std::move(system);
  }
  set.system.notes.insert(set.system.notes.end(), data_notes.begin(), data_notes.end());
  return set;
}

} // namespace ddlsim::calib
