#include "ddlsim/real/p2p_rounds.hpp"

#include "step_rules.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

namespace ddlsim::real {

namespace {

struct Partner {
  std::uint32_t program = 0, index = 0;
};

struct Program {
  int rank = 0, channel = 0;
  std::vector<coll::Step> steps;
  std::vector<Partner> partner; // for sends and receives
  std::vector<std::uint8_t> matched;
  std::vector<std::uint8_t> candidate;   // in this round's candidates (or posted, unmatched)
  std::vector<std::uint32_t> done_round; // round + 1 in which the step ran; 0 = not yet
  std::uint32_t next = 0;
};

std::string place(const Program& p, std::uint32_t index) {
  return coll::detail::to_string(coll::detail::StepPlace{p.rank, p.channel, index}) + " (" +
         coll::detail::describe(p.steps[index]) + ")";
}

std::vector<Program> read_programs(const coll::Schedule& schedule) {
  const int ranks = schedule.ranks(), channels = schedule.channels();
  std::vector<Program> programs(std::size_t(ranks * channels));
  for (int r = 0; r < ranks; ++r) {
    const coll::detail::RankBuffers sizes{schedule.buffer_bytes(r, coll::Buffer::input),
                                          schedule.buffer_bytes(r, coll::Buffer::output),
                                          schedule.buffer_bytes(r, coll::Buffer::scratch)};
    for (int c = 0; c < channels; ++c) {
      Program& p = programs[std::size_t(r * channels + c)];
      p.rank = r;
      p.channel = c;
      coll::StepStream stream = schedule.program(r, c);
      coll::Step step;
      while (stream.next(step)) {
        const coll::detail::StepPlace at{r, c, std::uint32_t(p.steps.size())};
        if (const std::string problem =
                coll::detail::step_problem(step, at, ranks, sizes, schedule.call().dtype);
            !problem.empty())
          throw std::runtime_error(coll::detail::to_string(at) + " (" +
                                   coll::detail::describe(step) + "): " + problem);
        if (step.has_wait() && step.wait_channel >= channels)
          throw std::runtime_error(coll::detail::to_string(at) + " waits for channel " +
                                   std::to_string(step.wait_channel) + " of " +
                                   std::to_string(channels));
        p.steps.push_back(step);
      }
      p.partner.resize(p.steps.size());
      p.matched.assign(p.steps.size(), 0);
      p.candidate.assign(p.steps.size(), 0);
      p.done_round.assign(p.steps.size(), 0);
    }
  }
  // Rule 2: the k-th send a->b on c matches the k-th receive at b from a on c; both live in the
  // programs (a, c) and (b, c), so matching is a walk over two programs.
  for (std::size_t id = 0; id < programs.size(); ++id) {
    Program& sender = programs[id];
    std::map<int, std::uint32_t> sends_to; // peer -> sends seen
    for (std::uint32_t i = 0; i < sender.steps.size(); ++i) {
      const coll::Step& s = sender.steps[i];
      if (!s.is_send()) continue;
      const std::uint32_t k = sends_to[s.peer]++;
      const auto rid = std::uint32_t(s.peer * channels + sender.channel);
      Program& receiver = programs[rid];
      std::uint32_t seen = 0, j = 0;
      for (; j < receiver.steps.size(); ++j)
        if (receiver.steps[j].is_receive() && receiver.steps[j].peer == sender.rank && seen++ == k)
          break;
      if (j == receiver.steps.size())
        throw std::runtime_error(place(sender, i) + " has no matching receive at rank " +
                                 std::to_string(s.peer));
      if (receiver.steps[j].bytes != s.bytes)
        throw std::runtime_error(place(sender, i) + " sends " + std::to_string(s.bytes) +
                                 " B but its receive " + place(receiver, j) + " expects " +
                                 std::to_string(receiver.steps[j].bytes) + " B");
      sender.partner[i] = {rid, j};
      receiver.partner[j] = {std::uint32_t(id), i};
      sender.matched[i] = receiver.matched[j] = 1;
    }
  }
  for (const Program& p : programs)
    for (std::uint32_t j = 0; j < p.steps.size(); ++j)
      if (p.steps[j].is_receive() && !p.matched[j])
        throw std::runtime_error(place(p, j) + " has no matching send");
  return programs;
}

} // namespace

P2pRounds plan_p2p_rounds(const coll::Schedule& schedule) {
  std::vector<Program> programs = read_programs(schedule);
  const int ranks = schedule.ranks(), channels = schedule.channels();
  P2pRounds plan;
  plan.ranks = ranks;
  plan.staging_bytes.assign(std::size_t(ranks), 0);
  std::size_t left = 0;
  for (const Program& p : programs) left += p.steps.size();
  // A program's candidates in a round: its posted sends and receives still waiting for their
  // partner (started in the reference's sense: the steps after them may start), then the
  // in-order run of steps whose dependencies completed in earlier rounds.
  std::vector<std::vector<std::uint32_t>> candidates(programs.size());
  for (std::uint32_t round = 1; left > 0; ++round) {
    const auto completed = [&](const Program& p, std::uint32_t index) {
      return p.done_round[index] != 0 && p.done_round[index] < round;
    };
    for (std::size_t id = 0; id < programs.size(); ++id) {
      Program& p = programs[id];
      for (; p.next < p.steps.size(); ++p.next) {
        const coll::Step& s = p.steps[p.next];
        bool ready = true;
        for (std::size_t d = 0; d < s.dep_count && ready; ++d) ready = completed(p, s.deps[d]);
        if (ready && s.has_wait()) {
          const Program& other = programs[std::size_t(p.rank * channels + s.wait_channel)];
          ready = s.wait_step < other.steps.size() && completed(other, s.wait_step);
        }
        if (!ready) break;
        p.candidate[p.next] = 1;
        candidates[id].push_back(p.next);
      }
    }
    std::vector<RankRound> shares(static_cast<std::size_t>(ranks));
    std::size_t issued = 0;
    std::vector<std::pair<std::size_t, std::uint32_t>> issued_steps;
    for (std::size_t id = 0; id < programs.size(); ++id) {
      Program& p = programs[id];
      RankRound& share = shares[std::size_t(p.rank)];
      std::vector<std::uint32_t> waiting;
      for (const std::uint32_t i : candidates[id]) {
        const coll::Step& s = p.steps[i];
        if (!s.is_local()) {
          const Partner q = p.partner[i];
          if (!programs[q.program].candidate[q.index]) {
            waiting.push_back(i);
            continue;
          }
          share.group.push_back({std::uint16_t(p.channel), i, s});
          if (s.kind == coll::StepKind::recv_reduce) share.recv_reduce_bytes += s.bytes;
        } else {
          share.local.push_back({std::uint16_t(p.channel), i, s});
        }
        p.done_round[i] = round;
        issued_steps.emplace_back(id, i);
        ++issued;
      }
      candidates[id] = std::move(waiting);
    }
    for (const auto& [id, i] : issued_steps) programs[id].candidate[i] = 0;
    for (RankRound& share : shares)
      std::sort(share.group.begin(), share.group.end(), [](const RoundStep& a, const RoundStep& b) {
        return std::tie(a.channel, a.index) < std::tie(b.channel, b.index);
      });
    if (issued == 0) {
      std::string stuck;
      for (std::size_t id = 0; id < programs.size() && stuck.size() < 400; ++id) {
        const Program& p = programs[id];
        for (const std::uint32_t i : candidates[id])
          stuck += (stuck.empty() ? "" : "; ") + place(p, i) + " waits for its partner";
        if (p.next < p.steps.size())
          stuck += (stuck.empty() ? "" : "; ") + place(p, p.next) + " waits for its dependencies";
      }
      throw std::runtime_error("the schedule cannot progress in rounds of matched sends and "
                               "receives; stuck: " +
                               stuck);
    }
    for (int r = 0; r < ranks; ++r)
      plan.staging_bytes[std::size_t(r)] =
          std::max(plan.staging_bytes[std::size_t(r)], shares[std::size_t(r)].recv_reduce_bytes);
    left -= issued;
    plan.steps += issued;
    plan.rounds.push_back(std::move(shares));
  }
  return plan;
}

} // namespace ddlsim::real
