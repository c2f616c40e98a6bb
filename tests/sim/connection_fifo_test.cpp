// One connection's transfers move their bytes one after another while their latencies overlap
// (sim/src/connection_fifo.hpp: NCCL's NCCL_STEPS slots per connection), on both analytic
// evaluations.
#include "uniform_star.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::sim;
using namespace ddlsim::sim::test;

namespace {

coll::Step transfer_step(coll::StepKind kind, int peer, std::uint64_t offset, std::uint64_t bytes) {
  coll::Step step;
  step.kind = kind;
  step.peer = peer;
  if (kind == coll::StepKind::send)
    step.src = {coll::Buffer::output, offset, bytes};
  else
    step.dst = {coll::Buffer::output, offset, bytes};
  step.bytes = bytes;
  return step;
}

// Rank 0 sends `chunks` chunks of `chunk` bytes to rank 1, which has posted its receives ahead
// and forwards each chunk to rank 2 once it has it (rank 2 posts ahead too).
coll::Schedule relay(int chunks, std::uint64_t chunk) {
  using coll::StepKind;
  coll::MaterializedSchedule m;
  m.call = make_call(coll::Op::broadcast, "relay", 3, chunk * std::uint64_t(chunks));
  m.algorithm = "relay";
  m.ranks = 3;
  m.channels = 1;
  m.scratch_bytes = {0, 0, 0};
  m.programs.assign(3, std::vector<std::vector<coll::Step>>(1));
  for (int j = 0; j < chunks; ++j) {
    const std::uint64_t at = chunk * std::uint64_t(j);
    m.programs[0][0].push_back(transfer_step(StepKind::send, 1, at, chunk));
    m.programs[1][0].push_back(transfer_step(StepKind::recv, 0, at, chunk));
    m.programs[2][0].push_back(transfer_step(StepKind::recv, 1, at, chunk));
  }
  for (int j = 0; j < chunks; ++j) {
    coll::Step send = transfer_step(StepKind::send, 2, chunk * std::uint64_t(j), chunk);
    send.deps[send.dep_count++] = std::uint32_t(j);
    m.programs[1][0].push_back(send);
  }
  return coll::Schedule::from_materialized(std::move(m));
}

} // namespace

TEST_CASE("a connection's chunks move one after another: a relay takes 2a + (C+1)(n/C)b") {
  // Chunk j reaches rank 1 a + (j+1)(n/C)b after the start and is forwarded at once, so the
  // relay overlaps the two hops. Shared fairly, all C chunks would reach rank 1 at a + n b and
  // the relay would take 2(a + n b). Both analytic evaluations agree.
  const topo::Topology topology = star(3);
  for (int chunks : {1, 2, 3, 8}) {
    const std::uint64_t chunk = 4096;
    const coll::Schedule schedule = relay(chunks, chunk);
    for (bool dependency_order : {true, false}) {
      topo::Router router(topology);
      AnalyticOptions options;
      options.try_dependency_order = dependency_order;
      INFO("chunks " << chunks << ", dependency order " << dependency_order);
      const double time =
          static_cast<double>(simulate_analytic(topology, router, schedule, options).time);
      check_equal(time, 2 * kAlpha + (chunks + 1) * double(chunk) * kBeta);
    }
  }
}
