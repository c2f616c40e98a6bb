#include "ddlsim/planning/scaling_rules.hpp"

#include "ddlsim/core/units.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace ddlsim::plan {
namespace {

std::string ms(double seconds) {
  return format_significant(seconds * 1e3) + " ms";
}
std::string us(double seconds) {
  return format_significant(seconds * 1e6) + " us";
}
std::string gbps(double bytes_per_second) {
  return format_significant(bytes_per_second * 8 / 1e9) + " Gb/s";
}
std::string mb(double bytes) {
  return format_significant(bytes / 1e6) + " MB";
}

int nodes_of(const ClusterFigures& cluster, int gpus) {
  return (gpus + cluster.gpus_per_node - 1) / cluster.gpus_per_node;
}

// The bandwidth every step of a flat ring waits for: the NIC once the ring leaves the node.
double ring_bottleneck(const ClusterFigures& cluster, int gpus) {
  return nodes_of(cluster, gpus) > 1
             ? std::min(cluster.nic_bytes_per_second, cluster.intra_bytes_per_second)
             : cluster.intra_bytes_per_second;
}
double ring_latency(const ClusterFigures& cluster, int gpus) {
  return nodes_of(cluster, gpus) > 1 ? cluster.fabric_latency_seconds
                                     : cluster.intra_latency_seconds;
}

std::string allreduce_formula(const ClusterFigures& cluster, GuideAlgorithm algorithm, int gpus,
                              double bytes, int k) {
  const int g = std::min(gpus, cluster.gpus_per_node), n = nodes_of(cluster, gpus);
  const std::string result = ms(allreduce_seconds(cluster, algorithm, gpus, bytes, k));
  if (algorithm == GuideAlgorithm::ring || n == 1) {
    const double b = ring_bottleneck(cluster, gpus), a = ring_latency(cluster, gpus);
    return "T_ar = 2(p-1)·(k·a + M/(p·B)) = 2·" + std::to_string(gpus - 1) + "·(" +
           std::to_string(k) + "·" + us(a) + " + " + mb(bytes) + "/(" + std::to_string(gpus) + "·" +
           gbps(b) + ")) = " + result;
  }
  return "T_ar = k·(2(g-1)·a_i + 2(N-1)·a) + 2M/B_intra + 2(N-1)·M/(N·B_nic) = " +
         std::to_string(k) + "·(2·" + std::to_string(g - 1) + "·" +
         us(cluster.intra_latency_seconds) + " + 2·" + std::to_string(n - 1) + "·" +
         us(cluster.fabric_latency_seconds) + ") + 2·" + mb(bytes) + "/" +
         gbps(cluster.intra_bytes_per_second) + " + 2·" + std::to_string(n - 1) + "·" + mb(bytes) +
         "/(" + std::to_string(n) + "·" + gbps(cluster.nic_bytes_per_second) + ") = " + result;
}

double iteration_seconds(const ComputeFigures& c, double allreduce, bool overlap) {
  return overlap ? c.forward_seconds + std::max(c.backward_seconds, allreduce) + c.optimizer_seconds
                 : c.compute_seconds() + allreduce;
}

std::string iteration_formula(bool overlap) {
  return overlap ? "E(p) = T_c / (T_f + max(T_b, T_ar(p)) + T_o)" : "E(p) = T_c / (T_c + T_ar(p))";
}

std::string compute_line(const ComputeFigures& c) {
  return "k = " + std::to_string(c.collectives) + " all-reduces, T_f = " + ms(c.forward_seconds) +
         ", T_b = " + ms(c.backward_seconds) + ", T_o = " + ms(c.optimizer_seconds) + " (batch " +
         std::to_string(c.batch) + "/GPU), T_c = " + ms(c.compute_seconds()) +
         ", M = " + mb(c.gradient_bytes);
}

// The all-reduce time the efficiency target leaves: T_ar <= A (with overlap, A also bounds
// T_b, which the network cannot change).
double allowed_allreduce(const ComputeFigures& c, bool overlap, double target) {
  const double budget = c.compute_seconds() / target;
  return overlap ? budget - c.forward_seconds - c.optimizer_seconds : budget - c.compute_seconds();
}

} // namespace

std::string to_string(GuideAlgorithm algorithm) {
  return algorithm == GuideAlgorithm::ring ? "ring" : "hierarchical";
}

