// Rule 4 of step.hpp: how the switch steps of a group meet, implemented once for every executor.
//
// A switch step (switch_reduce, switch_multicast) names its owner (peer), the group size (param)
// and its bytes. The k-th switch step of one kind that rank m posts to owner o on channel c joins
// instance k of (o, c, kind), so the members of an instance need not be listed anywhere: the
// instance is complete once `param` members posted, the owner among them. What the instance does
// (reduce in the switch, multicast) and what it costs is the executor's.
#pragma once

#include "ddlsim/collectives/step.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace ddlsim::coll {

template <class Posted> class SwitchGroups {
public:
  struct Member {
    int rank = 0;
    Posted posted;
  };
  struct Instance {
    StepKind kind = StepKind::switch_reduce;
    int owner = 0, channel = 0, size = 0;
    std::uint64_t bytes = 0;
    std::vector<Member> members; // in rank order once complete
  };

  // `rank` posted switch step `step`. Returns the instance once complete (its members sorted by
  // rank) and forgets it; otherwise nothing. A member whose size or bytes differ from the
  // instance's, or a full instance without its owner, sets `problem` and returns nothing.
  std::optional<Instance> post(int rank, const Step& step, const Posted& posted,
                               std::string& problem) {
    const auto kind = static_cast<std::uint8_t>(step.kind);
    const std::uint64_t seq = next_[{rank, step.peer, step.channel, kind}]++;
    const Key key{step.peer, step.channel, kind, seq};
    auto [it, inserted] = open_.try_emplace(key);
    Instance& instance = it->second;
    const int size = static_cast<int>(step.param);
    if (inserted) {
      instance.kind = step.kind;
      instance.owner = step.peer;
      instance.channel = step.channel;
      instance.size = size;
      instance.bytes = step.bytes;
    } else if (instance.size != size || instance.bytes != step.bytes) {
      problem = "joins " + describe(instance, seq) + " as a group of " + std::to_string(size) +
                " with " + std::to_string(step.bytes) + " B, but its first member said " +
                std::to_string(instance.size) + " with " + std::to_string(instance.bytes) +
                " B (every member must post the same size and bytes)";
      return std::nullopt;
    }
    instance.members.push_back(Member{rank, posted});
    if (static_cast<int>(instance.members.size()) < instance.size) return std::nullopt;
    std::sort(instance.members.begin(), instance.members.end(),
              [](const Member& a, const Member& b) { return a.rank < b.rank; });
    const bool has_owner = std::any_of(instance.members.begin(), instance.members.end(),
                                       [&](const Member& m) { return m.rank == instance.owner; });
    if (!has_owner) {
      problem = "completes " + describe(instance, seq) + " with " + std::to_string(instance.size) +
                " members, none of them the owner (the owner must post the step too)";
      return std::nullopt;
    }
    Instance done = std::move(instance);
    open_.erase(it);
    return done;
  }

  bool empty() const { return open_.empty(); }
  // f(const Instance&, waiting description) for every instance still short of members.
  template <class F> void for_each_open(F&& f) const {
    for (const auto& [key, instance] : open_)
      f(instance, describe(instance, std::get<3>(key)) + " has " +
                      std::to_string(instance.members.size()) + " of its " +
                      std::to_string(instance.size) + " members");
  }
  void clear() {
    open_.clear();
    next_.clear();
  }

private:
  using Key = std::tuple<int, int, std::uint8_t, std::uint64_t>; // owner, channel, kind, seq
  static std::string describe(const Instance& instance, std::uint64_t seq) {
    return std::string(to_string(instance.kind)) + " #" + std::to_string(seq) + " of owner " +
           std::to_string(instance.owner) + " ch " + std::to_string(instance.channel);
  }

  std::map<std::tuple<int, int, int, std::uint8_t>, std::uint64_t> next_; // member, owner, ch
  std::map<Key, Instance> open_;
};

} // namespace ddlsim::coll
