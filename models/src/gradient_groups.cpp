#include "gradient_groups.hpp"

#include "ddlsim/core/input_error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ddlsim::models::detail {
namespace {

// When each layer's gradient is ready in one profile, relative to the iteration start: the end
// of its backward step in the last accumulation step (the first such step), or the profile's
// end for a layer without one. One walk over the steps: a profile holds a step per layer and
// accumulation pass, so a walk per layer would cost layers x steps (minutes for BERT-Large over
// 4,096 accumulation steps).
std::vector<Picoseconds> layer_ready_times(const ComputeProfile& profile,
                                           const std::vector<int>& order, int accumulation) {
  int layers = 0;
  for (int l : order) layers = std::max(layers, l + 1);
  std::vector<Picoseconds> end_of(static_cast<std::size_t>(layers), -1);
  Picoseconds t = 0;
  for (const ComputeStep& step : profile.steps) {
    t += step.duration;
    if (step.backward && step.pass == accumulation - 1 && step.layer >= 0 && step.layer < layers &&
        end_of[static_cast<std::size_t>(step.layer)] < 0)
      end_of[static_cast<std::size_t>(step.layer)] = t;
  }
  std::vector<Picoseconds> ready;
  ready.reserve(order.size());
  for (int l : order) {
    const Picoseconds end = l >= 0 ? end_of[static_cast<std::size_t>(l)] : -1;
    ready.push_back(end >= 0 ? end : t);
  }
  return ready;
}

} // namespace

// DDP buckets and GradientFlow's lazy pool: a group closes once it holds at least its limit.
std::vector<Group> by_size(const Model& model, const std::vector<int>& order, std::uint64_t e,
                           std::uint64_t first_limit, std::uint64_t limit) {
  std::vector<Group> groups;
  Group open;
  bool any = false;
  for (int l : order) {
    const std::uint64_t p = model.layers[static_cast<std::size_t>(l)].parameters;
    if (!any) open = Group{l, l, 0, -1};
    any = true;
    open.first = l; // backward order: the group's first layer falls as layers are added
    open.parameters += p;
    if (open.parameters * e >= (groups.empty() ? first_limit : limit)) {
      groups.push_back(open);
      any = false;
    }
  }
  if (any) groups.push_back(open);
  return groups;
}

// Horovod tensor fusion: at each tick (every cycle), the gradients ready on every rank and not
// yet sent are fused in order into groups of at most `threshold` bytes.
std::vector<Group> by_cycle(const Model& model, const std::vector<int>& order, std::uint64_t e,
                            const std::vector<Picoseconds>& ready, const FrameworkSpec& fw) {
  std::vector<Group> groups;
  std::size_t next = 0;
  Picoseconds tick = 0;
  while (next < order.size()) {
    tick += fw.cycle_time;
    bool open = false;
    Group group;
    while (next < order.size() && ready[next] <= tick) {
      const int l = order[next];
      const std::uint64_t p = model.layers[static_cast<std::size_t>(l)].parameters;
      if (open && (group.parameters + p) * e > fw.fusion_threshold_bytes) {
        groups.push_back(group);
        open = false;
      }
      if (!open) group = Group{l, l, 0, tick};
      open = true;
      group.first = l;
      group.parameters += p;
      ++next;
    }
    if (open) groups.push_back(group);
  }
  return groups;
}

// When each layer of `order` is ready on every rank (the slowest profile).
std::vector<Picoseconds> ready_times(const std::vector<int>& order,
                                     const std::vector<ComputeProfile>& profiles,
                                     int accumulation) {
  std::vector<Picoseconds> ready(order.size(), 0);
  for (const ComputeProfile& profile : profiles) {
    const std::vector<Picoseconds> in_profile = layer_ready_times(profile, order, accumulation);
    for (std::size_t i = 0; i < order.size(); ++i) ready[i] = std::max(ready[i], in_profile[i]);
  }
  return ready;
}

// MG-WFBP's merge rule (Shi, Chu and Li, "MG-WFBP: Efficient Data Communication for Distributed
// Synchronous SGD Algorithms", INFOCOM 2019, section IV, with the all-reduce cost a + M b):
// walking the layers in backward order, with each all-reduce starting when both its gradient is
// ready and the previous all-reduce ended, layer i is merged into layer i+1 (the next gradient
// to become ready) when the latter is ready before layer i's all-reduce would end, and either
// layer i's all-reduce would start after that (merging costs nothing) or the wait for it is
// shorter than the startup time a that one all-reduce fewer saves. `cost` is the all-reduce time
// of a number of bytes.
std::vector<Group> by_merge(const Model& model, const std::vector<int>& order, std::uint64_t e,
                            const std::vector<Picoseconds>& ready, const AllReduceCost& cost) {
  const std::size_t n = order.size();
  std::vector<std::uint64_t> p(n);
  std::vector<Picoseconds> tc(n);
  for (std::size_t i = 0; i < n; ++i) {
    p[i] = model.layers[static_cast<std::size_t>(order[i])].parameters;
    tc[i] = cost(p[i] * e);
  }
  const Picoseconds startup = cost(e);
  auto starts = [&] { // each all-reduce: when its gradient is ready and the stream is free
    std::vector<Picoseconds> start(n);
    for (std::size_t i = 0; i < n; ++i)
      start[i] = std::max(ready[i], i > 0 ? start[i - 1] + tc[i - 1] : Picoseconds{0});
    return start;
  };
  std::vector<Picoseconds> start = starts();
  std::vector<bool> merged(n, false); // layer i goes with layer i+1
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const Picoseconds next_ready = ready[i + 1];
    if (next_ready >= start[i] + tc[i]) continue;
    if (start[i] > next_ready || next_ready - start[i] < startup) {
      merged[i] = true;
      p[i + 1] += p[i];
      p[i] = 0;
      tc[i] = 0;
      tc[i + 1] = cost(p[i + 1] * e);
      start = starts();
    }
  }
  std::vector<Group> groups;
  bool open = false;
  Group group;
  for (std::size_t i = 0; i < n; ++i) {
    const int l = order[i];
    if (!open) group = Group{l, l, 0, -1};
    open = true;
    group.first = l;
    group.parameters += model.layers[static_cast<std::size_t>(l)].parameters;
    if (!merged[i]) {
      groups.push_back(group);
      open = false;
    }
  }
  return groups;
}

