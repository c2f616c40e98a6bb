// How a training job's gradients are grouped into all-reduces, framework by framework
// (training.hpp describes each framework): DDP's buckets, GradientFlow's lazy pool, Horovod's
// fusion ticks, MG-WFBP's merge rule and ByteScheduler's priority partitions.
#pragma once

#include "ddlsim/models/training.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ddlsim::models::detail {

// A gradient tensor group: layers [first, last] of the model, `parameters` in all.
struct Group {
  int first = 0;
  int last = 0;
  std::uint64_t parameters = 0;
  Picoseconds tick = -1; // horovod: when the fusion tick starts it
};

// The all-reduce time of a number of bytes, as a framework plans with it.
using AllReduceCost = std::function<Picoseconds(std::uint64_t)>;

// DDP buckets and GradientFlow's lazy pool: a group closes once it holds at least its limit.
std::vector<Group> by_size(const Model& model, const std::vector<int>& order, std::uint64_t e,
                           std::uint64_t first_limit, std::uint64_t limit);
// When each layer of `order` (backward order) is ready on every rank (the slowest profile),
// relative to the iteration start.
std::vector<Picoseconds> ready_times(const std::vector<int>& order,
                                     const std::vector<ComputeProfile>& profiles, int accumulation);
// Horovod tensor fusion.
std::vector<Group> by_cycle(const Model& model, const std::vector<int>& order, std::uint64_t e,
                            const std::vector<Picoseconds>& ready, const FrameworkSpec& fw);
// MG-WFBP's merge rule.
std::vector<Group> by_merge(const Model& model, const std::vector<int>& order, std::uint64_t e,
                            const std::vector<Picoseconds>& ready, const AllReduceCost& cost);
// ByteScheduler's posting order of partitions.
std::vector<Group> by_priority(const Model& model, const std::vector<int>& order, std::uint64_t e,
                               const std::vector<Picoseconds>& ready, const FrameworkSpec& fw,
                               const AllReduceCost& cost);
// The cost MG-WFBP and ByteScheduler plan with: the framework's a + M / b, or NCCL's model of
// the job's all-reduce; InputError at `where` when there is neither.
AllReduceCost planning_cost(const JobSpec& spec, const std::string& where);

} // namespace ddlsim::models::detail
