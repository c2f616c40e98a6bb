#include "ddlsim/calibrate/nccl_log.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/input_file.hpp"

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

// The column layout of a results table, from its "size count type ..." header line (with the
// `#` nccl-tests prints, or without it where a web page stripped it), or a bandwidth-only
// markdown table "| Message Size (Bytes) | busbw (GB/s) |" (one bandwidth per size, no time).
struct Layout {
  std::size_t columns = 0; // tokens per data row
  int type = 2;            // index of "type"
  int redop = -1;          // index of "redop", -1 if none (old all_gather / broadcast tables)
  int root = -1;           // index of "root", -1 if none
  int time = 0;            // out-of-place time
  int in_place_time = -1;  // -1 if no in-place group
  int algbw = 0, busbw = 0;
  NcclTiming timing = NcclTiming::measured; // else: bandwidth-only, size in 0, bandwidth in 1
  std::string bandwidth_header;             // bandwidth-only: the column's header as published
};

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The cells of a markdown table row "| a | b |" (trimmed), or nothing for other lines.
std::optional<std::vector<std::string>> markdown_cells(const std::string& line) {
  const std::size_t first = line.find_first_not_of(" \t");
  if (first == std::string::npos || line[first] != '|') return std::nullopt;
  std::vector<std::string> cells;
  std::string cell;
  for (std::size_t i = first + 1; i < line.size(); ++i) {
    if (line[i] != '|') {
      cell += line[i];
      continue;
    }
    const std::size_t a = cell.find_first_not_of(" \t"), b = cell.find_last_not_of(" \t");
    cells.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
    cell.clear();
  }
  if (cell.find_first_not_of(" \t") != std::string::npos) cells.push_back(cell); // no closing |
  return cells;
}

bool is_markdown_rule(const std::vector<std::string>& cells) {
  return !cells.empty() && std::all_of(cells.begin(), cells.end(), [](const std::string& c) {
    return !c.empty() && c.find_first_not_of("-: ") == std::string::npos;
  });
}

std::optional<Layout> bandwidth_only_layout(const std::vector<std::string>& cells) {
  if (cells.size() != 2) return std::nullopt;
  const std::string size = lower(cells[0]), bandwidth = lower(cells[1]);
  if (size.find("size") == std::string::npos) return std::nullopt;
  const bool algbw = bandwidth.find("algbw") != std::string::npos ||
                     bandwidth.find("algorithm bandwidth") != std::string::npos;
  if (!algbw && bandwidth.find("gb/s") == std::string::npos &&
      bandwidth.find("busbw") == std::string::npos)
    return std::nullopt;
  Layout layout;
  layout.columns = 2;
  layout.timing = algbw ? NcclTiming::from_algbw : NcclTiming::from_busbw;
  layout.bandwidth_header = cells[1];
  return layout;
}

