#include "training_run.hpp"
#include "engine_options.hpp"

#include "ddlsim/core/units.hpp"

#include "point_evaluator.hpp"

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/models/iteration_metrics.hpp"
#include "ddlsim/models/iteration_schedule.hpp"
#include "ddlsim/sim/flow/flow_engine.hpp"
#include "ddlsim/sim/packet/packet_engine.hpp"
#include "ddlsim/sim/packet/packet_report.hpp"
#include "ddlsim/sim/trace.hpp"
#include "ddlsim/topologies/builders.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

namespace ddlsim::cli {
namespace {

std::string ms(Picoseconds t) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", ps_to_seconds(t) * 1e3);
  return text;
}

std::string duration_text(double seconds) {
  if (seconds >= 86400) return format_fixed(seconds / 86400, 2) + " days";
  if (seconds >= 3600) return format_fixed(seconds / 3600, 2) + " h";
  if (seconds >= 60) return format_fixed(seconds / 60, 2) + " min";
  return format_fixed(seconds, 2) + " s";
}

std::string describe_framework(const models::FrameworkSpec& fw) {
  std::string text(models::to_string(fw.type));
  switch (fw.type) {
  case models::Framework::ddp:
    text += " (first bucket " + format_bytes(fw.first_bucket_bytes) + ", cap " +
            format_bytes(fw.bucket_cap_bytes) + ")";
    break;
  case models::Framework::horovod:
    text += " (fusion " + format_bytes(fw.fusion_threshold_bytes) + ", cycle " +
            format_fixed(ps_to_seconds(fw.cycle_time) * 1e3, 2) + " ms)";
    break;
  case models::Framework::gradientflow:
    text += " (lazy threshold " + format_bytes(fw.lazy_threshold_bytes) + ")";
    break;
  case models::Framework::none:
    text += " (all-reduce after backward)";
    break;
  }
  if (fw.accumulation_steps > 1)
    text += ", " + std::to_string(fw.accumulation_steps) + " accumulation steps";
  return text;
}

std::string describe_job(const models::JobSpec& job) {
  std::string gpus = std::to_string(job.gpus.size()) + " x " + job.gpu.front().name;
  for (const models::GpuSpec& gpu : job.gpu)
    if (gpu.name != job.gpu.front().name) gpus = std::to_string(job.gpus.size()) + " mixed GPUs";
  std::string batch = "batch " + std::to_string(job.batch.front()) + "/GPU";
  for (int b : job.batch)
    if (b != job.batch.front()) batch = "per-GPU batches";
  std::string text = job.model->name + " on " + gpus + ", " + batch + ", " +
                     std::string(models::to_string(job.precision)) + ", " +
                     describe_framework(job.framework);
  if (!job.communicate) return text + ", no communication";
  text += ", all-reduce " + job.algorithm;
  if (job.compression != models::Compression::none)
    text += " (density " + format_fixed(job.params.density, 4) + ")";
  if (job.adasum) text += " adasum";
  if (!job.server_gpus.empty())
    text += " (" + std::to_string(job.server_gpus.size()) + " dedicated servers on GPUs " +
            std::to_string(job.server_gpus.front()) + "-" + std::to_string(job.server_gpus.back()) +
            ")";
  return text;
}

// Rows of per-GPU figures, consecutive ranks with equal figures folded into one row.
void print_gpus(const models::JobIteration& it, std::ostream& out) {
  out << "#   GPUs        compute(ms)  comm(ms)  exposed(ms)  idle(ms)\n";
  for (std::size_t i = 0; i < it.gpus.size();) {
    std::size_t j = i + 1;
    const models::GpuIteration& g = it.gpus[i];
    while (j < it.gpus.size() && it.gpus[j].compute == g.compute &&
           it.gpus[j].communication == g.communication && it.gpus[j].exposed == g.exposed &&
           it.gpus[j].idle == g.idle && it.gpus[j].rank == it.gpus[j - 1].rank + 1)
      ++j;
    std::string ranks = std::to_string(g.rank);
    if (j - i > 1) ranks += "-" + std::to_string(it.gpus[j - 1].rank);
    char line[160];
    std::snprintf(line, sizeof line, "#   %-11s %11s %9s %12s %9s\n", ranks.c_str(),
                  ms(g.compute).c_str(), ms(g.communication).c_str(), ms(g.exposed).c_str(),
                  ms(g.idle).c_str());
    out << line;
    i = j;
  }
}

Json to_json(const Scenario& scenario, const std::string& label,
             const std::vector<models::JobIteration>& jobs) {
  Json report = {{"scenario", label},
                 {"engine", scenario.engine.type},
                 {"seed", scenario.seed},
                 {"workload", "training"}};
  Json list = Json::array();
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const models::JobIteration& it = jobs[j];
    const models::JobSpec& spec = scenario.workload.training.jobs[j];
    Json gpus = Json::array();
    for (const models::GpuIteration& g : it.gpus)
      gpus.push_back({{"rank", g.rank},
                      {"compute_s", ps_to_seconds(g.compute)},
                      {"communication_s", ps_to_seconds(g.communication)},
                      {"exposed_s", ps_to_seconds(g.exposed)},
                      {"idle_s", ps_to_seconds(g.idle)}});
    Json job = {{"name", it.name},
                {"model", spec.model->name},
                {"gpus", spec.gpus.size()},
                {"framework", models::to_string(spec.framework.type)},
                {"algorithm", spec.algorithm},
                {"precision", models::to_string(spec.precision)},
                {"collectives", it.collectives},
                {"gradient_bytes", it.gradient_bytes},
                {"samples_per_iteration", it.samples},
                {"iteration_s", ps_to_seconds(it.time)},
                {"compute_s", ps_to_seconds(it.max_compute)},
                {"communication_s", ps_to_seconds(it.max_communication)},
                {"exposed_s", ps_to_seconds(it.max_exposed)},
                {"idle_s", ps_to_seconds(it.max_idle)},
                {"samples_per_second", it.samples_per_second},
                {"single_gpu_samples_per_second", it.single_gpu_samples_per_second},
                {"scaling_efficiency", it.scaling_efficiency},
                {"per_gpu", gpus}};
    if (scenario.workload.training.dataset_samples > 0)
      job["seconds_to_train"] = it.seconds_to_train(scenario.workload.training.epochs,
                                                    scenario.workload.training.dataset_samples);
    list.push_back(job);
  }
  report["jobs"] = list;
  return report;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!out) throw InputError(path, "cannot open the output file for writing");
  out << text;
  if (!out) throw InputError(path, "writing the output file failed (disk full?)");
}

