// The analytic engine's per-transfer record and its event (sim/src/analytic_engine.cpp): both
// sized and laid out for the cache, since at 16k ranks the engine's time goes to cache misses.
#pragma once

#include "ddlsim/core/units.hpp"
#include "ddlsim/topologies/router.hpp"

#include <cstdint>

namespace ddlsim::sim::detail {

struct AnalyticStepRef {
  std::uint32_t program;
  std::uint32_t index;
};

// Keeps what on_arrival needs (the receive's kind and rank) so that the arrival does not have to
// load the receiving program's slot, a cache miss at 16k ranks. One cache line.
struct alignas(64) AnalyticTransfer {
  AnalyticStepRef send;
  AnalyticStepRef recv;
  std::uint64_t bytes; // on the wire (ProtocolCost::wire_bytes)
  const topo::Path* path;
  std::uint64_t recv_bytes;
  std::int32_t recv_rank; // for a switch step: its group's slot (AnalyticSwitchGroups)
  bool recv_reduce;
  std::uint8_t protocol; // the call's (Step::protocol)
  bool group;   // a switch step's group: its members complete together (rule 4 of step.hpp)
  bool through; // its bytes have all arrived and its connection moved on (ConnectionFifo)
  // A lone transfer (FlowNetwork::reserve) started moving its bytes at byte_start; its
  // lone_done event is valid while `generation` is the one it carries. The generation changes
  // when the transfer is handed to the flow network (adopt) and when it is reserved again after
  // its id is reused, so that a stale event is recognised. Every transfer's bytes start at
  // byte_start (a reduction in flight starts there).
  std::uint32_t generation;
  bool flushes; // its receiver's proxy flushes it before the receive completes (ProxyPosts)
  Picoseconds byte_start;
};
static_assert(sizeof(AnalyticTransfer) == 64);

enum class AnalyticEventKind : std::uint8_t {
  local_done,
  latency_done,
  reduce_done,
  lone_done,
  lone_through, // a lone recv_reduce's bytes have arrived; it still reduces (ConnectionFifo)
  compute_done, // with compute_slowdown: a compute step not slowed (a = program, b = index)
  slowed_done   // with compute_slowdown: a slowed compute step (a = slot, b = generation)
};
struct AnalyticEvent {
  AnalyticEventKind kind;
  std::uint32_t a; // program (local_done) or transfer id
  std::uint32_t b; // step index (local_done) or generation (lone_done)
};

} // namespace ddlsim::sim::detail
