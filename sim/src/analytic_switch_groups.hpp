// The analytic engine's switch groups (rule 4 of collectives/step.hpp): switch steps
// (switch_reduce, switch_multicast: NVLS) wait for the rest of their group; a complete group is
// one flow over the links SwitchRoutes gives (each member's leg to the switch and the switch's
// legs out), no GPU reduction (the switch adds in flight), and its members complete together
// when that flow ends. This class keeps the groups waiting and in flight; AnalyticRun turns a
// complete one into a transfer.
#pragma once

#include "switch_routes.hpp"

#include "ddlsim/collectives/step.hpp"
#include "ddlsim/collectives/switch_groups.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ddlsim::sim::detail {

template <typename Ref> class AnalyticSwitchGroups {
public:
  AnalyticSwitchGroups(const topo::Topology& topology, topo::Router& router, std::uint64_t seed)
      : routes_(topology, router, seed) {}

  // A complete group: the links it loads, its owner's step, its payload bytes (before the
  // protocol's wire bytes), what the GPUs put on the wire (every member's contribution for a
  // reduce, the owner's data once for a multicast) and the slot that holds its members.
  struct Ready {
    const SwitchRoute* route = nullptr;
    Ref owner{};
    std::uint64_t bytes = 0;
    std::uint64_t bytes_sent = 0;
    std::uint32_t slot = 0;
  };

  // `rank` posted switch step `step` (its channel, peer = owner, param = group size) as `ref`.
  // Returns the group once its last member posted. Throws std::logic_error for a malformed
  // group (members that disagree), which generators and validate() rule out.
  std::optional<Ready> post(std::int32_t rank, const coll::Step& step, Ref ref,
                            std::uint32_t index) {
    std::string problem;
    auto instance = groups_.post(rank, step, ref, problem);
    if (!problem.empty())
      throw std::logic_error("rank " + std::to_string(rank) + " channel " +
                             std::to_string(step.channel) + " step " + std::to_string(index) +
                             ": " + problem);
    if (!instance) return std::nullopt;
    std::vector<std::int32_t> ranks;
    std::vector<Ref> refs;
    Ready ready;
    for (const auto& member : instance->members) {
      ranks.push_back(member.rank);
      refs.push_back(member.posted);
      if (member.rank == instance->owner) ready.owner = member.posted;
    }
    ready.route = &routes_.route(instance->kind, instance->owner, step.channel, ranks);
    if (free_.empty()) {
      ready.slot = static_cast<std::uint32_t>(members_.size());
      members_.emplace_back();
    } else {
      ready.slot = free_.back();
      free_.pop_back();
    }
    members_[ready.slot] = std::move(refs);
    ready.bytes = instance->bytes;
    ready.bytes_sent = instance->kind == coll::StepKind::switch_reduce
                           ? instance->bytes * instance->members.size()
                           : instance->bytes;
    return ready;
  }

  // The members of the group in `slot`, whose flow ended; the slot is free again.
  std::vector<Ref> release(std::uint32_t slot) {
    std::vector<Ref> members = std::move(members_[slot]);
    free_.push_back(slot);
    return members;
  }

private:
  coll::SwitchGroups<Ref> groups_;
  SwitchRoutes routes_;
  std::vector<std::vector<Ref>> members_; // of each group in flight, by slot
  std::vector<std::uint32_t> free_;
};

} // namespace ddlsim::sim::detail