double allreduce_seconds(const ClusterFigures& cluster, GuideAlgorithm algorithm, int gpus,
                         double bytes, int collectives) {
  if (gpus <= 1) return 0;
  const int n = nodes_of(cluster, gpus), k = std::max(1, collectives);
  if (algorithm == GuideAlgorithm::ring || n == 1) {
    const double b = ring_bottleneck(cluster, gpus), a = ring_latency(cluster, gpus);
    return 2.0 * (gpus - 1) * (k * a + bytes / (gpus * b));
  }
  const int g = std::min(gpus, cluster.gpus_per_node);
  return k * (2.0 * (g - 1) * cluster.intra_latency_seconds +
              2.0 * (n - 1) * cluster.fabric_latency_seconds) +
         2 * bytes / cluster.intra_bytes_per_second +
         2.0 * (n - 1) * bytes / (n * cluster.nic_bytes_per_second);
}

double efficiency(const ComputeFigures& compute, const ClusterFigures& cluster,
                  GuideAlgorithm algorithm, bool overlap, int gpus) {
  const double allreduce =
      allreduce_seconds(cluster, algorithm, gpus, compute.gradient_bytes, compute.collectives);
  return compute.compute_seconds() / iteration_seconds(compute, allreduce, overlap);
}

Answer max_gpus(const ComputeFigures& compute, const ClusterFigures& cluster,
                GuideAlgorithm algorithm, bool overlap, double target, int max_gpus) {
  Answer a;
  a.question = "the largest GPU count with scaling efficiency >= " + format_significant(target);
  a.derivation.push_back(compute_line(compute));
  a.derivation.push_back(iteration_formula(overlap) + ", T_ar(p) by " + to_string(algorithm));
  int best = 0;
  const int g = cluster.gpus_per_node;
  for (int p = g; p <= max_gpus; p += g) {
    if (efficiency(compute, cluster, algorithm, overlap, p) >= target)
      best = p;
    else
      break; // E(p) falls as p grows: T_ar grows with p
  }
  if (best == 0) {
    a.possible = false;
    const double e = efficiency(compute, cluster, algorithm, overlap, g);
    a.answer = "none: one node of " + std::to_string(g) +
               " GPUs already has E = " + format_significant(e) + " < " +
               format_significant(target);
    a.derivation.push_back(
        "at p = " + std::to_string(g) + ": " +
        allreduce_formula(cluster, algorithm, g, compute.gradient_bytes, compute.collectives) +
        ", E = " + format_significant(e));
    return a;
  }
  a.value = best;
  const double e = efficiency(compute, cluster, algorithm, overlap, best);
  a.answer = std::to_string(best) + " GPUs (" + std::to_string(best / g) +
             " nodes), E = " + format_significant(e);
  a.derivation.push_back(
      "at p = " + std::to_string(best) + ": " +
      allreduce_formula(cluster, algorithm, best, compute.gradient_bytes, compute.collectives) +
      ", E = " + format_significant(e));
  if (best + g <= max_gpus) {
    const double next = efficiency(compute, cluster, algorithm, overlap, best + g);
    a.derivation.push_back("at p = " + std::to_string(best + g) + ": " +
                           allreduce_formula(cluster, algorithm, best + g, compute.gradient_bytes,
                                             compute.collectives) +
                           ", E = " + format_significant(next) + " < " +
                           format_significant(target));
  } else {
    a.answer += " (the search stops at " + std::to_string(max_gpus) + " GPUs)";
  }
  return a;
}