// The iteration on the packet engine: the step records and completion in the common form.
sim::CollectiveTiming
simulate_training_packets(const Scenario& scenario, const topo::Topology& topology,
                          topo::Router& router, std::shared_ptr<const models::TrainingPlan> plan,
                          const sim::AnalyticOptions& engine, TrainingEngineDetails* details) {
  sim::packet::PacketOptions packet;
  packet.spec = scenario.engine.packet;
  copy_shared_settings(engine, packet);
  packet.record_steps = true;
  sim::packet::PacketTiming timing =
      sim::packet::simulate_packet(topology, router, models::iteration_schedule(plan), packet);
  if (details) {
    details->details = sim::packet::packet_details(timing, topology);
    details->summary = sim::packet::packet_summary(timing, topology);
  }
  sim::CollectiveTiming result;
  result.complete = timing.complete;
  result.time = timing.time;
  result.steps = timing.steps;
  result.transfers = timing.transfers;
  result.bytes_sent = timing.bytes_sent;
  result.steps_recorded = std::move(timing.steps_recorded);
  return result;
}

} // namespace

std::vector<models::JobIteration> simulate_training(const Scenario& scenario,
                                                    sim::AnalyticOptions engine,
                                                    sim::CollectiveTiming* timing,
                                                    TrainingEngineDetails* details) {
  models::TrainingPlan planned = models::plan_training(scenario.workload.training.jobs);
  planned.launch_overhead = scenario.engine.launch_overhead; // from a calibration, if any
  auto plan = std::make_shared<const models::TrainingPlan>(std::move(planned));
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  // The collectives' local steps run at the job's GPU preset rates (calibratable through the
  // workload's "gpu" object) when every GPU has the same preset; the engine's options hold one
  // rate for all ranks, so mixed clusters keep the engine's per-GPU table.
  bool one_preset = true;
  const models::GpuSpec& first = scenario.workload.training.jobs.front().gpu.front();
  for (const models::JobSpec& job : scenario.workload.training.jobs)
    for (const models::GpuSpec& gpu : job.gpu)
      one_preset = one_preset && gpu.name == first.name &&
                   gpu.memory_bytes_per_second == first.memory_bytes_per_second &&
                   gpu.memory_efficiency == first.memory_efficiency;
  if (one_preset && engine.reduce_bytes_per_second == 0) {
    engine.reduce_bytes_per_second = first.reduce_bytes_per_second();
    engine.copy_bytes_per_second = first.memory_efficiency * first.memory_bytes_per_second / 2;
  }
  sim::CollectiveTiming result;
  models::IterationRecorder steps(plan->ranks);
  bool recorded = false; // `steps` already holds every step
  if (scenario.engine.type == "flow") {
    sim::flow::FlowOptions flow;
    flow.model = scenario.engine.flow;
    copy_shared_settings(engine, flow);
    flow.record_steps = true; // the metrics come from the step records
    result = sim::flow::simulate_flow(topology, router, models::iteration_schedule(plan), flow);
  } else if (scenario.engine.type == "packet") {
    result = simulate_training_packets(scenario, topology, router, plan, engine, details);
  } else {
    // The metrics take each step as it is timed; the records themselves only for a trace.
    engine.record_steps = timing != nullptr;
    engine.on_step = [&steps](const sim::StepRecord& r) {
      steps.add(r.rank, r.channel, r.start, r.end);
    };
    result = sim::simulate_analytic(topology, router, models::iteration_schedule(plan), engine);
    recorded = true;
  }
  if (!result.complete) return {};
  if (!recorded)
    for (const sim::StepRecord& r : result.steps_recorded)
      steps.add(r.rank, r.channel, r.start, r.end);
  std::vector<models::JobIteration> jobs = models::summarize_iteration(*plan, steps);
  if (timing) *timing = std::move(result);
  return jobs;
}

