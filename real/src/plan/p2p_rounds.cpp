#include "ddlsim/real/p2p_rounds.hpp"

#include "ddlsim/collectives/step_runner.hpp"
#include "ddlsim/core/input_error.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <tuple>

namespace ddlsim::real {

namespace {

// Drives the shared step rules round by round: in each round the runner starts every step that
// rule 1 allows (deps and waits completed in earlier rounds), the round takes the local steps
// it started and the sends and receives whose partner has started too (rule 2), and all of them
// complete at the round's end.
class RoundPlanner {
public:
  explicit RoundPlanner(const coll::Schedule& schedule)
      : runner_(*this, schedule, 0, schedule.ranks()),
        messages_(schedule.ranks(), schedule.channels()), ranks_(schedule.ranks()) {}

  P2pRounds plan() {
    P2pRounds plan;
    plan.ranks = ranks_;
    plan.staging_bytes.assign(std::size_t(ranks_), 0);
    runner_.restart();
    for (;;) {
      runner_.drain();
      if (local_.empty() && paired_.empty()) {
        if (runner_.finished()) return plan;
        throw std::runtime_error("the schedule cannot progress in rounds of matched sends and "
                                 "receives; stuck: " +
                                 stuck());
      }
      std::vector<RankRound> shares(static_cast<std::size_t>(ranks_));
      for (const Started& s : local_) shares[std::size_t(s.rank)].local.push_back(s.at);
      for (const Started& s : paired_) {
        RankRound& share = shares[std::size_t(s.rank)];
        share.group.push_back(s.at);
        if (s.at.step.kind == coll::StepKind::recv_reduce)
          share.recv_reduce_bytes += s.at.step.bytes;
      }
      const auto by_place = [](const RoundStep& a, const RoundStep& b) {
        return std::tie(a.channel, a.index) < std::tie(b.channel, b.index);
      };
      for (std::size_t r = 0; r < shares.size(); ++r) {
        std::sort(shares[r].local.begin(), shares[r].local.end(), by_place);
        std::sort(shares[r].group.begin(), shares[r].group.end(), by_place);
        plan.staging_bytes[r] = std::max(plan.staging_bytes[r], shares[r].recv_reduce_bytes);
      }
      plan.steps += local_.size() + paired_.size();
      plan.rounds.push_back(std::move(shares));
      // The round's end: everything it ran completes.
      for (const Started& s : local_) runner_.complete(s.ref);
      for (const Started& s : paired_) runner_.complete(s.ref);
      local_.clear();
      paired_.clear();
    }
  }

private:
  friend class coll::StepRunner<RoundPlanner>;
  struct Started {
    coll::StepRef ref;
    int rank = 0;
    RoundStep at;
  };

  // StepRunner's driver.
  void start_step(coll::StepRef ref, const coll::Step& step) {
    const int rank = runner_.program(ref.program).rank;
    const Started s{ref, rank, RoundStep{step.channel, ref.index, step}};
    if (step.is_local()) return local_.push_back(s);
    const auto partner = step.is_send() ? messages_.match_send(rank, step.peer, step.channel, s)
                                        : messages_.match_receive(step.peer, rank, step.channel, s);
    if (!partner) return;
    const Started& send = step.is_send() ? s : *partner;
    const Started& receive = step.is_send() ? *partner : s;
    if (send.at.step.bytes != receive.at.step.bytes)
      throw std::runtime_error(where(send) + " sends " + std::to_string(send.at.step.bytes) +
                               " B but its receive " + where(receive) + " expects " +
                               std::to_string(receive.at.step.bytes) + " B");
    paired_.push_back(s);
    paired_.push_back(*partner);
  }
  [[noreturn]] void reject_step(const std::string& message) const {
    throw std::runtime_error(message);
  }

  std::string where(const Started& s) const {
    return coll::step_place(s.rank, s.at.channel, s.at.index, s.at.step);
  }

  // The steps that wait for a partner that was never posted, then those whose rule 1 holds.
  std::string stuck() const {
    std::vector<std::string> lines;
    messages_.for_each_unmatched([&](const Started& s, bool is_send) {
      lines.push_back(where(s) +
                      (is_send ? " has no matching receive posted by rank "
                               : " has no matching send posted by rank ") +
                      std::to_string(s.at.step.peer));
    });
    std::sort(lines.begin(), lines.end());
    for (std::uint32_t id = 0; id < runner_.program_count(); ++id)
      if (runner_.program(id).cursor.has_next()) lines.push_back(runner_.describe_pending(id));
    std::string text;
    for (const std::string& line : lines) {
      if (text.size() >= 400) break;
      text += (text.empty() ? "" : "; ") + line;
    }
    return text;
  }

  coll::StepRunner<RoundPlanner> runner_;
  coll::MessageQueues<Started> messages_;
  int ranks_ = 0;
  std::vector<Started> local_, paired_; // what the current round runs
};

} // namespace

P2pRounds plan_p2p_rounds(const coll::Schedule& schedule) {
  // ncclSend/ncclRecv rounds cannot express a reduction inside the switch.
  if (coll::has_switch_steps(schedule))
    throw InputError("algorithm " + schedule.call().algorithm,
                     "NCCL send/receive rounds cannot run in-switch reduction (NVLS switch "
                     "steps); run NCCL's own NVLS collective as the baseline, simulate this one "
                     "(ddlsim run), or choose an algorithm without NVLS (e.g. ring)");
  return RoundPlanner(schedule).plan();
}

} // namespace ddlsim::real
