// A shared cluster over time: the jobs of a "job_trace" workload arrive, wait in the queue, are
// placed, run and end; an event-driven timeline (arrivals, starts, ends) carries each running
// job's remaining iterations at its current iteration time.
//
// Contention: while a set of jobs runs together, each job's iteration time is the one the
// scenario's engine simulates with those jobs sharing the fabric (one training iteration of all
// of them, as a "training" workload with several "jobs" runs). Jobs interact only through links
// they share, so the running jobs are split into groups that can share a link (the same node,
// or crossing a common leaf; every leaf-crossing job meets every other where switches above
// the leaves are shared by all, as on a 3-tier fat tree), and each group is simulated alone.
// On the analytic engine a group is simulated as its sets of jobs that share links (a job on one
// GPU, or one whose links no other job of the group uses, alone), each for the group's
// iterations: jobs with no link in common do not meet in its fluid model, so this is exact
// (job_links.hpp). Results are cached per set (its jobs' workloads and GPUs, moved onto canonical
// nodes where an exact relabelling of the fabric exists: symmetry.hpp, and the iterations), so a
// long trace costs one simulation per distinct set, not per iteration or event. When the mix
// changes, the jobs whose iteration time changed are re-anchored: their remaining work is carried
// at the new rate.
#pragma once

#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/topologies/router.hpp"
#include "ddlsim/topologies/topology.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace ddlsim::jobs {

struct JobOutcome {
  std::string id;
  std::string workload;
  int gpus = 0;
  std::vector<int> placement; // global ranks
  int nodes = 0;              // nodes it ran on
  int leaves = 1;             // leaves it ran under
  double arrival_s = 0, start_s = 0, end_s = 0;
  bool ended = false;           // false: the run stopped (SharedClusterOptions::progress) first
  double iterations = 0;        // done (the work, or what fitted in the time limit)
  double alone_iteration_s = 0; // at its placement, on an empty cluster
  double mean_iteration_s = 0;  // as it ran
  double queueing_s() const { return start_s - arrival_s; }
  double run_s() const { return end_s - start_s; }
  double completion_s() const { return end_s - arrival_s; }
  // Run time over the run time alone at the same placement (1 = no interference).
  double slowdown() const { return mean_iteration_s / alone_iteration_s; }
};

// A job's iteration time over an interval (for the timeline and the trace).
struct RateSegment {
  std::size_t job = 0; // index into SharedClusterResult::jobs
  double from_s = 0, to_s = 0, iteration_s = 0;
};

struct SharedClusterResult {
  // False when SharedClusterOptions::progress stopped the run: the figures below are then of
  // the jobs that ended (JobOutcome::ended) and the times up to the stop.
  bool complete = true;
  std::vector<JobOutcome> jobs; // in the trace's arrival order
  std::vector<RateSegment> segments;
  std::vector<std::pair<double, int>> busy_gpus; // (time, GPUs busy from then on)
  int cluster_gpus = 0;
  double makespan_s = 0;  // first arrival to last end
  double utilisation = 0; // busy GPU-seconds over cluster GPU-seconds in the makespan
  double mean_queueing_s = 0;
  double mean_completion_s = 0;
  double mean_slowdown = 0;
  std::size_t simulations = 0; // engine runs (distinct sets of co-running jobs sharing links)
  std::size_t events = 0;      // arrivals and ends
};

struct SharedClusterOptions {
  // Called after every event with the jobs ended so far and the simulated time; false stops.
  std::function<bool(std::size_t ended, std::size_t total, double now_s, std::size_t sims)>
      progress;
  // Simulate a group's link-disjoint sets apart (analytic engine only; job_links.hpp). The
  // figures are the same either way; false simulates every group whole (for tests).
  bool split_by_links = true;
};

// Runs the scenario's job_trace workload. Throws InputError when a job can never be placed (a
// placement shape the empty cluster cannot give) or what the engine cannot run.
SharedClusterResult simulate_shared_cluster(const Scenario& scenario,
                                            const topo::Topology& topology, topo::Router& router,
                                            const SharedClusterOptions& options = {});

} // namespace ddlsim::jobs
