// workload.type = "iterative": the iteration count, the compute time per iteration and the
// collectives every iteration runs, each value per iteration given as a constant, a list, a
// geometric series or a CSV column, expanded here to one value per iteration.
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/input_file.hpp"
#include "ddlsim/core/units.hpp"
#include "workload_parser.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

namespace ddlsim::detail {
namespace {

constexpr int kMaxIterations = 10'000'000;
constexpr double kMaxComputeSeconds = 1e6;        // per iteration
constexpr double kMaxStepBytes = 1099511627776.0; // 1 TiB, as a collective workload's sizes

// The values of column `column` of a CSV file with a header line, one per data line.
std::vector<double> csv_column(const JsonValue& where, const std::filesystem::path& file,
                               const std::string& column) {
  const std::string text = read_input_file(file, "a CSV series", kMaxLogInputBytes);
  std::istringstream lines(text);
  std::string line;
  int line_number = 0;
  std::size_t index = 0;
  bool header = false;
  std::vector<double> values;
  while (std::getline(lines, line)) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos || line[0] == '#') continue;
    const std::vector<std::string> row = split_csv_row(line);
    const std::string at = file.string() + ":" + std::to_string(line_number);
    if (!header) {
      const auto found = std::find(row.begin(), row.end(), column);
      if (found == row.end())
        where.fail(file.string() + " has no column \"" + column + "\" in its header line (" + line +
                   "); name one of its columns in \"column\"");
      index = static_cast<std::size_t>(found - row.begin());
      header = true;
      continue;
    }
    if (index >= row.size() || row[index].empty())
      throw InputError(at, "no value in column \"" + column + "\"");
    std::size_t used = 0;
    double value = 0;
    try {
      value = std::stod(row[index], &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != row[index].size() || !std::isfinite(value))
      throw InputError(at, "\"" + row[index] + "\" in column \"" + column + "\" is not a number");
    values.push_back(value);
  }
  if (!header)
    where.fail(file.string() + " is empty: it needs a header line and one row per "
                               "iteration");
  return values;
}

// One value per iteration from a number, a list, {"geometric": {"start", "factor", "min"}} or
// {"csv": FILE, "column": NAME}; every value in [0, max].
std::vector<double> parse_series(const JsonValue& value, int iterations, double max,
                                 const std::filesystem::path& base_dir) {
  const Json& raw = value.raw();
  if (raw.is_number()) return std::vector<double>(std::size_t(iterations), value.number(0, max));
  std::vector<double> out;
  if (raw.is_array()) {
    const std::vector<JsonValue> items = value.array(1, std::size_t(kMaxIterations));
    if (items.size() != std::size_t(iterations))
      value.fail("the list has " + std::to_string(items.size()) + " values but there are " +
                 std::to_string(iterations) + " iterations; give one value per iteration");
    for (const JsonValue& item : items) out.push_back(item.number(0, max));
    return out;
  }
  if (!raw.is_object())
    value.fail_expected(
        "a number, a list with one value per iteration, {\"geometric\": {\"start\", "
        "\"factor\", \"min\"}} or {\"csv\": FILE, \"column\": NAME}");
  JsonObject object = value.object();
  if (auto geometric = object.optional("geometric")) {
    JsonObject g = geometric->object();
    const double start = g.required("start").number(0, max);
    const double factor = g.required("factor").positive_number(1e3);
    const double floor = g.has("min") ? g.required("min").number(0, max) : 0.0;
    g.finish();
    object.finish();
    double v = start;
    for (int i = 0; i < iterations; ++i, v *= factor) out.push_back(std::clamp(v, floor, max));
    return out;
  }
  const JsonValue file_value = object.required("csv");
  std::filesystem::path file = file_value.non_empty_string();
  if (file.is_relative()) file = base_dir / file;
  const std::string column = object.required("column").non_empty_string();
  object.finish();
  out = csv_column(file_value, file, column);
  if (out.size() != std::size_t(iterations))
    file_value.fail(file.string() + " has " + std::to_string(out.size()) + " rows but there are " +
                    std::to_string(iterations) + " iterations; give one row per iteration");
  for (std::size_t i = 0; i < out.size(); ++i)
    if (out[i] < 0 || out[i] > max)
      file_value.fail(file.string() + " row " + std::to_string(i + 1) + ": " +
                      std::to_string(out[i]) + " is outside [0, " + std::to_string(max) + "]");
  return out;
}

IterativeWorkload::Step parse_step(const JsonValue& value, int iterations,
                                   const std::filesystem::path& base_dir) {
  IterativeWorkload::Step step;
  JsonObject object = value.object();
  parse_collective_keys(object, step.collective);
  step.name = object.has("name") ? object.required("name").non_empty_string()
                                 : std::string(coll::to_string(step.collective.op));
  const std::vector<double> bytes =
      parse_series(object.required("bytes"), iterations, kMaxStepBytes, base_dir);
  const int every = object.has("every")
                        ? static_cast<int>(object.required("every").integer(1, kMaxIterations))
                        : 1;
  object.finish();
  // Whole elements of the step's dtype, to the nearest; a step runs on iterations every, 2
  // every, ... (counting from 1).
  const double element = static_cast<double>(coll::element_size(step.collective.dtype));
  std::set<std::uint64_t> distinct;
  for (int i = 0; i < iterations; ++i) {
    const bool runs = (i + 1) % every == 0;
    const auto b = runs
                       ? static_cast<std::uint64_t>(std::llround(bytes[std::size_t(i)] / element)) *
                             static_cast<std::uint64_t>(element)
                       : 0;
    step.bytes.push_back(b);
    if (b > 0) distinct.insert(b);
  }
  if (distinct.empty())
    value.fail("the step never moves a byte (every size rounds to 0 or \"every\" exceeds the " +
               std::to_string(iterations) + " iterations)");
  if (distinct.size() > kMaxSizesPerWorkload)
    value.fail("the step has " + std::to_string(distinct.size()) + " distinct sizes (at most " +
               std::to_string(kMaxSizesPerWorkload) +
               " are simulated); round the sizes or use fewer iterations");
  step.collective.sizes.assign(distinct.begin(), distinct.end());
  return step;
}

} // namespace

IterativeWorkload parse_iterative(JsonObject& workload, const std::filesystem::path& base_dir) {
  IterativeWorkload out;
  out.iterations = static_cast<int>(workload.required("iterations").integer(1, kMaxIterations));
  out.compute_seconds = workload.has("compute_seconds")
                            ? parse_series(workload.required("compute_seconds"), out.iterations,
                                           kMaxComputeSeconds, base_dir)
                            : std::vector<double>(std::size_t(out.iterations), 0.0);
  const JsonValue steps = workload.required("steps");
  for (const JsonValue& step : steps.array(1, 64))
    out.steps.push_back(parse_step(step, out.iterations, base_dir));
  return out;
}

} // namespace ddlsim::detail
