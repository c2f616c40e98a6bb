#include "ddlsim/models/iteration_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace ddlsim::models {
namespace {

using Interval = std::pair<Picoseconds, Picoseconds>;

// Sorts and merges overlapping intervals.
std::vector<Interval> merged(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<Interval> out;
  for (const Interval& i : intervals) {
    if (!out.empty() && i.first <= out.back().second)
      out.back().second = std::max(out.back().second, i.second);
    else
      out.push_back(i);
  }
  return out;
}

Picoseconds length(const std::vector<Interval>& intervals) {
  Picoseconds total = 0;
  for (const Interval& i : intervals) total += i.second - i.first;
  return total;
}

// Length of a minus b, both merged.
Picoseconds length_outside(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  Picoseconds covered = 0;
  std::size_t j = 0;
  for (const Interval& i : a) {
    while (j < b.size() && b[j].second <= i.first) ++j;
    for (std::size_t k = j; k < b.size() && b[k].first < i.second; ++k)
      covered += std::min(i.second, b[k].second) - std::max(i.first, b[k].first);
  }
  return length(a) - covered;
}

} // namespace

double JobIteration::seconds_to_train(double epochs, std::uint64_t dataset_samples) const {
  if (samples <= 0) return 0;
  const double iterations = std::ceil(epochs * static_cast<double>(dataset_samples) / samples);
  return iterations * ps_to_seconds(time);
}

std::vector<JobIteration> summarize_iteration(const TrainingPlan& plan,
                                              const std::vector<ExecutedStep>& steps) {
  const std::size_t ranks = static_cast<std::size_t>(plan.ranks);
  std::vector<std::vector<Interval>> compute(ranks), communication(ranks);
  std::vector<Picoseconds> end(ranks, 0);
  for (const ExecutedStep& step : steps) {
    const std::size_t r = static_cast<std::size_t>(step.rank);
    if (r >= ranks) continue;
    end[r] = std::max(end[r], step.end);
    if (step.end <= step.start) continue;
    if (step.channel == 0)
      compute[r].emplace_back(step.start, step.end);
    else if (!step.compute)
      communication[r].emplace_back(step.start, step.end);
  }
  std::vector<JobIteration> out;
  for (const JobPlan& job : plan.jobs) {
    JobIteration it;
    it.name = job.spec.name;
    it.samples = job.samples_per_iteration;
    it.collectives = static_cast<int>(job.collectives.size());
    it.gradient_bytes = job.gradient_bytes;
    for (int g : job.spec.gpus) it.time = std::max(it.time, end[static_cast<std::size_t>(g)]);
    for (std::size_t l = 0; l < job.spec.gpus.size(); ++l) {
      const std::size_t r = static_cast<std::size_t>(job.spec.gpus[l]);
      GpuIteration gpu;
      gpu.rank = job.spec.gpus[l];
      const std::vector<Interval> busy = merged(compute[r]);
      const std::vector<Interval> comm = merged(communication[r]);
      gpu.compute = length(busy);
      gpu.communication = length(comm);
      gpu.exposed = length_outside(comm, busy);
      gpu.idle = std::max<Picoseconds>(0, it.time - gpu.compute - gpu.exposed);
      it.max_compute = std::max(it.max_compute, gpu.compute);
      it.max_communication = std::max(it.max_communication, gpu.communication);
      it.max_exposed = std::max(it.max_exposed, gpu.exposed);
      it.max_idle = std::max(it.max_idle, gpu.idle);
      it.gpus.push_back(gpu);
      const ComputeProfile& profile = job.profiles[static_cast<std::size_t>(job.profile_of_gpu[l])];
      it.single_gpu_samples_per_second +=
          profile.batch * job.spec.framework.accumulation_steps / ps_to_seconds(profile.compute);
    }
    it.samples_per_second = it.time > 0 ? it.samples / ps_to_seconds(it.time) : 0;
    it.scaling_efficiency = it.single_gpu_samples_per_second > 0
                                ? it.samples_per_second / it.single_gpu_samples_per_second
                                : 0;
    out.push_back(std::move(it));
  }
  return out;
}

} // namespace ddlsim::models
