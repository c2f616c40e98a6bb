#include "ddlsim/models/iteration_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

namespace ddlsim::models {
namespace {

using Interval = std::pair<Picoseconds, Picoseconds>;

// Adds [start, end) to a union of disjoint intervals sorted by time (intervals that touch are
// merged). Steps arrive in about increasing end order (the event-driven engine records them in
// completion order, the dependency-order evaluation roughly so), so the search starts at the back
// and usually stops there.
void add_interval(std::vector<Interval>& union_of, Picoseconds start, Picoseconds end) {
  auto first = union_of.end(); // the first interval that ends at or after `start`
  while (first != union_of.begin() && std::prev(first)->second >= start) --first;
  auto last = first; // one past the last interval that starts at or before `end`
  while (last != union_of.end() && last->first <= end) {
    start = std::min(start, last->first);
    end = std::max(end, last->second);
    ++last;
  }
  if (first == last) {
    union_of.insert(first, Interval{start, end});
  } else {
    *first = Interval{start, end};
    union_of.erase(std::next(first), last);
  }
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

IterationRecorder::IterationRecorder(int ranks) : ranks_(static_cast<std::size_t>(ranks)) {}

void IterationRecorder::add(int rank, int channel, Picoseconds start, Picoseconds end) {
  if (rank < 0 || static_cast<std::size_t>(rank) >= ranks_.size()) return;
  Intervals& r = ranks_[static_cast<std::size_t>(rank)];
  r.end = std::max(r.end, end);
  if (end <= start) return; // markers and joins
  // On channels >= 1 compute steps (Adasum's dot products) are communication work.
  if (channel == 0)
    add_interval(r.compute, start, end);
  else
    add_interval(r.communication, start, end);
}

std::vector<JobIteration> summarize_iteration(const TrainingPlan& plan,
                                              const IterationRecorder& steps) {
  const std::vector<IterationRecorder::Intervals>& ranks = steps.ranks();
  std::vector<JobIteration> out;
  for (const JobPlan& job : plan.jobs) {
    JobIteration it;
    it.name = job.spec.name;
    it.samples = job.samples_per_iteration;
    it.collectives = static_cast<int>(job.collectives.size());
    it.gradient_bytes = job.gradient_bytes;
    for (int g : job.spec.gpus) it.time = std::max(it.time, ranks[static_cast<std::size_t>(g)].end);
    for (std::size_t l = 0; l < job.spec.gpus.size(); ++l) {
      const std::size_t r = static_cast<std::size_t>(job.spec.gpus[l]);
      GpuIteration gpu;
      gpu.rank = job.spec.gpus[l];
      const std::vector<Interval>& busy = ranks[r].compute;
      const std::vector<Interval>& comm = ranks[r].communication;
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
