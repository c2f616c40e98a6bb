// workload.type = "job_trace": training jobs arriving over time on one shared cluster. Jobs come
// inline ("jobs") or from a trace file ("trace": CSV with a header line, or JSON), each naming a
// workload ("workloads" maps names to training-job objects) or giving one inline. Every distinct
// (workload, GPU count) is resolved once, on the cluster's first GPUs, so a 1,000-job trace
// loads in the time of its few distinct jobs; the scheduler (jobs/) moves each job to the GPUs
// it places it on.
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/input_file.hpp"
#include "ddlsim/core/suggest.hpp"
#include "workload_parser.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <sstream>

namespace ddlsim::detail {
namespace {

constexpr std::size_t kMaxJobs = 1'000'000;
constexpr double kMaxSeconds = 1e6; // about 11.6 days of arrivals or time limit
constexpr std::int64_t kMaxIterations = 1'000'000'000'000;

// A CSV trace: a header naming the columns (id, arrival_s, workload, gpus, iterations,
// time_limit_s), then one job per line; each row becomes the JSON object an inline job would be,
// so both take the same checks. Numbers stay numbers; empty cells are left out.
// A trace's workloads are data-parallel training jobs placed on the GPUs the scheduler picks.
// An llm_training workload lays its model out over the whole cluster (models/llm_layout.hpp),
// so it cannot be one of them yet: say so instead of failing on its first unknown key.
void refuse_llm(const Json& body, const std::string& path) {
  const bool typed_llm = body.contains("type") && body["type"] == "llm_training";
  if (typed_llm || body.contains("parallel"))
    throw InputError(path + (typed_llm ? "/type" : "/parallel"),
                     "a job trace places data-parallel training jobs only (model, batch_per_gpu, "
                     "...); an llm_training workload cannot be placed in a trace yet: simulate it "
                     "as its own scenario (docs/shared-cluster.md, what it does not model)");
}

std::vector<std::pair<Json, std::string>> csv_jobs(const std::filesystem::path& file) {
  const std::string text = read_input_file(file, "a job trace", kMaxLogInputBytes);
  static constexpr std::array kColumns{"id",   "arrival_s",  "workload",
                                       "gpus", "iterations", "time_limit_s"};
  std::istringstream lines(text);
  std::string line;
  int line_number = 0;
  std::vector<std::string> header;
  std::vector<std::pair<Json, std::string>> out;
  while (std::getline(lines, line)) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos || line[0] == '#') continue;
    const std::string at = file.string() + ":" + std::to_string(line_number);
    const std::vector<std::string> row = split_csv_row(line);
    if (header.empty()) {
      header = row;
      for (const std::string& name : header)
        if (std::find(kColumns.begin(), kColumns.end(), name) == kColumns.end()) {
          const std::vector<std::string> known(kColumns.begin(), kColumns.end());
          throw InputError(at, "unknown column \"" + name + "\"" + did_you_mean(name, known) +
                                   "; the columns are " + join_choices(known));
        }
      continue;
    }
    if (row.size() != header.size())
      throw InputError(at, "has " + std::to_string(row.size()) + " cells for the header's " +
                               std::to_string(header.size()) + " columns");
    Json job = Json::object();
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (row[c].empty()) continue;
      const std::string& name = header[c];
      if (name == "id" || name == "workload") {
        job[name] = row[c];
        continue;
      }
      std::size_t used = 0;
      double value = 0;
      try {
        value = std::stod(row[c], &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != row[c].size())
        throw InputError(at, "column \"" + name + "\" holds \"" + row[c] + "\"; give a number");
      if (name == "gpus" || name == "iterations") {
        if (value != std::floor(value) || std::fabs(value) > 9e15)
          throw InputError(at, "column \"" + name + "\" holds " + row[c] + "; give a whole number");
        job[name] = static_cast<std::int64_t>(value);
      } else {
        job[name] = value;
      }
    }
    out.emplace_back(std::move(job), at);
  }
  return out;
}

