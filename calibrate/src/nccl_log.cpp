#include "ddlsim/calibrate/nccl_log.hpp"
#include "ddlsim/core/input_error.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace ddlsim::calib {
namespace {

std::vector<std::string> split_words(std::string_view line) {
  std::vector<std::string> words;
  std::istringstream in{std::string(line)};
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// Removes the per-rank prefix that launchers add: "0: " (srun --label), "[1,0]<stdout>:" (Open
// MPI --tag-output), "[1,0]<stderr>:".
std::string strip_rank_prefix(std::string_view line) {
  static const std::regex prefix(R"(^\s*(\[\d+,\d+\]<std(out|err)>:|\d+: ))");
  std::string text(line);
  std::smatch match;
  if (std::regex_search(text, match, prefix)) text = match.suffix().str();
  return text;
}

std::optional<std::uint64_t> to_unsigned(const std::string& word) {
  std::uint64_t value = 0;
  auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (error != std::errc() || end != word.data() + word.size()) return std::nullopt;
  return value;
}

std::optional<double> to_double(const std::string& word) {
  try {
    std::size_t used = 0;
    const double value = std::stod(word, &used);
    if (used != word.size() || !std::isfinite(value)) return std::nullopt;
    return value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

struct Tool {
  const char* name;
  coll::Op op;
};
constexpr std::array<Tool, 7> kTools{{{"all_reduce_perf", coll::Op::all_reduce},
                                      {"reduce_scatter_perf", coll::Op::reduce_scatter},
                                      {"all_gather_perf", coll::Op::all_gather},
                                      {"broadcast_perf", coll::Op::broadcast},
                                      {"reduce_perf", coll::Op::reduce},
                                      {"alltoall_perf", coll::Op::all_to_all},
                                      {"sendrecv_perf", coll::Op::send_recv}}};

// The nccl-tests tool a line names (a command line, or "# Collective test starting: ..."),
// matched as a whole word so that "reduce_perf" does not match "all_reduce_perf".
const Tool* tool_named_in(const std::string& line) {
  for (const Tool& tool : kTools) {
    const std::string name = tool.name;
    for (std::size_t at = line.find(name); at != std::string::npos; at = line.find(name, at + 1)) {
      const bool starts_word =
          at == 0 ||
          !(std::isalnum(static_cast<unsigned char>(line[at - 1])) || line[at - 1] == '_');
      const std::size_t after = at + name.size();
      const bool ends_word =
          after == line.size() ||
          !(std::isalnum(static_cast<unsigned char>(line[after])) || line[after] == '_');
      if (starts_word && ends_word) return &tool;
    }
  }
  return nullptr;
}

// The column layout of a results table, from its "size count type ..." header line.
struct Layout {
  std::size_t columns = 0; // tokens per data row
  int type = 2;            // index of "type"
  int redop = -1;          // index of "redop", -1 if none (old all_gather / broadcast tables)
  int root = -1;           // index of "root", -1 if none
  int time = 0;            // out-of-place time
  int in_place_time = -1;  // -1 if no in-place group
  int algbw = 0, busbw = 0;
};

std::optional<Layout> layout_of(const std::string& line) {
  std::string text = line;
  if (text.empty() || text[0] != '#') return std::nullopt;
  text.erase(0, 1);
  const std::vector<std::string> words = split_words(text);
  if (words.size() < 6 || words[0] != "size" || words[1] != "count") return std::nullopt;
  Layout layout;
  layout.columns = words.size();
  std::vector<int> times, algbws, busbws;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "root") layout.root = static_cast<int>(i);
    if (words[i] == "type") layout.type = static_cast<int>(i);
    if (words[i] == "redop") layout.redop = static_cast<int>(i);
    if (words[i] == "time") times.push_back(static_cast<int>(i));
    if (words[i] == "algbw") algbws.push_back(static_cast<int>(i));
    if (words[i] == "busbw") busbws.push_back(static_cast<int>(i));
  }
  if (times.empty() || algbws.empty() || busbws.empty()) return std::nullopt;
  layout.time = times[0];
  layout.algbw = algbws[0];
  layout.busbw = busbws[0];
  if (times.size() > 1) layout.in_place_time = times[1];
  return layout;
}

// What NCCL_DEBUG=INFO lines ("host:pid:tid [dev] NCCL INFO ...") tell about the system.
struct DebugFacts {
  int nranks = 0;
  int nnodes = 0;
  std::vector<std::string> hosts;
  std::string version;
  std::string transport;
};

void read_debug_line(const std::string& line, DebugFacts& facts) {
  static const std::regex version(R"(NCCL version (\S+))");
  static const std::regex info_host(R"(^([A-Za-z0-9._-]+):\d+:\d+ \[\d+\] NCCL (INFO|WARN))");
  static const std::regex nranks(R"(\bn[Rr]anks (\d+))");
  static const std::regex nnodes(R"(\bnNodes (\d+))");
  static const std::regex via(R"(via (NET/[A-Za-z0-9_]+|P2P/[A-Za-z0-9_/]+|SHM))");
  std::smatch m;
  if (std::regex_search(line, m, version) && facts.version.empty())
    facts.version = "NCCL " + m[1].str();
  if (!std::regex_search(line, m, info_host)) return;
  const std::string host = m[1].str();
  if (std::find(facts.hosts.begin(), facts.hosts.end(), host) == facts.hosts.end())
    facts.hosts.push_back(host);
  if (std::regex_search(line, m, nranks)) facts.nranks = std::stoi(m[1].str());
  if (std::regex_search(line, m, nnodes)) facts.nnodes = std::stoi(m[1].str());
  if (std::regex_search(line, m, via) && m[1].str().starts_with("NET/"))
    facts.transport = m[1].str();
  else if (facts.transport.empty() && line.find("Using network") != std::string::npos) {
    const std::size_t at = line.find("Using network");
    facts.transport = "NET/" + line.substr(at + 14);
  }
}

// One run: the header lines since the last table (or the file start) and the table after them.
struct RunState {
  std::string tool;
  std::optional<coll::Op> op;
  int threads_per_process = 0;
  int gpus_per_process = 0;
  std::vector<std::pair<int, std::string>> rank_hosts; // "Rank N ... on HOST device D [..] NAME"
  std::string gpu_name;
  DebugFacts debug;
};

MeasuredSystem system_of(const RunState& run) {
  MeasuredSystem system;
  system.library_version = run.debug.version;
  system.transport = run.debug.transport;
  system.gpu_name = run.gpu_name;
  if (!run.rank_hosts.empty()) {
    system.ranks = static_cast<int>(run.rank_hosts.size());
    for (const auto& [rank, host] : run.rank_hosts)
      if (std::find(system.hosts.begin(), system.hosts.end(), host) == system.hosts.end())
        system.hosts.push_back(host);
    system.nodes = static_cast<int>(system.hosts.size());
    system.notes.push_back("ranks " + std::to_string(system.ranks) + " and nodes " +
                           std::to_string(system.nodes) +
                           " from the `Rank N ... on HOST device D` lines (hosts:" +
                           [&] {
                             std::string list;
                             for (const std::string& h : system.hosts) list += " " + h;
                             return list;
                           }() +
                           ")");
  }
  if (run.debug.nranks > 0) {
    if (system.ranks == 0) system.notes.push_back("ranks from NCCL_DEBUG `nranks` lines");
    system.ranks = run.debug.nranks;
  }
  if (run.debug.nnodes > 0) {
    system.nodes = run.debug.nnodes;
    system.notes.push_back("nodes from NCCL_DEBUG `nNodes` lines");
  } else if (system.nodes == 0 && run.debug.hosts.size() > 0 && run.debug.nranks > 0) {
    system.nodes = static_cast<int>(run.debug.hosts.size());
    system.hosts = run.debug.hosts;
    system.notes.push_back("nodes from the host names of NCCL_DEBUG lines");
  }
  if (system.ranks > 0 && system.nodes > 0 && system.ranks % system.nodes == 0)
    system.gpus_per_node = system.ranks / system.nodes;
  return system;
}

} // namespace

bool looks_like_nccl_log(std::string_view text) {
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);)
    if (layout_of(strip_rank_prefix(line))) return true;
  return false;
}