Answer nic_bandwidth_needed(const ComputeFigures& compute, const ClusterFigures& cluster,
                            GuideAlgorithm algorithm, bool overlap, int gpus, double target) {
  Answer a;
  a.question = "the NIC bandwidth per node for efficiency >= " + format_significant(target) +
               " on " + std::to_string(gpus) + " GPUs";
  a.derivation.push_back(compute_line(compute));
  const double allowed = allowed_allreduce(compute, overlap, target);
  a.derivation.push_back(iteration_formula(overlap) + " >= " + format_significant(target) +
                         "  <=>  T_ar <= A = " + ms(allowed));
  const int n = nodes_of(cluster, gpus);
  if (n <= 1) {
    a.possible = false;
    a.answer = "no NIC is crossed: " + std::to_string(gpus) + " GPUs fit in one node";
    return a;
  }
  const double m = compute.gradient_bytes;
  double needed = 0;
  if (algorithm == GuideAlgorithm::ring) {
    // 2(p-1)·(k·a + M/(p·B)) <= A  <=>  B >= 2(p-1)·M / (p·(A - 2(p-1)·k·a))
    const double latency = 2.0 * (gpus - 1) * compute.collectives * cluster.fabric_latency_seconds;
    a.derivation.push_back("ring: B >= 2(p-1)·M / (p·(A - 2(p-1)·k·a)) = 2·" +
                           std::to_string(gpus - 1) + "·" + mb(m) + " / (" + std::to_string(gpus) +
                           "·(" + ms(allowed) + " - " + ms(latency) + "))");
    if (allowed <= latency) {
      a.possible = false;
      a.answer = "none: the ring's latency alone, 2(p-1)·k·a = " + ms(latency) +
                 ", exceeds the allowed " + ms(allowed) + "; use a hierarchical all-reduce";
      return a;
    }
    needed = 2.0 * (gpus - 1) * m / (gpus * (allowed - latency));
    if (needed > cluster.intra_bytes_per_second) {
      a.possible = false;
      a.answer = "none: the ring would need " + gbps(needed) +
                 " per hop, more than the links inside the node (" +
                 gbps(cluster.intra_bytes_per_second) + ")";
      return a;
    }
  } else {
    // 2(g-1)·a_i + 2M/B_i + 2(N-1)·(a + M/(N·B)) <= A
    const int g = cluster.gpus_per_node;
    const double fixed = compute.collectives * (2.0 * (g - 1) * cluster.intra_latency_seconds +
                                                2.0 * (n - 1) * cluster.fabric_latency_seconds) +
                         2 * m / cluster.intra_bytes_per_second;
    a.derivation.push_back("hierarchical: B >= 2(N-1)·M / (N·(A - k·(2(g-1)·a_i + 2(N-1)·a) - "
                           "2M/B_intra)) = 2·" +
                           std::to_string(n - 1) + "·" + mb(m) + " / (" + std::to_string(n) + "·(" +
                           ms(allowed) + " - " + ms(fixed) + "))");
    if (allowed <= fixed) {
      a.possible = false;
      a.answer = "none: the terms that do not depend on the NIC already take " + ms(fixed) +
                 ", more than the allowed " + ms(allowed);
      return a;
    }
    needed = 2.0 * (n - 1) * m / (n * (allowed - fixed));
  }
  a.value = needed;
  a.answer = gbps(needed) + " per node (now " + gbps(cluster.nic_bytes_per_second) + ")";
  return a;
}

Answer parameter_servers_needed(const ComputeFigures& compute, const ClusterFigures& cluster,
                                bool overlap, int gpus, double server_bytes_per_second,
                                double target) {
  Answer a;
  a.question = "parameter servers (each " + gbps(server_bytes_per_second) + ") for " +
               std::to_string(gpus) + " workers";
  const double worker = std::min(cluster.nic_bytes_per_second / cluster.gpus_per_node,
                                 cluster.intra_bytes_per_second);
  const double m = compute.gradient_bytes;
  // Rule 1: each server moves p·M/S each way; each worker M: servers keep up when
  // p·M/(S·B_s) <= M/B_w.
  const int keep_up = int(std::ceil(gpus * worker / server_bytes_per_second - 1e-9));
  a.derivation.push_back(compute_line(compute));
  a.derivation.push_back(
      "servers keep up with the workers: p·M/(S·B_s) <= M/B_w  <=>  S >= p·B_w/B_s = " +
      std::to_string(gpus) + "·" + gbps(worker) + "/" + gbps(server_bytes_per_second) + " = " +
      format_significant(gpus * worker / server_bytes_per_second));
  // Rule 2: push and pull (2·p·M/S per server) within the time the target allows.
  const double allowed = allowed_allreduce(compute, overlap, target);
  int for_target = 0;
  if (allowed > 0) {
    for_target = int(std::ceil(2.0 * gpus * m / (server_bytes_per_second * allowed) - 1e-9));
    a.derivation.push_back(
        "push + pull within A = " + ms(allowed) + " (efficiency " + format_significant(target) +
        "): S >= 2·p·M/(B_s·A) = 2·" + std::to_string(gpus) + "·" + mb(m) + "/(" +
        gbps(server_bytes_per_second) + "·" + ms(allowed) +
        ") = " + format_significant(2.0 * gpus * m / (server_bytes_per_second * allowed)));
  }
  // Whatever S, every worker pushes and pulls all M through its own share of the NIC.
  const double worker_seconds = 2 * m / worker;
  const double best =
      compute.compute_seconds() / iteration_seconds(compute, worker_seconds, overlap);
  a.derivation.push_back("the workers' own links bound it for any S: 2M/B_w = 2·" + mb(m) + "/" +
                         gbps(worker) + " = " + ms(worker_seconds) +
                         ", so E <= " + format_significant(best));
  if (best < target) {
    a.possible = false;
    a.answer = "none: with " + gbps(worker) + " per worker, push + pull alone take " +
               ms(worker_seconds) + " and E stays <= " + format_significant(best) + " < " +
               format_significant(target) +
               " whatever the servers; an all-reduce moves less per worker";
    return a;
  }
  const int servers = std::max({1, keep_up, for_target});
  a.value = servers;
  a.answer = std::to_string(servers) + " servers" +
             (for_target > keep_up ? " (set by the efficiency target)"
                                   : " (set by the workers' bandwidth)");
  return a;
}

