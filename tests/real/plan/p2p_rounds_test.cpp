// The NCCL backend's translation of a Schedule into rounds of grouped sends and receives
// (real/p2p_rounds.hpp), checked without a GPU: a host executor that runs the rounds exactly as
// the NCCL backend does (local steps, then the group: every send reads its bytes, every receive
// writes or reduces them after the group) must match the reference executor bit for bit for
// every generator; and the rounds themselves obey the step rules.
#include "ddlsim/collectives/algorithm.hpp"
#include "ddlsim/collectives/reference.hpp"
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/real/p2p_rounds.hpp"
#include "make_call.hpp"

#include "dtype.hpp"
#include "host_kernels.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <optional>
#include <tuple>

using namespace ddlsim;
using namespace ddlsim::coll;
using ddlsim::real::P2pRounds;
using ddlsim::real::plan_p2p_rounds;
using ddlsim::real::RankRound;
using ddlsim::real::RoundStep;

namespace {

std::optional<Schedule> schedule_for(CollectiveCall call) {
  try {
    return Schedule::make(call);
  } catch (const InputError&) {}
  if (call.ranks % 2 == 0 && call.ranks > 2) {
    call.params.group_sizes = {2, call.ranks / 2};
    try {
      return Schedule::make(call);
    } catch (const InputError&) {}
  }
  return std::nullopt;
}

using ddlsim::test_support::make_valid_call;

using Buffers = std::array<std::vector<std::byte>, 3>;

std::span<std::byte> bytes(Buffers& b, const BufferRange& range) {
  if (range.bytes == 0) return {};
  return {b[std::size_t(range.buffer)].data() + range.offset, range.bytes};
}

// Runs the rounds on host buffers the way the NCCL backend runs them on GPUs; returns the number
// of output elements that differ from the reference executor's.
std::uint64_t run_rounds(const Schedule& schedule, const P2pRounds& plan) {
  const CollectiveCall& call = schedule.call();
  const std::size_t e = element_size(call.dtype);
  const auto inputs = reference_inputs(call, {});
  const ReferenceRun reference = execute_reference(schedule, inputs);
  REQUIRE(reference.status.ok);
  std::vector<Buffers> ranks(std::size_t(schedule.ranks()));
  for (int r = 0; r < schedule.ranks(); ++r) {
    for (Buffer b : {Buffer::input, Buffer::output, Buffer::scratch})
      ranks[std::size_t(r)][std::size_t(b)].resize(schedule.buffer_bytes(r, b));
    auto& input = ranks[std::size_t(r)][0];
    for (std::size_t i = 0; r < call.ranks && i < input.size() / e; ++i)
      detail::store(call.dtype, &input[i * e], float(inputs[std::size_t(r)][i]));
  }
  for (const std::vector<RankRound>& round : plan.rounds) {
    for (int r = 0; r < schedule.ranks(); ++r)
      for (const RoundStep& s : round[std::size_t(r)].local)
        real::host::run_local_step(
            s.step, call.reduction, call.dtype, bytes(ranks[std::size_t(r)], s.step.src),
            bytes(ranks[std::size_t(r)], s.step.aux), bytes(ranks[std::size_t(r)], s.step.dst));
    // The group: NCCL matches the k-th send a->b with the k-th receive at b from a, in posting
    // order; every send reads its source before any receive of the round writes.
    std::map<std::pair<int, int>, std::vector<std::vector<std::byte>>> wire;
    for (int r = 0; r < schedule.ranks(); ++r)
      for (const RoundStep& s : round[std::size_t(r)].group)
        if (s.step.is_send()) {
          auto src = bytes(ranks[std::size_t(r)], s.step.src);
          wire[{r, s.step.peer}].emplace_back(src.begin(), src.end());
        }
    std::map<std::pair<int, int>, std::size_t> taken;
    for (int r = 0; r < schedule.ranks(); ++r)
      for (const RoundStep& s : round[std::size_t(r)].group) {
        if (s.step.is_send()) continue;
        auto& queue = wire[{s.step.peer, r}];
        std::size_t& k = taken[{s.step.peer, r}];
        REQUIRE(k < queue.size());
        const std::vector<std::byte>& incoming = queue[k++];
        REQUIRE(incoming.size() == s.step.bytes);
        auto dst = bytes(ranks[std::size_t(r)], s.step.dst);
        if (s.step.kind == StepKind::recv)
          std::copy(incoming.begin(), incoming.end(), dst.begin());
        else
          real::host::combine(call.reduction, call.dtype, bytes(ranks[std::size_t(r)], s.step.src),
                              incoming, dst);
      }
    for (const auto& [pair, queue] : wire) CHECK(taken[pair] == queue.size());
  }
  std::uint64_t wrong = 0;
  for (int r = 0; r < call.ranks; ++r) {
    const auto& output = ranks[std::size_t(r)][std::size_t(Buffer::output)];
    const auto& want = reference.outputs[std::size_t(r)];
    if (output.size() / e != want.size()) return wrong + want.size() + 1;
    for (std::size_t i = 0; i < want.size(); ++i) {
      const double got = detail::load(call.dtype, &output[i * e]);
      if (!(got == want[i] || (std::isnan(got) && std::isnan(want[i])))) ++wrong;
    }
  }
  return wrong;
}

} // namespace