// ByteScheduler's order (Peng et al., "A Generic Communication Scheduler for Distributed DNN
// Training Acceleration", SOSP 2019, section 4; ByteCore in bytescheduler/common/bytecore.py):
// each layer's gradient is cut into partitions of at most `partition` parameters; whenever the
// posted and unfinished partitions hold fewer than `credit` parameters (or none is posted), the
// ready partition of the highest priority (the layer nearest the input, then the partition's
// place) is posted; posted partitions run one after another. The order is found by replaying
// that queue with the cost model; each partition is one group (first == last == its layer).
std::vector<Group> by_priority(const Model& model, const std::vector<int>& order, std::uint64_t e,
                               const std::vector<Picoseconds>& ready, const FrameworkSpec& fw,
                               const AllReduceCost& cost) {
  struct Part {
    int layer;
    std::uint64_t parameters;
    Picoseconds ready;
  };
  std::vector<Part> pending;
  for (std::size_t i = 0; i < order.size(); ++i) {
    std::uint64_t left = model.layers[static_cast<std::size_t>(order[i])].parameters;
    const std::uint64_t pieces = (left + fw.partition_parameters - 1) / fw.partition_parameters;
    for (std::uint64_t k = 0; k < pieces; ++k) { // as even as possible
      const std::uint64_t size = left / (pieces - k);
      pending.push_back({order[i], size, ready[i]});
      left -= size;
    }
  }
  std::vector<Group> groups;
  std::vector<std::pair<Picoseconds, std::uint64_t>> posted; // finish time, parameters (FIFO)
  std::uint64_t in_flight = 0;
  Picoseconds now = 0, stream_free = 0;
  while (!pending.empty()) {
    while (!posted.empty() && posted.front().first <= now) {
      in_flight -= posted.front().second;
      posted.erase(posted.begin());
    }
    // The ready partition of the highest priority: lowest layer, then the earliest cut.
    auto best = pending.end();
    for (auto it = pending.begin(); it != pending.end(); ++it)
      if (it->ready <= now && (best == pending.end() || it->layer < best->layer)) best = it;
    if (best != pending.end() &&
        (posted.empty() || in_flight + best->parameters <= fw.credit_parameters)) {
      stream_free = std::max(now, stream_free) + cost(best->parameters * e);
      posted.emplace_back(stream_free, best->parameters);
      in_flight += best->parameters;
      groups.push_back(Group{best->layer, best->layer, best->parameters, -1});
      pending.erase(best);
      continue;
    }
    Picoseconds next = posted.empty() ? INT64_MAX : posted.front().first;
    for (const Part& part : pending)
      if (part.ready > now) next = std::min(next, part.ready);
    now = next;
  }
  return groups;
}

// The all-reduce cost MG-WFBP's rule and ByteScheduler's queue plan with: the framework's
// a + M / b, or NCCL's own model.
AllReduceCost planning_cost(const JobSpec& spec, const std::string& where) {
  const FrameworkSpec& fw = spec.framework;
  if (fw.bytes_per_second > 0) {
    return [startup = fw.startup, rate = fw.bytes_per_second](std::uint64_t bytes) {
      return startup + static_cast<Picoseconds>(std::llround(static_cast<double>(bytes) / rate *
                                                             static_cast<double>(kPsPerSecond)));
    };
  }
  if (!spec.nccl)
    throw InputError(
        where + "/framework",
        std::string(to_string(fw.type)) +
            " plans with the all-reduce cost: give \"startup_us\" and "
            "\"bandwidth_gbps\" (the a + M/b fit MG-WFBP measures on the cluster), or "
            "let NCCL's model give it (algorithm \"nccl\", the default on NVIDIA GPUs)");
  return [tuner = spec.nccl](std::uint64_t bytes) {
    const NcclChoice choice = tuner->choose(coll::Op::all_reduce, bytes);
    return static_cast<Picoseconds>(
        std::llround(choice.model_seconds * static_cast<double>(kPsPerSecond)));
  };
}

} // namespace ddlsim::models::detail
