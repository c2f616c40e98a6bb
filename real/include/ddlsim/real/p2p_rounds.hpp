// A Schedule cut into rounds for a peer-to-peer library with grouped operations (NCCL's
// ncclGroupStart / ncclSend / ncclRecv / ncclGroupEnd): in round r every rank first runs its
// local steps of the round, then posts its sends and receives of the round as one group; the
// round ends when the group has completed. recv_reduce is a receive into a temporary buffer and
// our reduce kernel after the group.
//
// Rounds follow the execution rules of collectives/step.hpp with every step of a round
// completing at the round's end: a step joins round r when the previous step of its program is
// in round r or earlier (in-order issue), every dependency and cross-channel wait completed in an
// earlier round, and, for a send or receive, its matching step (rule 2: the k-th send a->b on
// channel c and the k-th receive at b from a on c) joins the same round. So a group never waits
// for a partner in another group, and both sides post a pair's operations in the same order
// (channel, then program index), which is the order NCCL matches them in.
#pragma once

#include "ddlsim/collectives/schedule.hpp"

#include <cstdint>
#include <vector>

namespace ddlsim::real {

struct RoundStep {
  std::uint16_t channel = 0;
  std::uint32_t index = 0; // in the program (rank, channel)
  coll::Step step;
};

// One rank's share of a round: local steps (run first, in this order), then the group.
struct RankRound {
  std::vector<RoundStep> local;
  std::vector<RoundStep> group;        // sends and receives, by (channel, index)
  std::uint64_t recv_reduce_bytes = 0; // temporary bytes the group's recv_reduce steps need
};

struct P2pRounds {
  int ranks = 0;
  std::vector<std::vector<RankRound>> rounds; // [round][rank]
  std::uint64_t steps = 0;                    // all ranks
  // Per rank: the most temporary bytes any one round needs (size of the receive staging buffer).
  std::vector<std::uint64_t> staging_bytes;
};

// Plans the rounds of `schedule`. Throws std::runtime_error naming the steps when the schedule
// cannot progress (a send without its receive, a dependency cycle) or breaks a step rule, and
// InputError for a schedule with switch steps (NVLS), which send/receive rounds cannot express.
P2pRounds plan_p2p_rounds(const coll::Schedule& schedule);

} // namespace ddlsim::real
