// What an executed training iteration means to a user: per GPU, compute, communication, exposed
// (non-overlapped) communication and idle time; per job, the iteration time, samples/s, scaling
// efficiency against the same GPUs each training alone, and the time to train E epochs.
//
// With several iterations simulated, the figures are those of the last one, in the window from
// the previous iteration's end (the job's latest optimizer step end) to its own; with one, the
// window starts at 0.
// Definitions (per GPU r of a job whose iteration took T, the latest step end over its GPUs):
//   compute       sum of r's compute steps (channel 0, positive duration)
//   communication the time at least one communication step of r is in flight (union of the
//                 intervals of its steps on channels >= 1, from start to end, which includes
//                 waiting for the peer), so overlapped channels are not double counted
//   exposed       the part of that time during which r computes nothing
//   idle          T - compute - exposed (waiting for slower GPUs, for a collective to be allowed
//                 to start, or for nothing); never negative
// Single-GPU throughput of a GPU = its samples per iteration / its compute time per iteration
// (no communication at all); scaling efficiency = throughput / sum of those.
#pragma once

#include "ddlsim/core/units.hpp"
#include "ddlsim/models/training.hpp"

#include <vector>

namespace ddlsim::models {

// Collects the executed steps of an iteration, as an engine reports them (in order of
// completion time), keeping per rank only the union of its compute intervals (channel 0) and of
// its communication intervals (other channels; zero-duration markers excluded): memory per rank
// stays small however many steps the collectives have.
class IterationRecorder {
public:
  explicit IterationRecorder(int ranks);
  // Steps may come in any order (fastest in about increasing `end` order).
  void add(int rank, int channel, Picoseconds start, Picoseconds end);
  // Forgets every step (an engine that starts the evaluation over hands them again).
  void clear();

  struct Intervals {
    std::vector<std::pair<Picoseconds, Picoseconds>> compute, communication;
    Picoseconds end = 0; // the rank's last step end
    // The end of every compute-stream step (markers included): the stream is one chain, so
    // sorted they are in program order and name the iterations' ends.
    std::vector<Picoseconds> compute_ends;
  };
  const std::vector<Intervals>& ranks() const { return ranks_; }

private:
  std::vector<Intervals> ranks_;
};

struct GpuIteration {
  int rank = 0; // global
  Picoseconds compute = 0;
  Picoseconds communication = 0;
  Picoseconds exposed = 0;
  Picoseconds idle = 0;
};

struct JobIteration {
  std::string name;
  // One iteration in steady state: the last of the iterations simulated (the figures below are
  // of it, in the window between the previous iteration's end and its own).
  Picoseconds time = 0;
  // Every simulated iteration's time: the first from an idle start, each next one from the end
  // of the one before (the latest optimizer step end over the job's GPUs).
  std::vector<Picoseconds> iteration_times;
  int samples = 0; // per iteration, all GPUs
  double samples_per_second = 0;
  double single_gpu_samples_per_second = 0; // sum over GPUs of each alone
  double scaling_efficiency = 0;
  int collectives = 0;
  std::uint64_t gradient_bytes = 0; // per GPU per iteration, as all-reduced
  // NCCL's choices for the buckets (algorithm "nccl"), "3 x ring/LL128, 8 channels; ...", in
  // order of first use; empty otherwise.
  std::string nccl_choices;
  std::vector<GpuIteration> gpus;
  // The largest per-GPU values (the GPU that limits the step).
  Picoseconds max_compute = 0, max_communication = 0, max_exposed = 0, max_idle = 0;

  // ceil(epochs x dataset / samples) iterations of `time`, in seconds.
  double seconds_to_train(double epochs, std::uint64_t dataset_samples) const;
};

std::vector<JobIteration> summarize_iteration(const TrainingPlan& plan,
                                              const IterationRecorder& steps);

} // namespace ddlsim::models