NcclLog parse_nccl_log(std::string_view text, const std::string& source) {
  static const std::regex header(R"(^#\s*nThread\s+(\d+)\s+nGpus\s+(\d+))");
  static const std::regex device(
      R"(^#\s*Rank\s+(\d+)\s+(Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s*(.*)$)");
  NcclLog log;
  log.source = source;
  RunState run;
  std::optional<Layout> layout;
  NcclTable table;
  bool in_table = false;

  auto finish_table = [&] {
    if (in_table && !table.rows.empty()) {
      table.system = system_of(run);
      log.tables.push_back(std::move(table));
      RunState next;
      next.tool = run.tool;
      next.op = run.op;
      run = std::move(next);
    }
    table = NcclTable{};
    in_table = false;
  };

  std::istringstream in{std::string(text)};
  int number = 0;
  for (std::string raw; std::getline(in, raw);) {
    ++number;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    const std::string line = strip_rank_prefix(raw);
    const std::string where = source + ":" + std::to_string(number);
    std::smatch m;
    if (const Tool* tool = tool_named_in(line);
        tool && line.find("NCCL INFO") == std::string::npos) {
      if (in_table) finish_table();
      run.tool = tool->name;
      run.op = tool->op;
    }
    if (line.find("NCCL INFO") != std::string::npos ||
        line.find("NCCL version") != std::string::npos ||
        line.find("NCCL WARN") != std::string::npos) {
      read_debug_line(line, run.debug);
      continue; // NCCL_DEBUG lines may fall between a table's header and its rows
    }
    if (std::regex_search(line, m, header)) {
      if (in_table) finish_table();
      run.rank_hosts.clear();
      run.threads_per_process = std::stoi(m[1].str());
      run.gpus_per_process = std::stoi(m[2].str());
      continue;
    }
    if (std::regex_search(line, m, device)) {
      run.rank_hosts.emplace_back(std::stoi(m[1].str()), m[3].str());
      std::string name = m[4].str();
      while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back())))
        name.pop_back();
      if (run.gpu_name.empty()) run.gpu_name = name;
      continue;
    }
    if (auto found = layout_of(line)) {
      if (in_table) finish_table();
      layout = found;
      in_table = true;
      table.tool = run.tool;
      table.op = run.op;
      table.header_line = number;
      continue;
    }
    if (!in_table) continue;
    const std::vector<std::string> words = split_words(line);
    if (words.empty()) continue;
    if (words[0].starts_with("#")) {
      // "# (B) (elements) ..." units line, or the summary that ends the table.
      if (line.find("Out of bounds") != std::string::npos ||
          line.find("Avg bus bandwidth") != std::string::npos)
        finish_table();
      continue;
    }
    const std::optional<std::uint64_t> bytes = to_unsigned(words[0]);
    if (!bytes) {
      // Anything else (a shell prompt, a warning) ends the table.
      finish_table();
      continue;
    }
    if (words.size() != layout->columns)
      throw InputError(where, "a results row with " + std::to_string(words.size()) +
                                  " columns under a header of " + std::to_string(layout->columns) +
                                  " (line " + std::to_string(table.header_line) +
                                  "); is the row cut short or two logs interleaved?");
    NcclRow row;
    row.line = number;
    row.bytes = *bytes;
    const auto count = to_unsigned(words[1]);
    if (!count)
      throw InputError(where, "expected an element count in column 2, found \"" + words[1] + "\"");
    row.count = *count;
    row.type = words[static_cast<std::size_t>(layout->type)];
    row.redop = layout->redop >= 0 ? words[static_cast<std::size_t>(layout->redop)] : "none";
    if (layout->root >= 0) {
      const auto root = to_double(words[static_cast<std::size_t>(layout->root)]);
      if (!root)
        throw InputError(where, "expected a root rank, found \"" +
                                    words[static_cast<std::size_t>(layout->root)] + "\"");
      row.root = static_cast<int>(*root);
    }
    auto number_at = [&](int index, const char* what) {
      const std::string& word = words[static_cast<std::size_t>(index)];
      const auto value = to_double(word);
      if (!value || *value < 0)
        throw InputError(where, std::string("expected ") + what + " in column " +
                                    std::to_string(index + 1) + ", found \"" + word + "\"");
      return *value;
    };
    row.out_of_place_us = number_at(layout->time, "the out-of-place time (us)");
    if (row.out_of_place_us <= 0)
      throw InputError(where, "the out-of-place time is 0; a measured time must be positive");
    row.algbw = number_at(layout->algbw, "algbw (GB/s)");
    row.busbw = number_at(layout->busbw, "busbw (GB/s)");
    if (layout->in_place_time >= 0) {
      const std::string& word = words[static_cast<std::size_t>(layout->in_place_time)];
      if (word != "N/A")
        row.in_place_us = number_at(layout->in_place_time, "the in-place time (us)");
    }
    table.rows.push_back(row);
  }
  finish_table();
  if (log.tables.empty())
    throw InputError(source, "no nccl-tests results table found (a `#  size  count  type ...` "
                             "header followed by rows); is this an nccl-tests log?");
  return log;
}

