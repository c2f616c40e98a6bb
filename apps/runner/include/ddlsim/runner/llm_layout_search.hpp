// `ddlsim plan` on an llm_training scenario: the layout search. It enumerates the valid layouts of
// the scenario's model, cluster and global batch (TP, PP, virtual stages, DP, EP, micro-batch,
// recomputation, ZeRO stage), drops those that do not fit in the GPUs' memory, simulates the rest
// on the scenario's engine and ranks them by iteration time (cost follows time: every layout uses
// every GPU). docs/large-model-training.md describes the search and its pruning.
#pragma once

#include "ddlsim/models/llm.hpp"
#include "ddlsim/scenario/scenario.hpp"

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace ddlsim::runner {

struct LayoutSearchOptions {
  std::vector<int> micro_batches{1, 2, 4}; // --micro-batches
  std::vector<int> vpps{1, 2, 4};          // virtual stages tried where Megatron allows them
  unsigned threads = 0;                    // 0: one per core
  // Rows of the ranking that must be exact (`--top`): a layout whose lower bound on its
  // iteration time (LayoutCandidate::compute_bound) is slower than the keep-th fastest simulated so
  // far cannot reach those rows and is not simulated. 0 simulates every layout (the brute-force
  // search).
  std::size_t keep = 0;
  // Called after each simulated layout (done, total), from the worker threads one at a time.
  std::function<void(std::size_t, std::size_t)> progress;
};

struct LayoutCandidate {
  models::LlmParallel parallel;
  int micro_batch = 1;
  models::Recompute recompute = models::Recompute::none;
  double memory_bytes = 0; // peak per GPU (llm_memory)
  double capacity_bytes = 0;
  models::LlmIteration iteration; // when simulated
  // A lower bound on the iteration time: the layout's pipeline with free transfers (compute plus
  // bubble; a stage's compute steps run one after another, so no engine can finish sooner), on
  // the analytic engine with the least time of each collective the compute stream waits for
  // (llm_layout_bound.hpp). Computed when LayoutSearchOptions::keep > 0.
  Picoseconds compute_bound = 0;
  std::string error;            // a layout the simulation refused (its reason)
  std::string describe() const; // "tp 8, pp 4 x vpp 2, dp 16, ZeRO-1, mb 1, recompute none"
};

struct LayoutSearch {
  std::vector<LayoutCandidate> ranked; // simulated, fastest first
  std::vector<LayoutCandidate> unfit;  // over memory at their most frugal settings, least first
  std::vector<LayoutCandidate> failed; // the simulation refused them
  std::vector<LayoutCandidate> pruned; // not simulated: compute_bound above the keep-th time
  std::size_t enumerated = 0;          // (tp, pp, vpp, ep, micro-batch) combinations tried
  std::size_t invalid = 0;             // of those, layouts the model or batch cannot take
  std::size_t keep = 0;                // LayoutSearchOptions::keep: rows ranked exactly
  int nvlink_domain = 0;               // GPUs per NVLink domain: the largest TP tried
  double seconds = 0;                  // wall time of the search
  std::string reason;                  // why the winner wins, one line
};

// The layouts to simulate. For each (tp, pp, vpp, ep, micro-batch) that validate_llm accepts:
// the least recomputation (none, selective, full) with which some ZeRO stage fits, and with it
// ZeRO 0 and 1 where they fit, else the least of 2 and 3 that fits (more recomputation only adds
// compute, ZeRO 2 and 3 only add communication over ZeRO 1 in this model). `unfit` gets the
// combinations where nothing fits, at full recomputation and ZeRO-3. Throws InputError for bad
// options (naming the flag).
std::vector<LayoutCandidate> enumerate_layouts(const Scenario& scenario,
                                               const LayoutSearchOptions& options,
                                               LayoutSearch& search);

// The scenario JSON with the candidate's layout written in (its parallel layout, micro-batch and
// recomputation; no sweep): what the search loads and simulates for it.
Json candidate_json(const Scenario& scenario, const LayoutCandidate& c);

// Enumerates and simulates. `scenario` is loaded with load_scenario_for_layout_search.
LayoutSearch search_layouts(const Scenario& scenario, const LayoutSearchOptions& options);

// The ranked table (the first `top` rows), the winner's reason, and with `show_unfit` the layouts
// over memory ("over by X GiB").
void print_layout_search(const LayoutSearch& search, const Scenario& scenario, std::size_t top,
                         bool show_unfit, std::ostream& out);

} // namespace ddlsim::runner
