// One point of a plan (a scenario without a sweep) simulated on its engine, and what the
// planner ranks it on (planning/point_result.hpp).
#pragma once

#include "ddlsim/planning/point_result.hpp"
#include "ddlsim/scenario/scenario.hpp"
#include "ddlsim/sim/engine.hpp"

namespace ddlsim::runner {

// A job_trace workload: the mean job completion time as the iteration time and the makespan as
// the time to train. A training workload: job 0's iteration (a plan's sweep varies one job's
// cluster and settings). A collective workload: the collective at its largest size. Throws
// InputError for a scenario the engine cannot run.
plan::PointMetrics evaluate_point(const Scenario& scenario);

// Every node and GPU of `cluster`, with their node kinds: what a point that holds the whole
// cluster (a job trace, an LLM layout) uses and is priced on.
plan::PointMetrics whole_cluster(const topo::ClusterSpec& cluster);

// One iteration of the scenario's training jobs on its engine (no step records, no progress).
sim::EngineResult simulate_training(const Scenario& scenario);

} // namespace ddlsim::runner
