// The rate a real run's sends achieved (real/link_rate.hpp): each rank's bytes sent over the
// union of its send intervals, overlapping sends counted once; the median, min and max over the
// ranks that sent; nothing without timed sends.
#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/real/link_rate.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::real;

namespace {

StepTiming timing(coll::StepKind kind, std::uint64_t bytes, std::int64_t start, std::int64_t end) {
  StepTiming t;
  t.kind = kind;
  t.bytes = bytes;
  t.start_ns = start;
  t.end_ns = end;
  return t;
}

} // namespace

TEST_CASE("link rate: bytes over the union of each rank's send intervals") {
  HostRun run;
  RankOutcome a; // two overlapping sends: 1,000 + 1,000 B over [0, 300) ns busy
  a.rank = 0;
  a.timeline = {timing(coll::StepKind::send, 1000, 0, 200),
                timing(coll::StepKind::send, 1000, 100, 300),
                timing(coll::StepKind::recv, 5000, 0, 1000)}; // receives do not count
  RankOutcome b; // two disjoint sends: 500 B over 100 ns
  b.rank = 1;
  b.timeline = {timing(coll::StepKind::send, 250, 0, 50),
                timing(coll::StepKind::send, 250, 60, 110)};
  RankOutcome c; // only local work: left out
  c.rank = 2;
  c.timeline = {timing(coll::StepKind::reduce, 1000, 0, 10)};
  run.ranks = {b, c, a};
  const std::optional<AchievedRate> rate = achieved_send_rate(run);
  REQUIRE(rate);
  REQUIRE(rate->ranks.size() == 2);
  CHECK(rate->ranks[0].rank == 0);
  CHECK(rate->ranks[0].bytes == 2000);
  CHECK(rate->ranks[0].busy_ns == 300);
  CHECK(rate->ranks[0].gbps() == Approx(2000.0 * 8 / 300));
  CHECK(rate->ranks[1].busy_ns == 100);
  CHECK(rate->ranks[1].gbps() == Approx(40.0));
  CHECK(rate->min_gbps == Approx(40.0));
  CHECK(rate->max_gbps == Approx(2000.0 * 8 / 300));
  CHECK(rate->median_gbps == Approx((40.0 + 2000.0 * 8 / 300) / 2));
}

TEST_CASE("link rate: a run without timed sends has none") {
  HostRun run;
  CHECK_FALSE(achieved_send_rate(run).has_value());
  RankOutcome a;
  a.timeline = {timing(coll::StepKind::send, 0, 5, 5)};
  run.ranks = {a};
  CHECK_FALSE(achieved_send_rate(run).has_value());
}

TEST_CASE("link rate: a loopback ring all-reduce's sends achieve a positive, bounded rate") {
  coll::CollectiveCall call;
  call.op = coll::Op::all_reduce;
  call.algorithm = "ring";
  call.ranks = 3;
  call.bytes = 3 << 20;
  HostOptions options;
  options.mode = HostMode::threads;
  options.iterations = 2;
  const HostRun run = run_host(coll::Schedule::make(call), options);
  REQUIRE(run.ok);
  const std::optional<AchievedRate> rate = achieved_send_rate(run);
  REQUIRE(rate);
  CHECK(rate->ranks.size() == 3);
  // Each rank sends 2 (p - 1) / p of the buffer in a ring all-reduce (the last iteration's).
  for (const RankSendRate& r : rate->ranks) CHECK(r.bytes == (std::uint64_t(4) << 20));
  CHECK(rate->min_gbps > 0);
  CHECK(rate->max_gbps < 2000); // above any host's memory copy: a wrong unit or interval
}