// A JSON trace: {"jobs": [...]} or the list itself.
std::vector<std::pair<Json, std::string>> json_jobs(const std::filesystem::path& file) {
  const Json json = parse_json_file(file, "a job trace");
  const Json* list = &json;
  std::string prefix = file.string();
  if (json.is_object()) {
    if (!json.contains("jobs") || json.size() != 1)
      throw InputError(file.string(), "a JSON job trace is a list of jobs or {\"jobs\": [...]}");
    list = &json["jobs"];
    prefix += "/jobs";
  }
  if (!list->is_array())
    throw InputError(prefix, "expected a list of jobs, found " + std::string(list->type_name()));
  std::vector<std::pair<Json, std::string>> out;
  for (std::size_t i = 0; i < list->size(); ++i)
    out.emplace_back((*list)[i], prefix + "/" + std::to_string(i));
  return out;
}

} // namespace

JobTraceWorkload parse_job_trace(JsonObject& workload, const topo::ClusterSpec& cluster,
                                 const std::filesystem::path& base_dir) {
  JobTraceWorkload out;
  // A checked cluster has at most 2^20 GPUs (cluster_spec.hpp), so the count fits an int.
  const int cluster_gpus = static_cast<int>(topo::total_gpus(cluster));
  // Named workloads: training-job objects without "gpus" (each trace job gives its count).
  std::map<std::string, Json> named;
  std::map<std::string, std::string> named_path;
  if (auto v = workload.optional("workloads")) {
    if (!v->raw().is_object() || v->raw().empty())
      v->fail("expected an object of named workloads, e.g. {\"resnet\": {\"model\": "
              "\"resnet50\", \"batch_per_gpu\": 32}}");
    for (const auto& [name, body] : v->raw().items()) {
      const std::string path = v->path() + "/" + name;
      if (!body.is_object()) throw InputError(path, "expected a training job object");
      refuse_llm(body, path);
      if (body.contains("gpus"))
        throw InputError(path + "/gpus", "a named workload has no GPU count; each job of the "
                                         "trace gives its own \"gpus\"");
      named[name] = body;
      named_path[name] = path;
    }
  }
  if (auto v = workload.optional("scheduler")) {
    JsonObject s = v->object();
    if (auto q = s.optional("queue"))
      out.queue = q->choice(std::vector<std::string>{"fifo", "easy"});
    if (auto p = s.optional("placement"))
      out.placement =
          p->choice(std::vector<std::string>{"packed", "spread", "rail_aligned", "network_aware"});
    s.finish();
  }
  if (auto v = workload.optional("iterations_simulated"))
    out.iterations_simulated = static_cast<int>(v->integer(1, 64));
  // The jobs: inline, or from a file (not both).
  std::vector<std::pair<Json, std::string>> entries;
  const std::optional<JsonValue> inline_jobs = workload.optional("jobs");
  const std::optional<JsonValue> trace = workload.optional("trace");
  if (inline_jobs && trace)
    trace->fail("give the jobs inline in \"jobs\" or in a trace file, not both");
  if (inline_jobs) {
    for (const JsonValue& job : inline_jobs->array(1, kMaxJobs))
      entries.emplace_back(job.raw(), job.path());
  } else if (trace) {
    const std::filesystem::path file = base_dir / trace->non_empty_string();
    const std::string ext = file.extension().string();
    if (ext == ".csv")
      entries = csv_jobs(file);
    else if (ext == ".json")
      entries = json_jobs(file);
    else
      trace->fail("a job trace is a .csv or a .json file; found \"" + file.string() + "\"");
    if (entries.empty()) trace->fail(file.string() + " holds no jobs");
    if (entries.size() > kMaxJobs) trace->fail("more than 1,000,000 jobs");
  } else {
    throw InputError(workload.path(), "a job_trace workload needs \"jobs\" (a list) or \"trace\" "
                                      "(a CSV or JSON file of jobs)");
  }
  std::vector<std::string> names;
  for (const auto& [name, body] : named) names.push_back(name);
  std::map<std::string, std::string> id_at;
  std::map<std::pair<std::size_t, int>, std::size_t> template_of;
  std::vector<Json> workload_bodies;
  std::vector<std::string> workload_paths;
  for (const auto& [name, body] : named) {
    out.workload_names.push_back(name);
    workload_bodies.push_back(body);
    workload_paths.push_back(named_path[name]);
  }
  for (const auto& [json, path] : entries) {
    const JsonValue value(json, path);
    JsonObject object = value.object();
    TraceJob job;
    job.where = path;
    const JsonValue id = object.required("id");
    job.id = id.raw().is_number_integer() ? std::to_string(id.raw().get<std::int64_t>())
                                          : id.non_empty_string();
    if (auto [it, fresh] = id_at.emplace(job.id, path); !fresh)
      id.fail("job id \"" + job.id + "\" is already used by the job at " + it->second +
              "; give every job its own id");
    const JsonValue arrival = object.required("arrival_s");
    if (arrival.raw().is_number() && arrival.raw().get<double>() < 0)
      arrival.fail("is negative (" + arrival.raw().dump() +
                   "); arrival times are seconds from the trace's start, 0 or later");
    job.arrival_seconds = arrival.number(0, kMaxSeconds);
    const JsonValue gpus = object.required("gpus");
    if (gpus.raw().is_number_integer() && gpus.raw().get<std::int64_t>() > cluster_gpus)
      gpus.fail("asks for " + gpus.raw().dump() + " GPUs but the cluster has " +
                std::to_string(cluster_gpus) + "; lower it or add nodes to the topology");
    job.gpus = static_cast<int>(gpus.integer(1, cluster_gpus));
    if (auto v = object.optional("iterations")) job.iterations = v->integer(1, kMaxIterations);
    if (auto v = object.optional("time_limit_s")) {
      if (v->raw().is_number() && v->raw().get<double>() < 0)
        v->fail("is negative; give the job's time limit in seconds");
      job.time_limit_seconds = v->positive_number(kMaxSeconds);
    }
    if (job.iterations == 0 && job.time_limit_seconds == 0)
      throw InputError(path, "job \"" + job.id +
                                 "\" has no work: give \"iterations\" or "
                                 "\"time_limit_s\" (or both: a cap)");
    const JsonValue w = object.required("workload");
    if (w.raw().is_string()) {
      const std::string name = w.non_empty_string();
      const auto found = std::find(names.begin(), names.end(), name);
      if (found == names.end())
        w.fail("names no workload: \"" + name + "\"" + did_you_mean(name, names) +
               (names.empty() ? "; add it under the workload's \"workloads\""
                              : "; the workloads are " + join_choices(names)));
      job.workload = static_cast<std::size_t>(found - names.begin());
    } else {
      if (!w.raw().is_object())
        w.fail("expected the name of one of \"workloads\" or a training job object");
      refuse_llm(w.raw(), w.path());
      if (w.raw().contains("gpus"))
        throw InputError(w.path() + "/gpus", "the job's GPU count is its \"gpus\", not its "
                                             "workload's");
      job.workload = out.workload_names.size();
      out.workload_names.push_back(job.id + "/workload");
      workload_bodies.push_back(w.raw());
      workload_paths.push_back(w.path());
    }
    object.finish();
    auto [it, fresh] = template_of.emplace(std::make_pair(job.workload, job.gpus), 0);
    if (fresh) {
      Json body = workload_bodies[job.workload];
      body["gpus"] = job.gpus;
      it->second = out.templates.size();
      const std::string name = out.workload_names[job.workload];
      out.templates.push_back(
          {job.workload, parse_training_job(JsonValue(body, workload_paths[job.workload]), cluster,
                                            base_dir, name)});
      if (!out.templates.back().job.server_gpus.empty())
        throw InputError(workload_paths[job.workload] + "/params/dedicated_servers",
                         "a trace job runs on the GPUs the scheduler gives it; dedicated "
                         "parameter servers are not placed: use colocated servers");
    }
    job.template_index = it->second;
    out.jobs.push_back(std::move(job));
  }
  std::stable_sort(out.jobs.begin(), out.jobs.end(), [](const TraceJob& a, const TraceJob& b) {
    return a.arrival_seconds < b.arrival_seconds;
  });
  return out;
}

std::vector<std::string> split_csv_row(const std::string& row) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(row);
  while (std::getline(in, cell, ',')) {
    const auto begin = cell.find_first_not_of(" \t\r");
    const auto end = cell.find_last_not_of(" \t\r");
    out.push_back(begin == std::string::npos ? "" : cell.substr(begin, end - begin + 1));
  }
  if (!row.empty() && row.back() == ',') out.push_back("");
  return out;
}

} // namespace ddlsim::detail
