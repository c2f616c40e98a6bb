// A training workload's run report: per job and per GPU compute, communication, exposed and
// idle time, samples/s, scaling efficiency and time to train.
#include "ddlsim/core/units.hpp"
#include "ddlsim/topologies/builders.hpp"
#include "workload_reports.hpp"

#include <cstdio>
#include <sstream>

namespace ddlsim::runner {
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
    text += " (fusion " +
            (fw.fusion_threshold_bytes == 0 ? std::string("off")
                                            : format_bytes(fw.fusion_threshold_bytes)) +
            ", cycle " + format_fixed(ps_to_seconds(fw.cycle_time) * 1e3, 2) + " ms)";
    break;
  case models::Framework::gradientflow:
    text += " (lazy threshold " + format_bytes(fw.lazy_threshold_bytes) + ")";
    break;
  case models::Framework::none:
    text += " (all-reduce after backward)";
    break;
  case models::Framework::byteps:
    text += " (partitions of " + format_bytes(fw.partition_bytes) +
            ", push/pull to a summation server on every node)";
    break;
  case models::Framework::mgwfbp:
  case models::Framework::bytescheduler: {
    const std::string cost =
        fw.bytes_per_second > 0
            ? "a = " + format_fixed(ps_to_seconds(fw.startup) * 1e6, 1) +
                  " us, b = " + format_fixed(fw.bytes_per_second * 8 / 1e9, 1) + " Gb/s"
            : "NCCL's all-reduce model";
    text += fw.type == models::Framework::mgwfbp
                ? " (merge rule with " + cost + ")"
                : " (partitions of " + std::to_string(fw.partition_parameters) +
                      " parameters, credit " + std::to_string(fw.credit_parameters) + ", " + cost +
                      ")";
    break;
  }
  }
  if (fw.accumulation_steps > 1)
    text += ", " + std::to_string(fw.accumulation_steps) + " accumulation steps";
  if (fw.streams > 1) text += ", " + std::to_string(fw.streams) + " communication streams";
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
                     std::string(models::to_string(job.precision)) + ", ";
  // SGD is the default and says nothing, so that reports of jobs without an optimizer stay.
  if (job.optimizer != models::Optimizer::sgd)
    text += std::string(models::to_string(job.optimizer)) + " optimizer, ";
  text += describe_framework(job.framework);
  // The roofline is the default and says nothing, so that reports of jobs without a
  // measurement stay as they were.
  if (job.compute.source != models::ComputeSource::roofline)
    text += ", compute from " + models::describe(job.compute, *job.model);
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
                 {"engine", std::string(sim::engine_name(scenario.engine))},
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
                {"first_iteration_s",
                 ps_to_seconds(it.iteration_times.empty() ? it.time : it.iteration_times.front())},
                {"iterations_simulated", it.iteration_times.size()},
                {"compute_s", ps_to_seconds(it.max_compute)},
                {"communication_s", ps_to_seconds(it.max_communication)},
                {"exposed_s", ps_to_seconds(it.max_exposed)},
                {"idle_s", ps_to_seconds(it.max_idle)},
                {"samples_per_second", it.samples_per_second},
                {"single_gpu_samples_per_second", it.single_gpu_samples_per_second},
                {"scaling_efficiency", it.scaling_efficiency},
                {"per_gpu", gpus}};
    if (!it.nccl_choices.empty()) job["nccl_choices"] = it.nccl_choices;
    if (spec.optimizer != models::Optimizer::sgd)
      job["optimizer"] = models::to_string(spec.optimizer);
    if (spec.compute.source != models::ComputeSource::roofline) {
      job["compute_source"] = models::to_string(spec.compute.source);
      job["compute_source_detail"] = models::describe(spec.compute, *spec.model);
    }
    if (scenario.workload.training.dataset_samples > 0)
      job["seconds_to_train"] = it.seconds_to_train(scenario.workload.training.epochs,
                                                    scenario.workload.training.dataset_samples);
    list.push_back(job);
  }
  report["jobs"] = list;
  return report;
}

void print_jobs(const Scenario& scenario, const std::string& label,
                const std::vector<models::JobIteration>& jobs, std::ostream& out) {
  const TrainingWorkload& training = scenario.workload.training;
  out << "# " << label << ": training iteration, " << sim::engine_name(scenario.engine)
      << " engine\n";
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
    if (!it.nccl_choices.empty()) out << "#   NCCL's choices: " << it.nccl_choices << "\n";
    if (it.iteration_times.size() > 1)
      out << "#   " << it.iteration_times.size() << " iterations simulated: the first "
          << ms(it.iteration_times.front()) << " ms, steady state " << ms(it.time) << " ms\n";
    if (training.dataset_samples > 0)
      out << "#   time to train " << format_fixed(training.epochs, 2) << " epochs of "
          << training.dataset_samples << " samples: "
          << duration_text(it.seconds_to_train(training.epochs, training.dataset_samples)) << "\n";
    print_gpus(it, out);
  }
}

} // namespace

RunReport training_report(const Scenario& scenario, const std::string& label,
                          const RunSettings& settings) {
  const topo::Topology topology = topo::build_topology(scenario.topology);
  topo::Router router(topology);
  if (settings.begin)
    settings.begin("training iteration", sim::progress_unit(scenario.engine), -1.0);
  sim::EngineResult result =
      sim::simulate(sim::TrainingIteration{scenario.workload.training.jobs,
                                           scenario.workload.training.iterations},
                    topology, router, scenario.engine, common_options(scenario, settings));
  const bool go_on = !settings.end || settings.end();
  RunReport report;
  if (!result.complete || !go_on) report.incomplete = "while simulating the training iteration";
  if (!result.complete) return report;
  // A run stopped after the iteration finished still reports it.
  std::ostringstream text;
  print_jobs(scenario, label, result.jobs, text);
  const std::string engine(sim::engine_name(scenario.engine));
  if (!result.details.summary.empty())
    text << "# " << engine << " engine:\n" << result.details.summary;
  report.table = text.str();
  report.json = to_json(scenario, label, result.jobs);
  if (!result.details.json.is_null()) report.json[engine] = std::move(result.details.json);
  if (settings.trace) {
    TracePart part{"training iteration", std::move(result.steps_recorded), {}, {}};
    // Each job's iterations end together on its GPUs (the last optimizer step over them).
    for (const models::JobIteration& job : result.jobs) {
      std::vector<Picoseconds> ends;
      for (const Picoseconds time : job.iteration_times)
        ends.push_back((ends.empty() ? 0 : ends.back()) + time);
      for (const models::GpuIteration& gpu : job.gpus) {
        if (gpu.rank < 0) continue;
        if (part.iteration_ends.size() <= std::size_t(gpu.rank))
          part.iteration_ends.resize(std::size_t(gpu.rank) + 1);
        part.iteration_ends[std::size_t(gpu.rank)] = ends;
      }
    }
    report.trace.push_back(std::move(part));
  }
  report.jobs = std::move(result.jobs);
  return report;
}

} // namespace ddlsim::runner