TEST_CASE("p2p rounds: every generator run round by round matches the reference") {
  std::size_t runs = 0;
  for (const Algorithm* algorithm : all_algorithms()) {
    for (int p : {1, 2, 3, 4, 5, 8}) {
      const auto schedule =
          schedule_for(make_valid_call(algorithm->op(), std::string(algorithm->name()), p, 1000));
      if (!schedule) continue;
      INFO(algorithm->name() << " p=" << p);
      if (has_switch_steps(*schedule)) { // NVLS: no send/receive rounds can express it
        CHECK_THROWS_AS(plan_p2p_rounds(*schedule), InputError);
        continue;
      }
      const P2pRounds plan = plan_p2p_rounds(*schedule);
      CHECK(plan.ranks == schedule->ranks());
      CHECK(run_rounds(*schedule, plan) == 0);
      ++runs;
    }
  }
  CHECK(runs > 100);
}

TEST_CASE("p2p rounds: dtypes, chunks and channels match the reference") {
  struct Case {
    Op op;
    const char* algorithm;
    int ranks;
    DataType dtype;
    Reduction reduction;
    int chunks, channels;
  };
  const Case cases[] = {
      {Op::all_reduce, "ring", 5, DataType::fp16, Reduction::avg, 3, 2},
      {Op::all_reduce, "rabenseifner", 6, DataType::bf16, Reduction::sum, 1, 1},
      {Op::all_reduce, "double_binary_tree", 7, DataType::fp32, Reduction::avg, 3, 2},
      {Op::broadcast, "pipelined_chain", 4, DataType::fp32, Reduction::sum, 4, 2},
      {Op::all_reduce, "topk", 4, DataType::fp16, Reduction::sum, 1, 1},
  };
  for (const Case& c : cases) {
    CollectiveCall call = make_valid_call(c.op, c.algorithm, c.ranks, 4099, c.dtype, c.reduction);
    call.params.chunks = c.chunks;
    call.params.channels = c.channels;
    const Schedule schedule = Schedule::make(call);
    INFO(c.algorithm << " p=" << c.ranks);
    CHECK(run_rounds(schedule, plan_p2p_rounds(schedule)) == 0);
  }
}

TEST_CASE("p2p rounds: a ring all-reduce is 2(p-1) rounds of one send and one receive per rank") {
  for (int p : {2, 4, 7}) {
    const Schedule schedule = Schedule::make(make_valid_call(Op::all_reduce, "ring", p, 7 * 64));
    const P2pRounds plan = plan_p2p_rounds(schedule);
    std::size_t comm_rounds = 0, steps = 0;
    for (const auto& round : plan.rounds) {
      bool any = false;
      for (const RankRound& share : round) {
        steps += share.local.size() + share.group.size();
        if (share.group.empty()) continue;
        any = true;
        CHECK(share.group.size() == 2);
      }
      comm_rounds += any ? 1 : 0;
    }
    INFO("p=" << p);
    CHECK(comm_rounds == std::size_t(2 * (p - 1)));
    CHECK(steps == plan.steps);
    // Every rank's staging holds one reduce-scatter block (the largest recv_reduce of a round).
    for (std::uint64_t staging : plan.staging_bytes) CHECK(staging > 0);
    for (std::uint64_t staging : plan.staging_bytes)
      CHECK(staging <= (schedule.call().bytes / 4 + std::uint64_t(p) - 1) / std::uint64_t(p) * 4);
  }
}

TEST_CASE("p2p rounds: group order is by channel then index, and every step runs once") {
  CollectiveCall call = make_valid_call(Op::all_reduce, "ring", 4, 4096);
  call.params.channels = 3;
  call.params.chunks = 2;
  const Schedule schedule = Schedule::make(call);
  const P2pRounds plan = plan_p2p_rounds(schedule);
  std::map<std::tuple<int, int, std::uint32_t>, int> seen;
  for (const auto& round : plan.rounds)
    for (int r = 0; r < plan.ranks; ++r) {
      const RankRound& share = round[std::size_t(r)];
      for (std::size_t i = 1; i < share.group.size(); ++i)
        CHECK(std::tie(share.group[i - 1].channel, share.group[i - 1].index) <
              std::tie(share.group[i].channel, share.group[i].index));
      for (const RoundStep& s : share.local) ++seen[{r, s.channel, s.index}];
      for (const RoundStep& s : share.group) ++seen[{r, s.channel, s.index}];
    }
  std::size_t total = 0;
  for (int r = 0; r < schedule.ranks(); ++r)
    for (int c = 0; c < schedule.channels(); ++c) {
      StepStream stream = schedule.program(r, c);
      Step step;
      for (std::uint32_t i = 0; stream.next(step); ++i, ++total) CHECK(seen[{r, c, i}] == 1);
    }
  CHECK(total == plan.steps);
}

TEST_CASE("p2p rounds: a send without its receive is refused naming the step") {
  MaterializedSchedule broken;
  broken.call.ranks = 2;
  broken.call.bytes = 64;
  broken.call.op = Op::send_recv;
  broken.call.root = 1;
  broken.algorithm = "broken";
  broken.ranks = 2;
  broken.channels = 1;
  broken.scratch_bytes = {0, 0};
  broken.programs.assign(2, std::vector<std::vector<Step>>(1));
  Step send;
  send.kind = StepKind::send;
  send.peer = 1;
  send.src = {Buffer::input, 0, 64};
  send.bytes = 64;
  broken.programs[0][0].push_back(send);
  REQUIRE_THROWS_WITH(plan_p2p_rounds(Schedule::from_materialized(broken)),
                      Catch::Contains("rank 0 ch 0 step 0") &&
                          Catch::Contains("no matching receive"));
}
