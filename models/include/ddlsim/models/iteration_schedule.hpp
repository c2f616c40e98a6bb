// A planned training iteration as one coll::Schedule (a composite: see coll::ProgramSource), so
// that every engine runs it like any collective.
//
// Per rank, channel 0 is the compute stream: forward steps in layer order, backward steps in
// reverse order (all accumulation steps), then one zero-duration step per communication channel
// that waits for the end of that channel's last collective of the iteration, then the optimizer;
// TrainingPlan::iterations times (the next forward pass starts after the optimizer, which waits
// for every collective: PyTorch DDP and Horovod synchronize all gradients before the step).
// Channels 1..C are the communication stream: the collectives of the plan, in order, each the
// registry generator's program for the job-local rank re-emitted with
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
// ByteScheduler (JobPlan::gate_collective) replaces the optimizer's wait: before a layer's
// forward step, one marker per channel waits for the layer's last partition of the previous
// iteration (the last marker runs the layer's update), and the optimizer step is empty.
#pragma once

#include "ddlsim/collectives/schedule.hpp"
#include "ddlsim/models/training.hpp"

#include <memory>

namespace ddlsim::models {

// The schedule of plan->iterations iterations of every job of `plan`. Its call is an all-reduce
// of the first job's whole gradient buffer (dtype and reduction of its buckets), which is what
// the buckets together compute in one iteration when one job uses GPUs 0..n-1: the reference
// executor can check it (each further iteration all-reduces the same buffers again).
coll::Schedule iteration_schedule(std::shared_ptr<const TrainingPlan> plan);

// The schedule's channels: compute, then the most channels any collective uses.
int iteration_channels(const TrainingPlan& plan);
// Steps of one iteration of a compute program of `profile` (the profile's steps, a wait marker
// per communication channel, the optimizer): the metrics find iteration ends by it.
std::uint32_t compute_steps_per_iteration(const TrainingPlan& plan, const JobPlan& job,
                                          const ComputeProfile& profile);

inline constexpr int kComputeChannel = 0;

} // namespace ddlsim::models