std::optional<Layout> layout_of(const std::string& line) {
  if (auto cells = markdown_cells(line); cells && cells->size() == 2)
    return bandwidth_only_layout(*cells);
  std::string text = line;
  const std::size_t first = text.find_first_not_of(" \t");
  if (first != std::string::npos && text[first] == '#') text.erase(0, first + 1);
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

// A line that stands for rows left out of a published table: "...", "…", "[...]", "(...)".
bool is_elision(const std::vector<std::string>& words) {
  if (words.empty()) return false;
  std::string word = words[0];
  if (word.size() >= 2 && (word.front() == '[' || word.front() == '(') &&
      (word.back() == ']' || word.back() == ')'))
    word = word.substr(1, word.size() - 2);
  return word == "\u2026" || (word.size() >= 3 && word.find_first_not_of('.') == std::string::npos);
}

// A size as web pages label nccl-tests rows: "1048576", "65K", "1G", "8 MiB". Decimal
// suffixes are 1000^k, binary ones (Ki, KiB) 1024^k; a suffixed label within 5% of a power of
// two, read either way, is that power of two (`snapped`): the labels round or truncate the sizes
// of a run that steps by a factor of 2 ("65K" = 65536, "134M" = 134217728, "1G" = 2^30).
struct SizeLabel {
  std::uint64_t bytes = 0;
  bool snapped = false;
};
std::optional<SizeLabel> size_label(const std::string& word) {
  if (auto exact = to_unsigned(word)) return SizeLabel{*exact, false};
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(word, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  std::string suffix = word.substr(used);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b')) suffix.pop_back();
  const bool binary = !suffix.empty() && suffix.back() == 'i';
  if (binary) suffix.pop_back();
  if (suffix.size() != 1 || !(value >= 0)) return std::nullopt;
  const std::string units = "KMGT";
  const std::size_t power = units.find(static_cast<char>(std::toupper(suffix[0])));
  if (power == std::string::npos) return std::nullopt;
  const double exponent = static_cast<double>(power + 1);
  const double bytes = value * std::pow(binary ? 1024.0 : 1000.0, exponent);
  // A page may round by 1000s ("65K", "134M") or by 1024s ("1G" = 2^30, 7% above 10^9): the
  // nearest power of two to either reading, when within 5% of it.
  double best = 0, best_distance = 0.05;
  for (const double reading : {bytes, value * std::pow(1024.0, exponent)}) {
    const double two = std::exp2(std::round(std::log2(std::max(reading, 1.0))));
    if (std::abs(reading / two - 1) < best_distance) {
      best = two;
      best_distance = std::abs(reading / two - 1);
    }
  }
  if (best > 0) return SizeLabel{static_cast<std::uint64_t>(best), bytes != best};
  return SizeLabel{static_cast<std::uint64_t>(std::llround(bytes)), false};
}

// What NCCL_DEBUG=INFO lines ("host:pid:tid [dev] NCCL INFO ...") tell about the system.
struct DebugFacts {
  int nranks = 0;
  int nnodes = 0;
  std::vector<std::string> hosts;
  std::string version;
  std::string version_from; // which line said it
  std::string transport;
};

void read_debug_line(const std::string& line, DebugFacts& facts) {
  static const std::regex version(R"(NCCL version (\S+))");
  static const std::regex library(R"(nccl-library\s*[=:]\s*(\d+(\.\d+)*))");
  static const std::regex info_host(R"(^([A-Za-z0-9._-]+):\d+:\d+ \[\d+\] NCCL (INFO|WARN))");
  static const std::regex nranks(R"(\bn[Rr]anks (\d+))");
  static const std::regex nnodes(R"(\bnNodes (\d+))");
  static const std::regex via(R"(via (NET/[A-Za-z0-9_]+|P2P/[A-Za-z0-9_/]+|SHM))");
  std::smatch m;
  if (std::regex_search(line, m, version) && facts.version.empty()) {
    facts.version = "NCCL " + m[1].str();
    facts.version_from = "`NCCL version` line";
  }
  if (facts.version.empty() && std::regex_search(line, m, library)) {
    // nccl-tests >= 2.13 prints NCCL_VERSION_CODE: major x 10000 + minor x 100 + patch since
    // NCCL 2.9, major x 1000 + minor x 100 + patch before (nccl.h.in, NCCL_VERSION macro).
    const std::string text = m[1].str();
    if (text.find('.') != std::string::npos) {
      facts.version = "NCCL " + text;
    } else {
      const long code = std::stol(text);
      const long major = code >= 10000 ? code / 10000 : code / 1000;
      const long minor = code >= 10000 ? code % 10000 / 100 : code % 1000 / 100;
      const long patch = code % 100;
      facts.version = "NCCL " + std::to_string(major) + "." + std::to_string(minor) + "." +
                      std::to_string(patch);
    }
    facts.version_from = "`nccl-library` header";
  }
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
  if (!run.debug.version.empty())
    system.notes.push_back(run.debug.version + " from the " + run.debug.version_from);
  system.transport = run.debug.transport;
  system.gpu_name = run.gpu_name;
  if (!run.rank_hosts.empty()) {
    system.ranks = static_cast<int>(run.rank_hosts.size());
    // A page that keeps only the first and last `Rank` lines: the highest rank number counts.
    int highest = 0;
    for (const auto& [rank, host] : run.rank_hosts) highest = std::max(highest, rank);
    if (highest + 1 > system.ranks) {
      system.notes.push_back("`Rank` lines elided (" + std::to_string(system.ranks) +
                             " lines, highest rank " + std::to_string(highest) + "): ranks " +
                             std::to_string(highest + 1) +
                             " from the highest rank number; nodes not counted from the hosts "
                             "of the lines kept");
      system.ranks = highest + 1;
    }
    for (const auto& [rank, host] : run.rank_hosts)
      if (std::find(system.hosts.begin(), system.hosts.end(), host) == system.hosts.end())
        system.hosts.push_back(host);
    if (highest + 1 == static_cast<int>(run.rank_hosts.size()))
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

NcclLog parse_nccl_log(std::string_view text, const std::string& source, bool lenient) {
  static const std::regex header(R"(^\s*#?\s*nThread\s+(\d+)\s+nGpus\s+(\d+))");
  static const std::regex device(
      R"(^\s*#?\s*Rank\s+(\d+)\s+(Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+\d+\s+\[[^\]]*\]\s*(.*)$)");
  NcclLog log;
  log.source = source;
  RunState run;
  std::optional<Layout> layout;
  NcclTable table;
  bool in_table = false;
  // An elision line waiting for the row after it, so that its note can say what it cut.
  std::optional<std::pair<int, std::string>> elided;
  bool snapped_sizes = false;

  auto note_elision = [&](const std::string& next) {
    if (!elided) return;
    const std::string before =
        table.rows.empty() ? "the header" : std::to_string(table.rows.back().bytes) + " B";
    table.notes.push_back("line " + std::to_string(elided->first) + " `" + elided->second +
                          "` elides rows between " + before + " and " + next +
                          " (kept the rows on both sides; the elided sizes are not measured)");
    elided.reset();
  };
  auto finish_table = [&] {
    if (in_table && table.rows.empty())
      throw InputError(source + ":" + std::to_string(table.header_line),
                       "a results table header with no rows under it (the run failed or the "
                       "table was cut); remove the header, or restore the rows");
    if (in_table) {
      note_elision("the end of the table");
      if (snapped_sizes)
        table.notes.push_back("size labels such as \"65K\" or \"134M\" read as the nearest power "
                              "of two (65536 B, 134217728 B): nccl-tests steps sizes by a "
                              "factor of 2 and the page rounded them");
      if (table.timing == NcclTiming::from_busbw &&
          lower(layout->bandwidth_header).find("busbw") == std::string::npos)
        table.notes.push_back("column \"" + layout->bandwidth_header +
                              "\" read as busbw, the figure nccl-tests reports (the header "
                              "does not say busbw or algbw)");
      table.system = system_of(run);
      log.tables.push_back(std::move(table));
      RunState next;
      next.tool = run.tool;
      next.op = run.op;
      run = std::move(next);
    }
    table = NcclTable{};
    in_table = false;
    elided.reset();
    snapped_sizes = false;
  };

  // A table that prose ended (not its summary lines): a results row after it is a row lost in
  // the middle of the table, never silently dropped.
  std::optional<Layout> ended_layout;
  std::string ended_by;
  auto end_by_prose = [&](int line, const std::string& prose) {
    if (in_table && layout && layout->timing == NcclTiming::measured) {
      ended_layout = layout;
      ended_by = "line " + std::to_string(line) + " `" + prose + "`";
    }
    finish_table();
  };

  int number = 0;
  auto read_line = [&](std::string raw) {
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    std::string line = strip_rank_prefix(raw);
    const std::string where = source + ":" + std::to_string(number);
    // A markdown table row: its rule line says nothing; a full nccl-tests row in cells reads
    // as the same row without the bars. A two-cell row stays as it is (bandwidth-only tables).
    if (auto cells = markdown_cells(line)) {
      if (is_markdown_rule(*cells)) return;
      if (cells->size() != 2) std::replace(line.begin(), line.end(), '|', ' ');
    }
    std::smatch m;
    if (const Tool* tool = tool_named_in(line);
        tool && line.find("NCCL INFO") == std::string::npos) {
      if (in_table) finish_table();
      run.tool = tool->name;
      run.op = tool->op;
    }
    if (line.find("NCCL INFO") != std::string::npos ||
        line.find("NCCL version") != std::string::npos ||
        line.find("nccl-library") != std::string::npos ||
        line.find("NCCL WARN") != std::string::npos) {
      read_debug_line(line, run.debug);
      return; // NCCL_DEBUG lines may fall between a table's header and its rows
    }
    if (std::regex_search(line, m, header)) {
      if (in_table) finish_table();
      run.rank_hosts.clear();
      run.threads_per_process = std::stoi(m[1].str());
      run.gpus_per_process = std::stoi(m[2].str());
      return;
    }
    if (std::regex_search(line, m, device)) {
      run.rank_hosts.emplace_back(std::stoi(m[1].str()), m[3].str());
      std::string name = m[4].str();
      while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back())))
        name.pop_back();
      if (run.gpu_name.empty()) run.gpu_name = name;
      return;
    }
    if (auto found = layout_of(line)) {
      if (in_table) finish_table();
      ended_layout.reset();
      layout = found;
      in_table = true;
      table.tool = run.tool;
      table.op = run.op;
      table.header_line = number;
      table.timing = found->timing;
      return;
    }
    if (!in_table) {
      // A row of the table prose ended above: the table was split (a warning printed in the
      // middle of it), and its rows after the split must not be lost without a word.
      const std::vector<std::string> words = split_words(line);
      if (ended_layout && !words.empty() && to_unsigned(words[0]) &&
          words.size() == ended_layout->columns)
        throw InputError(where, "a results row after its table ended at " + ended_by +
                                    "; remove the line that splits the table (or pass "
                                    "--lenient to skip such rows)");
      return;
    }
    std::vector<std::string> words;
    if (layout->timing != NcclTiming::measured) {
      const auto cells = markdown_cells(line);
      if (cells)
        words = *cells;
      else
        words = split_words(line);
    } else {
      words = split_words(line);
    }
    if (words.empty() || (words.size() == 2 && words[0].empty() && words[1].empty())) return;
    if (words[0].starts_with("#") || words[0].starts_with("(")) {
      // "# (B) (elements) ..." units line (its `#` stripped on some pages), or the summary that
      // ends the table.
      if (line.find("Out of bounds") != std::string::npos ||
          line.find("Avg bus bandwidth") != std::string::npos)
        finish_table();
      return;
    }
    if (is_elision(words)) {
      elided = {number, words[0]};
      return;
    }
    if (layout->timing != NcclTiming::measured) {
      const auto size = size_label(words[0]);
      if (!size) {
        finish_table(); // prose after the table
        return;
      }
      if (words.size() != 2)
        throw InputError(where, "a row with " + std::to_string(words.size()) +
                                    " cells under the two-column header at line " +
                                    std::to_string(table.header_line));
      const auto bandwidth = to_double(words[1]);
      if (!bandwidth || *bandwidth <= 0)
        throw InputError(where, "expected a bandwidth in GB/s (> 0) in the second cell, found \"" +
                                    words[1] + "\"");
      note_elision(std::to_string(size->bytes) + " B");
      snapped_sizes |= size->snapped;
      NcclRow row;
      row.line = number;
      row.bytes = size->bytes;
      row.type = "float"; // bandwidth-only tables do not say; the bandwidth does not depend on it
      row.redop = "sum";
      (layout->timing == NcclTiming::from_algbw ? row.algbw : row.busbw) = *bandwidth;
      table.rows.push_back(row);
      return;
    }
    const std::optional<std::uint64_t> bytes = to_unsigned(words[0]);
    if (!bytes) {
      // A row shaped like the table's (its column count, an element count second) whose size
      // does not parse is a damaged row, not prose: dropping it silently loses a measurement.
      if (words.size() == layout->columns && words.size() > 1 && to_unsigned(words[1]))
        throw InputError(where, "expected a size in bytes in column 1, found \"" + words[0] +
                                    "\" (or pass --lenient to skip the row)");
      // Anything else (a shell prompt, a warning) ends the table.
      std::string prose = line;
      prose.erase(0, prose.find_first_not_of(" \t"));
      end_by_prose(number, prose.substr(0, 60));
      return;
    }
    if (words.size() != layout->columns)
      throw InputError(where, "a results row with " + std::to_string(words.size()) +
                                  " columns under a header of " + std::to_string(layout->columns) +
                                  " (line " + std::to_string(table.header_line) +
                                  "); is the row cut short or two logs interleaved?");
    note_elision(std::to_string(*bytes) + " B");
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
  };

  std::istringstream in{std::string(text)};
  for (std::string raw; std::getline(in, raw);) {
    ++number;
    try {
      read_line(raw);
    } catch (const InputError& e) {
      if (!lenient || e.where() != source + ":" + std::to_string(number)) throw;
      log.warnings.push_back(e.where() + ": " + e.reason() + " (row skipped: --lenient)");
    }
  }
  finish_table();
  if (log.tables.empty())
    throw InputError(source, "no nccl-tests results table found (a `#  size  count  type ...` "
                             "header followed by rows); is this an nccl-tests log?");
  return log;
}

NcclLog parse_nccl_log_file(const std::filesystem::path& file, bool lenient) {
  return parse_nccl_log(read_input_file(file, "an nccl-tests log", kMaxLogInputBytes),
                        file.string(), lenient);
}

} // namespace ddlsim::calib
