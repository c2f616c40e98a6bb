// The scaling rules behind `ddlsim guide`: closed forms of the alpha-beta model of the gradient
// all-reduce against the compute time of one iteration, each answer with its formula, the
// numbers filled in, and the result. The command cross-checks every answer with a simulation.
//
// Model (per iteration, every GPU the same):
//   compute  T_c = T_f + T_b + T_o            forward, backward, optimizer at batch b per GPU
//   all-reduce of M gradient bytes in k collectives (DDP buckets, fusion groups) on
//   p = N nodes x g GPUs, bottleneck bandwidth B; every collective pays the latency terms:
//     ring (flat, node-major):  T_ar = 2(p-1)·(k·a + M/(p·B)),  B = min(B_nic, B_intra),
//                               a = the fabric latency when N > 1 (every step waits for the
//                               slowest hop, one of which crosses the fabric)
//     hierarchical (Jia et al.): T_ar = k·(2(g-1)·a_i + 2(N-1)·a)          (reduce + broadcast
//                                        + 2M/B_intra + 2(N-1)·M/(N·B_nic)  in the node, ring
//                                                                            across leaders)
//   iteration with overlap (DDP buckets during backward): T = T_f + max(T_b, T_ar) + T_o, an
//   upper bound on efficiency (the last bucket can never overlap); without overlap:
//   T = T_c + T_ar. Scaling efficiency E(p) = T_c / T(p).
// What it leaves out: congestion beyond the bottleneck link, per-bucket latency, stragglers;
// that is what the simulation cross-check is for.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace ddlsim::plan {

struct ClusterFigures {
  int gpus_per_node = 8;
  double nic_bytes_per_second = 0;   // per node and direction
  double intra_bytes_per_second = 0; // per GPU and direction inside a node
  double fabric_latency_seconds = 0; // a: one message across the fabric
  double intra_latency_seconds = 0;  // a_i: one message inside a node
};

struct ComputeFigures {
  int batch = 0; // per GPU
  double forward_seconds = 0;
  double backward_seconds = 0;
  double optimizer_seconds = 0;
  double gradient_bytes = 0; // all-reduced per iteration
  int collectives = 1;       // k: all-reduces per iteration (buckets), each paying latency

  double compute_seconds() const { return forward_seconds + backward_seconds + optimizer_seconds; }
};

enum class GuideAlgorithm { ring, hierarchical };

// An answer: what was asked, the result in words, and how it was derived (formula lines with the
// numbers filled in). `value` is the number the command cross-checks; `possible` is false when
// no value meets the goal (then `answer` says why).
struct Answer {
  std::string question;
  std::string answer;
  std::vector<std::string> derivation;
  double value = 0;
  bool possible = true;
};

double allreduce_seconds(const ClusterFigures& cluster, GuideAlgorithm algorithm, int gpus,
                         double bytes, int collectives = 1);
double efficiency(const ComputeFigures& compute, const ClusterFigures& cluster,
                  GuideAlgorithm algorithm, bool overlap, int gpus);

// The largest GPU count (whole nodes, up to max_gpus) with E(p) >= target.
Answer max_gpus(const ComputeFigures& compute, const ClusterFigures& cluster,
                GuideAlgorithm algorithm, bool overlap, double target, int max_gpus);
// The NIC bandwidth per node that gives E(gpus) >= target (other figures unchanged).
Answer nic_bandwidth_needed(const ComputeFigures& compute, const ClusterFigures& cluster,
                            GuideAlgorithm algorithm, bool overlap, int gpus, double target);
// Parameter servers (dedicated, each with server_bytes_per_second of NIC) so that servers are not
// the bottleneck: S >= p·B_w/B_s, and so that push + pull fit the time the efficiency target
// allows: S >= 2·p·M / (B_s·A) (in the style of Zou et al. 2017's lemmas).
Answer parameter_servers_needed(const ComputeFigures& compute, const ClusterFigures& cluster,
                                bool overlap, int gpus, double server_bytes_per_second,
                                double target);
// The smallest per-GPU batch with E(p) >= target on `gpus` GPUs: compute grows with the batch,
// the all-reduce does not, so E(b) rises towards 1 (with overlap, once T_b(b) >= T_ar).
Answer smallest_batch_for_efficiency(const std::function<ComputeFigures(int)>& compute_at,
                                     const ClusterFigures& cluster, GuideAlgorithm algorithm,
                                     bool overlap, int gpus, double target, int max_batch);
// The message size above which the bandwidth-optimal ring beats latency-optimal recursive
// doubling on p GPUs: lg(p)·(a + n·β) = 2(p-1)·(a + n·β/p), β = 1/B.
Answer latency_bandwidth_crossover(const ClusterFigures& cluster, int gpus);

std::string to_string(GuideAlgorithm algorithm);

} // namespace ddlsim::plan
