#include "ddlsim/sim/report.hpp"

#include <cstdio>

namespace ddlsim::sim {

double CollectiveRow::algbw_gbytes_per_second() const {
  return time > 0 ? static_cast<double>(bytes) / seconds() / 1e9 : 0.0;
}

double bus_bandwidth_factor(coll::Op op, int ranks) {
  const double n = ranks;
  switch (op) {
  case coll::Op::all_reduce:
    return ranks > 1 ? 2 * (n - 1) / n : 0;
  case coll::Op::reduce_scatter:
  case coll::Op::all_gather:
  case coll::Op::all_to_all:
    return ranks > 1 ? (n - 1) / n : 0;
  case coll::Op::broadcast:
  case coll::Op::reduce:
  case coll::Op::send_recv:
    return 1;
  }
  return 1;
}

void print_table(const CollectiveReport& report, std::ostream& out) {
  char line[256];
  std::snprintf(line, sizeof line, "# %s: %s on %d ranks, %s engine, seed %llu\n",
                report.scenario.c_str(), std::string(coll::to_string(report.op)).c_str(),
                report.ranks, report.engine.c_str(), static_cast<unsigned long long>(report.seed));
  out << line;
  std::snprintf(line, sizeof line, "#%12s %12s %6s %6s %12s %10s %10s  %s\n", "size", "count",
                "type", "redop", "time(us)", "algbw", "busbw", "algorithm");
  out << line;
  std::snprintf(line, sizeof line, "#%12s %12s %6s %6s %12s %10s %10s\n", "(B)", "(elements)", "",
                "", "", "(GB/s)", "(GB/s)");
  out << line;
  const double factor = bus_bandwidth_factor(report.op, report.ranks);
  for (const CollectiveRow& row : report.rows) {
    const double algbw = row.algbw_gbytes_per_second();
    std::snprintf(line, sizeof line, " %12llu %12llu %6s %6s %12.2f %10.2f %10.2f  %s\n",
                  static_cast<unsigned long long>(row.bytes),
                  static_cast<unsigned long long>(row.count),
                  std::string(coll::to_string(row.dtype)).c_str(),
                  std::string(coll::to_string(row.reduction)).c_str(), ps_to_us(row.time), algbw,
                  algbw * factor, row.algorithm.c_str());
    out << line;
    if (!row.why.empty()) out << "#   auto chose " << row.algorithm << ": " << row.why << "\n";
    if (!row.nccl_choice.empty()) {
      std::snprintf(line, sizeof line, "#   nccl chose %s: %s (NCCL's model: %.2f us)\n",
                    format_bytes(row.bytes).c_str(), row.nccl_choice.c_str(), row.nccl_model_us);
      out << line;
    }
  }
}

Json to_json(const CollectiveReport& report) {
  Json rows = Json::array();
  const double factor = bus_bandwidth_factor(report.op, report.ranks);
  for (const CollectiveRow& row : report.rows) {
    Json j = {{"bytes", row.bytes},
              {"count", row.count},
              {"type", coll::to_string(row.dtype)},
              {"redop", coll::to_string(row.reduction)},
              {"algorithm", row.algorithm},
              {"time_ps", row.time},
              {"time_us", ps_to_us(row.time)},
              {"algbw_gbytes_per_second", row.algbw_gbytes_per_second()},
              {"busbw_gbytes_per_second", row.algbw_gbytes_per_second() * factor},
              {"steps", row.steps},
              {"transfers", row.transfers},
              {"bytes_sent", row.bytes_sent},
              {"peak_flows_per_link", row.peak_flows_per_link}};
    if (!row.why.empty()) j["auto_reason"] = row.why;
    if (!row.nccl_choice.empty())
      j["nccl"] = {{"choice", row.nccl_choice}, {"model_us", row.nccl_model_us}};
    if (!row.engine_details.is_null()) j[report.engine] = row.engine_details;
    rows.push_back(std::move(j));
  }
  return {
      {"scenario", report.scenario}, {"engine", report.engine}, {"op", coll::to_string(report.op)},
      {"ranks", report.ranks},       {"seed", report.seed},     {"results", std::move(rows)}};
}

} // namespace ddlsim::sim