NcclLog parse_nccl_log_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string(), "cannot open the file for reading");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_nccl_log(text.str(), file.string());
}

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

} // namespace

MeasuredSet to_measured_set(const NcclLog& log, const SystemHints& hints, NcclColumn column) {
  MeasuredSet set;
  set.source = log.source;
  set.kind = "nccl-tests";
  for (const NcclTable& table : log.tables) {
    const std::string where = log.source + ":" + std::to_string(table.header_line);
    std::optional<coll::Op> op = table.op ? table.op : hints.op;
    if (!op)
      throw InputError(where, "cannot tell which collective this table measures: the log never "
                              "names the nccl-tests tool (e.g. an `all_reduce_perf -b 8 ...` "
                              "command line); pass --op");
    MeasuredSystem system = table.system;
    if (system.ranks == 0) {
      system.ranks = ranks_from_bus_factor(*op, table.rows);
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
    for (const NcclRow& row : table.rows) {
      const std::string row_where = log.source + ":" + std::to_string(row.line);
      const auto dtype = dtype_of(row.type);
      if (!dtype)
        throw InputError(row_where, "data type \"" + row.type +
                                        "\" is not modelled (expected float, half or bfloat16)");
      MeasuredPoint point;
      point.op = *op;
      point.bytes = row.bytes;
      point.dtype = *dtype;
      point.reduction = row.redop == "avg" ? coll::Reduction::avg : coll::Reduction::sum;
      point.ranks = system.ranks;
      double us = row.out_of_place_us;
      if (row.in_place_us && column == NcclColumn::in_place) us = *row.in_place_us;
      if (row.in_place_us && column == NcclColumn::mean) us = (us + *row.in_place_us) / 2;
      point.seconds = us * 1e-6;
      point.where = row_where;
      set.points.push_back(point);
    }
    // The set's system: the table with the most ranks (a log may hold single-GPU baselines).
    if (system.ranks >= set.system.ranks) set.system = system;
  }
  return set;
}

} // namespace ddlsim::calib