// Every point of the scenario's sweep, one row each, in sweep order (the first axis fastest):
// what `ddlsim plan` ranks, here as a plain table so a what-if sweep reads top to bottom.
void print_sweep(const Scenario& scenario, std::ostream& out) {
  const std::size_t count = sweep_point_count(scenario);
  out << "# sweep: " << count << " points (ranked by `ddlsim plan`, which also caches them)\n";
  out << "# point  GPUs  iteration(ms)   samples/s  efficiency  settings\n";
  for (std::size_t i = 0; i < count; ++i) {
    const SweepPoint point = sweep_point(scenario, i);
    std::string settings;
    for (const auto& [pointer, value] : point.settings)
      settings += (settings.empty() ? "" : " ") + pointer + "=" +
                  (value.is_string() ? value.get<std::string>() : value.dump());
    const plan::PointMetrics m = evaluate_point(point.scenario);
    char line[160];
    std::snprintf(line, sizeof line, "%7zu %5d %14.3f %11.1f %11.3f  ", i, m.gpus,
                  m.iteration_seconds * 1e3, m.samples_per_second, m.scaling_efficiency);
    out << line << settings << "\n";
  }
}

bool run_training(const Scenario& scenario, const std::string& label, sim::AnalyticOptions engine,
                  const std::string& json_path, const std::string& trace_path) {
  const TrainingWorkload& training = scenario.workload.training;
  sim::CollectiveTiming timing;
  TrainingEngineDetails details;
  const std::vector<models::JobIteration> jobs =
      simulate_training(scenario, engine, trace_path.empty() ? nullptr : &timing, &details);
  if (jobs.empty()) return false;
  std::ostream& out = std::cout;
  out << "# " << label << ": training iteration, " << scenario.engine.type << " engine\n";
  out << "job        GPUs  iteration(ms)  compute(ms)  comm(ms)  exposed(ms)  idle(ms)  "
         "samples/s  1-GPU sum(samples/s)  efficiency\n";
  for (const models::JobIteration& it : jobs) {
    char line[256];
    std::snprintf(line, sizeof line, "%-10s %5zu %14s %12s %9s %12s %9s %10s %21s %10s\n",
                  it.name.c_str(), it.gpus.size(), ms(it.time).c_str(), ms(it.max_compute).c_str(),
                  ms(it.max_communication).c_str(), ms(it.max_exposed).c_str(),
                  ms(it.max_idle).c_str(), format_fixed(it.samples_per_second, 1).c_str(),
                  format_fixed(it.single_gpu_samples_per_second, 1).c_str(),
                  format_fixed(it.scaling_efficiency, 3).c_str());
    out << line;
  }
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const models::JobIteration& it = jobs[j];
    out << "# " << it.name << ": " << describe_job(training.jobs[j]) << "\n";
    out << "#   " << it.collectives << " collectives, " << format_bytes(it.gradient_bytes)
        << " of gradients per GPU, " << it.samples << " samples per iteration\n";
    if (training.dataset_samples > 0)
      out << "#   time to train " << format_fixed(training.epochs, 2) << " epochs of "
          << training.dataset_samples << " samples: "
          << duration_text(it.seconds_to_train(training.epochs, training.dataset_samples)) << "\n";
    print_gpus(it, out);
  }
  if (!details.summary.empty())
    out << "# " << scenario.engine.type << " engine:\n" << details.summary;
  if (!json_path.empty()) {
    Json report = to_json(scenario, label, jobs);
    if (!details.details.is_null()) report[scenario.engine.type] = details.details;
    write_file(json_path, report.dump(2) + "\n");
    out << "# wrote " << json_path << "\n";
  }
  if (!trace_path.empty()) {
    std::ostringstream text;
    sim::write_chrome_trace({{"training iteration", &timing.steps_recorded}}, text);
    write_file(trace_path, text.str());
    out << "# wrote " << trace_path << " (open in https://ui.perfetto.dev)\n";
  }
  if (!scenario.sweep.empty()) print_sweep(scenario, out);
  return true;
}

} // namespace ddlsim::cli
