// validate(): the structural checks every executor relies on, over a materialized schedule.
#include "ddlsim/collectives/schedule.hpp"

#include "step_rules.hpp"

#include "ddlsim/collectives/switch_groups.hpp"
#include "ddlsim/core/input_error.hpp"

#include <map>
#include <tuple>

namespace ddlsim::coll {

namespace {

using detail::StepPlace;

[[noreturn]] void fail(const std::string& what) {
  throw InputError("schedule", what);
}

struct Transfer {
  StepPlace place;
  std::uint64_t bytes;
  std::uint8_t protocol;
};
// (sender, receiver, channel) -> the sends (or receives) in program order.
using TransferLists = std::map<std::tuple<int, int, int>, std::vector<Transfer>>;

// Rule 2 of step.hpp: the k-th send a->b on channel c meets the k-th receive at b from a on c,
// with the same byte count.
void check_matching(const TransferLists& sends, const TransferLists& receives) {
  static const std::vector<Transfer> none;
  auto list = [](const TransferLists& lists, const auto& key) -> const std::vector<Transfer>& {
    auto it = lists.find(key);
    return it == lists.end() ? none : it->second;
  };
  auto check = [&](const TransferLists& mine, const TransferLists& theirs, bool sending) {
    for (const auto& [key, ours] : mine) {
      const auto& others = list(theirs, key);
      const auto& [from, to, channel] = key;
      for (std::size_t k = 0; k < ours.size(); ++k) {
        const std::string what =
            to_string(ours[k].place) + ": " + (sending ? "send" : "receive") + " #" +
            std::to_string(k) + (sending ? " to rank " : " from rank ") +
            std::to_string(sending ? to : from) + " on channel " + std::to_string(channel);
        if (k >= others.size())
          fail(what + " has no matching " + (sending ? "receive" : "send") + " (rank " +
               std::to_string(sending ? to : from) + " has only " + std::to_string(others.size()) +
               ")");
        if (ours[k].bytes != others[k].bytes)
          fail(what + " moves " + std::to_string(ours[k].bytes) + " B but its match, " +
               to_string(others[k].place) + ", moves " + std::to_string(others[k].bytes) + " B");
        if (ours[k].protocol != others[k].protocol)
          fail(what + " names protocol " + std::to_string(ours[k].protocol) + " but its match, " +
               to_string(others[k].place) + ", names " + std::to_string(others[k].protocol) +
               " (a send and its receive belong to one call)");
      }
    }
  };
  check(sends, receives, true);
  check(receives, sends, false);
}

} // namespace

void validate(const MaterializedSchedule& s) {
  if (s.call.ranks < 1 || s.ranks < s.call.ranks)
    fail("ranks " + std::to_string(s.ranks) + " must be at least the call's " +
         std::to_string(s.call.ranks) + " (and at least 1)");
  if (s.channels < 1) fail("channels must be at least 1, not " + std::to_string(s.channels));
  if (s.programs.size() != std::size_t(s.ranks) || s.scratch_bytes.size() != std::size_t(s.ranks))
    fail("expected programs and scratch_bytes for " + std::to_string(s.ranks) + " ranks, found " +
         std::to_string(s.programs.size()) + " and " + std::to_string(s.scratch_bytes.size()));
  const std::size_t protocols = s.protocols.empty() ? 1 : s.protocols.size();
  for (const Protocol& protocol : s.protocols) check_protocol(protocol, "schedule");
  TransferLists sends, receives;
  SwitchGroups<StepPlace> groups; // rule 4: membership depends on program order only
  for (int r = 0; r < s.ranks; ++r) {
    const auto& programs = s.programs[std::size_t(r)];
    if (programs.size() != std::size_t(s.channels))
      fail("rank " + std::to_string(r) + " has " + std::to_string(programs.size()) +
           " programs for " + std::to_string(s.channels) + " channels");
    const detail::RankBuffers buffers{input_bytes(s.call, r), output_bytes(s.call, r),
                                      s.scratch_bytes[std::size_t(r)]};
    for (int c = 0; c < s.channels; ++c) {
      const auto& steps = programs[std::size_t(c)];
      for (std::size_t i = 0; i < steps.size(); ++i) {
        const Step& step = steps[i];
        const StepPlace place{r, c, static_cast<std::uint32_t>(i)};
        if (auto problem = detail::step_problem(step, place, s.ranks, buffers, s.call.dtype);
            !problem.empty())
          fail(to_string(place) + " (" + detail::describe(step) + "): " + problem);
        if (step.has_wait() && (step.wait_channel >= s.channels ||
                                step.wait_step >= programs[std::size_t(step.wait_channel)].size()))
          fail(to_string(place) + " (" + detail::describe(step) + "): waits for channel " +
               std::to_string(step.wait_channel) + " step " + std::to_string(step.wait_step) +
               ", which does not exist (" + std::to_string(s.channels) + " channels)");
        if (step.protocol >= protocols)
          fail(to_string(place) + " (" + detail::describe(step) + "): names protocol " +
               std::to_string(step.protocol) + " of " + std::to_string(protocols));
        if (step.is_send()) sends[{r, step.peer, c}].push_back({place, step.bytes, step.protocol});
        if (step.is_receive())
          receives[{step.peer, r, c}].push_back({place, step.bytes, step.protocol});
        if (std::string problem; step.is_switch()) {
          groups.post(r, step, place, problem);
          if (!problem.empty())
            fail(to_string(place) + " (" + detail::describe(step) + "): " + problem);
        }
      }
    }
  }
  check_matching(sends, receives);
  groups.for_each_open([](const auto&, const std::string& what) {
    fail(what + ": a switch step without the rest of its group");
  });
}

} // namespace ddlsim::coll