Answer smallest_batch_for_efficiency(const std::function<ComputeFigures(int)>& compute_at,
                                     const ClusterFigures& cluster, GuideAlgorithm algorithm,
                                     bool overlap, int gpus, double target, int max_batch) {
  Answer a;
  a.question =
      "the smallest per-GPU batch with scaling efficiency >= " + format_significant(target) +
      " on " + std::to_string(gpus) + " GPUs";
  const ComputeFigures one = compute_at(1);
  a.derivation.push_back(
      allreduce_formula(cluster, algorithm, gpus, one.gradient_bytes, one.collectives) +
      " (independent of the batch)");
  a.derivation.push_back(iteration_formula(overlap) + " with T_f, T_b, T_o at batch b");
  // E(b) rises with b (compute grows, the all-reduce does not): the first b that reaches the
  // target is found by bisection over [1, max_batch].
  const auto e = [&](int b) {
    return efficiency(compute_at(b), cluster, algorithm, overlap, gpus);
  };
  if (e(max_batch) < target) {
    a.possible = false;
    a.answer = "none up to batch " + std::to_string(max_batch) +
               ": E = " + format_significant(e(max_batch)) + " < " + format_significant(target);
    return a;
  }
  int lo = 0, hi = max_batch; // E(lo) < target (or lo = 0), E(hi) >= target
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (e(mid) >= target ? hi : lo) = mid;
  }
  a.value = hi;
  a.answer = "batch " + std::to_string(hi) + " per GPU, E = " + format_significant(e(hi));
  if (hi > 1)
    a.derivation.push_back("E(" + std::to_string(hi - 1) + ") = " + format_significant(e(hi - 1)) +
                           " < " + format_significant(target));
  return a;
}

Answer latency_bandwidth_crossover(const ClusterFigures& cluster, int gpus) {
  Answer a;
  a.question = "the message size where the ring overtakes recursive doubling on " +
               std::to_string(gpus) + " GPUs";
  // Both times are linear in n: T = A + n·S. Recursive doubling: round k exchanges the whole
  // buffer with the rank 2^k away: inside the node at B_intra, across nodes with all g GPUs of
  // a node on its NIC at once (B_nic/g each); a non-power-of-two p adds a fold and an unfold.
  const int g = cluster.gpus_per_node;
  double rd_a = 0, rd_s = 0;
  int rounds = 0;
  int pow2 = 1;
  while (pow2 * 2 <= gpus) pow2 *= 2;
  for (int d = 1; d < pow2; d *= 2, ++rounds) {
    if (d < g) {
      rd_a += cluster.intra_latency_seconds;
      rd_s += 1 / cluster.intra_bytes_per_second;
    } else {
      rd_a += cluster.fabric_latency_seconds;
      rd_s += g / cluster.nic_bytes_per_second;
    }
  }
  if (pow2 != gpus) {
    rd_a += 2 * cluster.fabric_latency_seconds;
    rd_s += 2 / std::min(cluster.nic_bytes_per_second, cluster.intra_bytes_per_second);
  }
  const double b = ring_bottleneck(cluster, gpus), lat = ring_latency(cluster, gpus);
  const double ring_a = 2.0 * (gpus - 1) * lat, ring_s = 2.0 * (gpus - 1) / (gpus * b);
  a.derivation.push_back("recursive doubling (" + std::to_string(rounds) + " rounds" +
                         (pow2 != gpus ? " + fold and unfold" : "") + "): T_rd = " + us(rd_a) +
                         " + n·" + format_significant(rd_s * 1e12) + " ps/B");
  a.derivation.push_back("ring: T_ring = 2(p-1)·a + n·2(p-1)/(p·B) = " + us(ring_a) + " + n·" +
                         format_significant(ring_s * 1e12) + " ps/B");
  if (gpus < 3 || rd_s <= ring_s || ring_a <= rd_a) {
    a.possible = false;
    a.answer = gpus < 3 ? "none: with " + std::to_string(gpus) + " GPUs both take one exchange"
                        : "none: one algorithm is faster at every size";
    return a;
  }
  const double n = (ring_a - rd_a) / (rd_s - ring_s);
  a.derivation.push_back("n* = (A_ring - A_rd)/(S_rd - S_ring) = (" + us(ring_a) + " - " +
                         us(rd_a) + ")/(" + format_significant(rd_s * 1e12) + " - " +
                         format_significant(ring_s * 1e12) + ") ps/B");
  a.value = n;
  a.answer = "about " + format_significant(n / 1024) + " KiB: recursive doubling below, ring above";
  return a;
}

} // namespace ddlsim::plan
