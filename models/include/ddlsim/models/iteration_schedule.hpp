// A planned training iteration as one coll::Schedule (a composite: see coll::ProgramSource), so
// that every engine runs it like any collective.
//
// Per rank, channel 0 is the compute stream: forward steps in layer order, backward steps in
// reverse order (all accumulation steps), then one zero-duration step per communication channel
// that waits for the end of that channel's last collective, then the optimizer. Channels
// 1..C are the communication stream: the collectives of the plan, in order, each the registry
// generator's program for the job-local rank re-emitted with
//   - peers mapped to global ranks (the job's GPUs: sub-communicators, several jobs at once),
//   - input, output and scratch ranges moved to the collective's place in the rank's buffers
//     (input/output: the gradient buffer, buckets one after another),
//   - step indices and deps moved by the steps emitted before it on that channel,
//   - on its first step, a wait for the compute step after which it may start (the backward
//     step that made its last gradient ready, or a Horovod tick), and a dep on the previous
//     collective's join step (collectives serialize on the stream, like NCCL kernels on one
//     CUDA stream),
// followed by a zero-duration join step that depends on the collective's last send, last
// receive and last local step on that channel: the collective counts as finished there when
// they have. Streams are lazy (coroutines over the generators' coroutines): the schedule is
// never held whole. The compute stream counts the steps of its rank's communication programs
// (pulling them once, holding nothing) to name the join steps it waits for.
#pragma once

#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/models/training.hpp"

#include <memory>

namespace ddlsim::models {

// The schedule of one iteration of every job of `plan`. Its call is an all-reduce of the first
// job's whole gradient buffer (dtype and reduction of its buckets), which is what the buckets
// together compute when one job uses GPUs 0..n-1: the reference executor can check it.
coll::Schedule iteration_schedule(std::shared_ptr<const TrainingPlan> plan);

inline constexpr int kComputeChannel = 0;

} // namespace ddlsim::models
