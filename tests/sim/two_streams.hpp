// The hand-made schedule every engine's compute-and-wait test runs: rank 0 computes 1 us on
// channel 0 and sends `bytes` to rank 1 on channel 1; rank 1 computes 2 us on channel 0 once the
// receive is done. With `send_waits`, the send also waits for rank 0's compute (a cross-program
// wait); without it, the transfer overlaps that compute.
#pragma once

#include "ddlsim/collectives/schedule.hpp"

#include <cstdint>
#include <utility>

namespace ddlsim::sim::test {

inline coll::Step compute_step(double picoseconds) {
  coll::Step step;
  step.kind = coll::StepKind::compute;
  step.param = picoseconds;
  return step;
}

// A send or receive of `bytes` on channel 1, at offset 0 of the input or output buffer.
inline coll::Step channel1_transfer(coll::StepKind kind, int peer, std::uint64_t bytes) {
  coll::Step step;
  step.kind = kind;
  step.peer = peer;
  step.channel = 1;
  step.bytes = bytes;
  const bool send = kind == coll::StepKind::send;
  (send ? step.src : step.dst) =
      coll::BufferRange{send ? coll::Buffer::input : coll::Buffer::output, 0, bytes};
  return step;
}

inline coll::Step waiting_for(coll::Step step, std::uint16_t channel, std::uint32_t index) {
  step.wait_channel = channel;
  step.wait_step = index;
  return step;
}

inline coll::Schedule two_streams_schedule(bool send_waits, std::uint64_t bytes) {
  coll::MaterializedSchedule m;
  m.call.op = coll::Op::send_recv;
  m.call.ranks = 2;
  m.call.root = 1;
  m.call.bytes = bytes;
  m.call.algorithm = "hand_made";
  m.algorithm = "hand_made";
  m.ranks = 2;
  m.channels = 2;
  m.scratch_bytes = {0, 0};
  coll::Step send = channel1_transfer(coll::StepKind::send, 1, bytes);
  if (send_waits) send = waiting_for(send, 0, 0);
  m.programs = {{{compute_step(1e6)}, {send}},
                {{waiting_for(compute_step(2e6), 1, 0)},
                 {channel1_transfer(coll::StepKind::recv, 0, bytes)}}};
  return coll::Schedule::from_materialized(std::move(m));
}

} // namespace ddlsim::sim::test
