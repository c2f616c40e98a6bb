#include "ddlsim/models/iteration_metrics.hpp"

#include "ddlsim/models/iteration_schedule.hpp"

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

// "2 x ring/Simple, 8 channels; 1 x tree/LL, 4 channels": the choices in order of first use.
std::string describe_choices(const JobPlan& job) {
  std::vector<std::pair<std::string, int>> counts;
  for (const PlannedCollective& c : job.collectives) {
    if (c.nccl_choice.empty()) continue;
    auto it = std::find_if(counts.begin(), counts.end(),
                           [&c](const auto& entry) { return entry.first == c.nccl_choice; });
    if (it == counts.end())
      counts.emplace_back(c.nccl_choice, 1);
    else
      ++it->second;
  }
  std::string text;
  for (const auto& [choice, count] : counts)
    text += (text.empty() ? "" : "; ") + std::to_string(count) + " x " + choice;
  return text;
}

// The intervals clipped to [from, to).
std::vector<Interval> clip(const std::vector<Interval>& intervals, Picoseconds from,
                           Picoseconds to) {
  std::vector<Interval> out;
  for (const Interval& i : intervals) {
    const Picoseconds a = std::max(i.first, from), b = std::min(i.second, to);
    if (a < b) out.emplace_back(a, b);
  }
  return out;
}

// When each iteration of a rank ends: the end of every `per_iteration`-th step of its compute
// stream (the optimizer's).
std::vector<Picoseconds> iteration_ends(std::vector<Picoseconds> ends, std::uint32_t per_iteration,
                                        int iterations) {
  std::sort(ends.begin(), ends.end());
  std::vector<Picoseconds> out;
  for (int k = 1; k <= iterations; ++k) {
    const std::size_t i = std::size_t(k) * per_iteration - 1;
    out.push_back(i < ends.size() ? ends[i] : (ends.empty() ? 0 : ends.back()));
  }
  return out;
}

} // namespace

double JobIteration::seconds_to_train(double epochs, std::uint64_t dataset_samples) const {
  if (samples <= 0) return 0;
  const double iterations = std::ceil(epochs * static_cast<double>(dataset_samples) / samples);
  return iterations * ps_to_seconds(time);
}

IterationRecorder::IterationRecorder(int ranks) : ranks_(static_cast<std::size_t>(ranks)) {}

void IterationRecorder::clear() {
  for (Intervals& r : ranks_) r = Intervals{};
}

void IterationRecorder::add(int rank, int channel, Picoseconds start, Picoseconds end) {
  if (rank < 0 || static_cast<std::size_t>(rank) >= ranks_.size()) return;
  Intervals& r = ranks_[static_cast<std::size_t>(rank)];
  r.end = std::max(r.end, end);
  if (channel == 0) r.compute_ends.push_back(end);
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
    it.nccl_choices = describe_choices(job);
    // Iteration k ends when the job's last GPU ends its optimizer step of iteration k (after
    // every collective of the iteration, except with ByteScheduler, whose collectives trail into
    // the next iteration's forward pass).
    const int iterations = std::max(1, plan.iterations);
    std::vector<Picoseconds> ends(std::size_t(iterations), 0);
    for (std::size_t l = 0; l < job.spec.gpus.size(); ++l) {
      const std::size_t r = static_cast<std::size_t>(job.spec.gpus[l]);
      const ComputeProfile& profile = job.profiles[std::size_t(job.profile_of_gpu[l])];
      const std::vector<Picoseconds> mine = iteration_ends(
          ranks[r].compute_ends, compute_steps_per_iteration(plan, job, profile), iterations);
      for (int k = 0; k < iterations; ++k)
        ends[std::size_t(k)] = std::max(ends[std::size_t(k)], mine[std::size_t(k)]);
      // One iteration alone ends with its last step (ByteScheduler's trailing all-reduces too).
      if (iterations == 1) ends.back() = std::max(ends.back(), ranks[r].end);
    }
    for (int k = 0; k < iterations; ++k)
      it.iteration_times.push_back(ends[std::size_t(k)] - (k > 0 ? ends[std::size_t(k - 1)] : 0));
    const Picoseconds from = iterations > 1 ? ends[ends.size() - 2] : 0;
    it.time = ends.back() - from;
    for (std::size_t l = 0; l < job.spec.gpus.size(); ++l) {
      const std::size_t r = static_cast<std::size_t>(job.spec.gpus[l]);
      GpuIteration gpu;
      gpu.rank = job.spec.gpus[l];
      const std::vector<Interval> busy = clip(ranks[r].compute, from, ends.back());
      const std::vector<Interval> comm = clip(ranks[r].communication, from, ends.back());
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
