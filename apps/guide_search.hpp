// The simulated side of `ddlsim guide`: each question's answer found by searching with the
// simulator (plan/boundary_search.hpp), starting from the closed-form rule's estimate, on the
// scenario changed to each candidate point. Every answer carries the simulated values that prove
// it: the target holds at the answer and fails one step beyond it.
#pragma once

#include "ddlsim/planning/scaling_rules.hpp"
#include "ddlsim/scenario/scenario.hpp"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ddlsim::cli {

using Settings = std::vector<std::pair<std::string, Json>>;

// The scenario's training job simulated at changed settings (JSON pointers), one simulation per
// distinct point. Searches run on the analytic engine: the scenario's own engine when it is the
// analytic one, else the analytic engine in its place (flow and packet runs are too slow to
// search with; `engine_note` says so).
class SimulatedJob {
public:
  SimulatedJob(const Scenario& scenario, std::string file, int max_gpus);

  struct Point {
    double efficiency = 0;
    double exposed_ms = 0;
  };
  // Throws std::runtime_error when the point has more GPUs than the search may simulate.
  Point at(const Settings& settings, int gpus);
  // The all-reduce time in ms of `bytes` on `gpus` GPUs with one algorithm.
  double allreduce_ms(int gpus, const std::string& algorithm, double bytes);

  int max_gpus() const { return max_gpus_; }
  int simulations() const { return simulations_; }
  const std::string& engine_note() const { return engine_note_; }

  // The cluster's node groups in rank order. A job of p GPUs takes the first p GPUs (whole
  // nodes, in rank order); past the cluster's end it gets more nodes of the last group.
  struct Group {
    int count = 1;
    int gpus = 1;                 // per node
    int nics = 1;                 // per node
    double nic_gbps_per_node = 0; // today's, all NICs together
  };
  const std::vector<Group>& groups() const { return groups_; }
  bool mixed() const { return groups_.size() > 1; }
  // GPUs on the first `nodes` nodes.
  int gpus_of_nodes(int nodes) const;
  // The most nodes whose GPUs are at most `gpus` (at least 1).
  int nodes_within(int gpus) const;
  // The cluster cut (or grown) to the nodes that hold `gpus` GPUs, with the job on them.
  Settings at_gpus(int gpus) const;
  // The same cluster with the job on `job_gpus` of those GPUs (the rest: parameter servers).
  Settings at_gpus(int gpus, int job_gpus) const;

private:
  Scenario variant(const Settings& settings) const;

  const Scenario& scenario_;
  std::string file_;
  int max_gpus_;
  std::vector<Group> groups_;
  std::string engine_note_;
  std::map<std::string, Point> points_;
  std::map<std::string, double> allreduces_;
  int simulations_ = 0;
};

// A simulated answer: the value, the words, and the proof (the values at and beyond it).
struct SimulatedAnswer {
  bool possible = false;
  double value = 0;
  std::string answer; // "128 GPUs (16 nodes)"
  std::string proof;  // "E(128) = 0.8012 >= 0.8, E(136) = 0.7954 < 0.8"
  bool bound = false; // the search hit its range: `value` is a bound, not the boundary
  int simulations = 0;
};

SimulatedAnswer search_max_gpus(SimulatedJob& job, double target, const plan::Answer& rule);
SimulatedAnswer search_nic(SimulatedJob& job, double target, int gpus, double nic_now_bps,
                           int nics_per_node, const plan::Answer& rule);
SimulatedAnswer search_servers(SimulatedJob& job, double target, int gpus,
                               const plan::Answer& rule);
SimulatedAnswer search_batch(SimulatedJob& job, double target, int gpus, int max_batch,
                             const plan::Answer& rule);
SimulatedAnswer search_crossover(SimulatedJob& job, int gpus, const plan::Answer& rule);

} // namespace ddlsim::cli
