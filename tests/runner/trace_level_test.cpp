// `ddlsim run --trace-level`: a bundled training scenario's trace at each level is valid JSON
// whose every span is on a named process and track; collectives gives one span per collective
// on each rank's communication channel, iterations one per training iteration lasting what the
// report says; both are far smaller than the step trace.
#include "ddlsim/runner/run_report.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/topologies/builders.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <sstream>

using namespace ddlsim;

namespace {

struct Trace {
  std::size_t spans = 0;
  std::set<std::pair<int, int>> span_tracks;        // (pid, tid) of every span
  std::map<std::pair<int, int>, std::string> names; // thread_name metadata
  std::set<int> span_processes, named_processes;
  std::vector<Json> events;
};

Trace written(const runner::RunReport& report, sim::TraceLevel level) {
  std::ostringstream text;
  runner::write_trace(report, text, level);
  const Json json = Json::parse(text.str()); // throws on invalid JSON
  Trace trace;
  for (const Json& e : json.at("traceEvents")) {
    const std::string ph = e.at("ph").get<std::string>();
    const int pid = e.at("pid").get<int>();
    if (ph == "X") {
      ++trace.spans;
      trace.span_tracks.emplace(pid, e.at("tid").get<int>());
      trace.span_processes.insert(pid);
    } else if (ph == "M" && e.at("name") == "thread_name") {
      trace.names[{pid, e.at("tid").get<int>()}] = e.at("args").at("name").get<std::string>();
    } else if (ph == "M" && e.at("name") == "process_name") {
      trace.named_processes.insert(pid);
    }
    trace.events.push_back(e);
  }
  return trace;
}

void check_names(const Trace& trace) {
  for (const auto& track : trace.span_tracks) {
    INFO("pid " << track.first << " tid " << track.second);
    CHECK(trace.names.count(track) == 1);
  }
  for (const int pid : trace.span_processes) CHECK(trace.named_processes.count(pid) == 1);
}

runner::RunReport training_run() {
  Scenario scenario = load_scenario_file(DDLSIM_SCENARIO_DIR "/resnet50-cloud-vs-dgx.json");
  scenario.workload.training.iterations = 2;
  runner::RunSettings settings;
  settings.trace = true;
  return runner::run_scenario(scenario, scenario.name, settings);
}

} // namespace

TEST_CASE("trace level: a training trace at each level names its tracks and shrinks") {
  const runner::RunReport report = training_run();
  REQUIRE(report.trace.size() == 1);
  REQUIRE(report.jobs.size() == 1);
  const models::JobIteration& job = report.jobs.front();
  const std::size_t ranks = job.gpus.size();
  REQUIRE(job.iteration_times.size() == 2);

  const Trace steps = written(report, sim::TraceLevel::steps);
  const Trace collectives = written(report, sim::TraceLevel::collectives);
  const Trace iterations = written(report, sim::TraceLevel::iterations);
  check_names(steps);
  check_names(collectives);
  check_names(iterations);
  // The step trace has a span per step; the coarser ones far fewer.
  CHECK(steps.spans == report.trace.front().steps.size());
  CHECK(collectives.spans * 20 < steps.spans);
  CHECK(iterations.spans < collectives.spans);
  CHECK(iterations.spans * 100 < steps.spans);
  // Each rank: an iteration span, a compute and a communication phase per iteration.
  CHECK(iterations.spans == 3 * ranks * job.iteration_times.size());

  // Every rank's channel 1 carries every collective of every iteration, one span each.
  std::map<int, std::size_t> per_channel1;
  for (const Json& e : collectives.events)
    if (e.at("ph") == "X" && e.at("tid").get<int>() % 1000 == 1) {
      CHECK(e.at("name").get<std::string>().starts_with("collective "));
      ++per_channel1[e.at("tid").get<int>() / 1000];
    }
  CHECK(per_channel1.size() == ranks);
  for (const auto& [rank, count] : per_channel1) {
    INFO("rank " << rank);
    CHECK(count == std::size_t(job.collectives) * job.iteration_times.size());
  }

  // An iteration span lasts what the report says the iteration took, and the steady-state
  // one's compute is the GPU's compute in the report.
  std::map<int, Picoseconds> compute_of;
  for (const models::GpuIteration& gpu : job.gpus) compute_of[gpu.rank] = gpu.compute;
  std::size_t checked = 0;
  for (const Json& e : iterations.events) {
    if (e.at("ph") != "X" || e.at("tid").get<int>() % 1000 != 0) continue;
    const int rank = e.at("tid").get<int>() / 1000;
    const std::string name = e.at("name").get<std::string>();
    REQUIRE((name == "iteration 0" || name == "iteration 1"));
    const std::size_t k = name == "iteration 0" ? 0 : 1;
    INFO("rank " << rank << " " << name);
    CHECK(e.at("dur").get<double>() == Approx(ps_to_us(job.iteration_times[k])).epsilon(1e-9));
    if (k == 1)
      CHECK(e.at("args").at("compute_us").get<double>() ==
            Approx(ps_to_us(compute_of.at(rank))).epsilon(1e-9));
    CHECK(e.at("args").at("communication_us").get<double>() > 0);
    ++checked;
  }
  CHECK(checked == 2 * ranks);
}

TEST_CASE("trace level: every rank's tracks name its GPU, node and model") {
  // resnet50-cloud-vs-dgx.json: 16 nodes of 8 V100; rank r is GPU r % 8 of node r / 8.
  const runner::RunReport report = training_run();
  const Scenario scenario = load_scenario_file(DDLSIM_SCENARIO_DIR "/resnet50-cloud-vs-dgx.json");
  const std::string model = topo::build_topology(scenario.topology).node(0).gpu_model;
  CHECK(model.find("V100") != std::string::npos);
  for (const sim::TraceLevel level :
       {sim::TraceLevel::steps, sim::TraceLevel::collectives, sim::TraceLevel::iterations}) {
    const Trace trace = written(report, level);
    REQUIRE(!trace.names.empty());
    std::set<int> ranks;
    for (const auto& [track, name] : trace.names) {
      const int rank = track.second / 1000;
      const std::string gpu = "rank " + std::to_string(rank) + " (node" + std::to_string(rank / 8) +
                              "/gpu" + std::to_string(rank % 8) + ", " + model + ") \u00b7 ";
      INFO(name);
      CHECK(name.starts_with(gpu));
      ranks.insert(rank);
    }
    CHECK(ranks.size() == 128);
  }
}

TEST_CASE("trace level: the names parse and nothing else does") {
  CHECK(sim::parse_trace_level("steps") == sim::TraceLevel::steps);
  CHECK(sim::parse_trace_level("collectives") == sim::TraceLevel::collectives);
  CHECK(sim::parse_trace_level("iterations") == sim::TraceLevel::iterations);
  CHECK_FALSE(sim::parse_trace_level("collective").has_value());
  CHECK_FALSE(sim::parse_trace_level("").has_value());
}
