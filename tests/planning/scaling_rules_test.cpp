// The guide's closed forms: each answer must satisfy the inequality it was derived from, sit at
// its boundary, and respond to its inputs in the direction physics says.
#include "ddlsim/planning/scaling_rules.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace ddlsim::plan;

namespace {

// 25 Gb/s cloud nodes of 8 GPUs on NVLink-class links.
ClusterFigures cloud() {
  ClusterFigures c;
  c.gpus_per_node = 8;
  c.nic_bytes_per_second = 25e9 / 8;
  c.intra_bytes_per_second = 150e9;
  c.fabric_latency_seconds = 10e-6;
  c.intra_latency_seconds = 2e-6;
  return c;
}

// ResNet-50-like: 100 MB of gradients, compute linear in the batch.
ComputeFigures resnet(int batch) {
  ComputeFigures c;
  c.batch = batch;
  c.forward_seconds = 1e-3 * batch;
  c.backward_seconds = 2e-3 * batch;
  c.optimizer_seconds = 2e-3;
  c.gradient_bytes = 102.2e6;
  return c;
}

} // namespace

TEST_CASE("guide rules: ring all-reduce time is the closed form") {
  const ClusterFigures c = cloud();
  const double m = 1e8;
  CHECK(allreduce_seconds(c, GuideAlgorithm::ring, 32, m) ==
        Approx(2.0 * 31 * (10e-6 + m / (32 * c.nic_bytes_per_second))));
  CHECK(allreduce_seconds(c, GuideAlgorithm::ring, 8, m) ==
        Approx(2.0 * 7 * (2e-6 + m / (8 * 150e9))));
  CHECK(allreduce_seconds(c, GuideAlgorithm::ring, 1, m) == 0);
  // Every one of k buckets pays the latency terms; the bandwidth term is paid once.
  CHECK(allreduce_seconds(c, GuideAlgorithm::ring, 32, m, 3) -
            allreduce_seconds(c, GuideAlgorithm::ring, 32, m, 1) ==
        Approx(2.0 * 31 * 2 * 10e-6));
  CHECK(allreduce_seconds(c, GuideAlgorithm::hierarchical, 64, m, 4) -
            allreduce_seconds(c, GuideAlgorithm::hierarchical, 64, m, 1) ==
        Approx(3 * (2.0 * 7 * 2e-6 + 2.0 * 7 * 10e-6)));
  // Hierarchical moves 2M/N over each NIC instead of 2M(p-1)/p: faster across many nodes.
  CHECK(allreduce_seconds(c, GuideAlgorithm::hierarchical, 128, m) <
        allreduce_seconds(c, GuideAlgorithm::ring, 128, m));
}

TEST_CASE("guide rules: efficiency falls with GPUs and rises with NIC bandwidth and batch") {
  ClusterFigures c = cloud();
  double last = 2;
  for (int p = 8; p <= 512; p *= 2) {
    const double e = efficiency(resnet(32), c, GuideAlgorithm::ring, true, p);
    CHECK(e < last + 1e-12);
    last = e;
  }
  const double slow = efficiency(resnet(32), c, GuideAlgorithm::ring, true, 64);
  c.nic_bytes_per_second *= 4;
  CHECK(efficiency(resnet(32), c, GuideAlgorithm::ring, true, 64) > slow);
  CHECK(efficiency(resnet(64), cloud(), GuideAlgorithm::ring, true, 64) > slow);
  CHECK(efficiency(resnet(32), cloud(), GuideAlgorithm::ring, false, 64) < slow);
}

TEST_CASE("guide rules: the largest GPU count sits at the efficiency boundary") {
  ClusterFigures c = cloud();
  c.nic_bytes_per_second = 100e9 / 8; // the ring's latency term sets the limit near 260 GPUs
  const Answer a = max_gpus(resnet(64), c, GuideAlgorithm::ring, false, 0.9, 4096);
  REQUIRE(a.possible);
  const int p = int(a.value);
  CHECK(p % 8 == 0);
  CHECK(p > 8);
  CHECK(p < 4096);
  CHECK(efficiency(resnet(64), c, GuideAlgorithm::ring, false, p) >= 0.9);
  CHECK(efficiency(resnet(64), c, GuideAlgorithm::ring, false, p + 8) < 0.9);
  // A faster NIC never lowers the answer; a stricter target never raises it.
  ClusterFigures fast = c;
  fast.nic_bytes_per_second *= 4;
  CHECK(max_gpus(resnet(64), fast, GuideAlgorithm::ring, false, 0.9, 4096).value >= p);
  CHECK(max_gpus(resnet(64), c, GuideAlgorithm::ring, false, 0.95, 4096).value <= p);
  // Too strict for even one node: impossible, with the reason.
  const Answer none = max_gpus(resnet(1), cloud(), GuideAlgorithm::ring, false, 0.999, 4096);
  CHECK_FALSE(none.possible);
  CHECK(none.answer.find("one node") != std::string::npos);
}

TEST_CASE("guide rules: the NIC bandwidth needed gives exactly the target efficiency") {
  ClusterFigures c = cloud();
  for (GuideAlgorithm algorithm : {GuideAlgorithm::ring, GuideAlgorithm::hierarchical}) {
    const Answer a = nic_bandwidth_needed(resnet(32), c, algorithm, false, 64, 0.8);
    REQUIRE(a.possible);
    ClusterFigures at = c;
    at.nic_bytes_per_second = a.value;
    CHECK(efficiency(resnet(32), at, algorithm, false, 64) == Approx(0.8).epsilon(1e-9));
  }
  // A target the latency alone forbids is impossible, and says why.
  c.fabric_latency_seconds = 1e-3;
  const Answer none = nic_bandwidth_needed(resnet(1), c, GuideAlgorithm::ring, false, 512, 0.95);
  CHECK_FALSE(none.possible);
  CHECK(none.answer.find("latency") != std::string::npos);
}

TEST_CASE("guide rules: no number of servers helps when the workers' links are the bottleneck") {
  // 8 GPUs share a 25 Gb/s NIC: each pushes and pulls 102 MB at 3.1 Gb/s, far beyond T_c.
  const Answer a = parameter_servers_needed(resnet(32), cloud(), true, 64, 25e9 / 8, 0.8);
  CHECK_FALSE(a.possible);
  CHECK(a.answer.find("whatever the servers") != std::string::npos);
}

TEST_CASE("guide rules: parameter servers grow with workers and the efficiency target") {
  ClusterFigures c = cloud();
  c.gpus_per_node = 1; // one GPU per 25 Gb/s NIC, large batch: servers can keep up
  c.nic_bytes_per_second = 100e9 / 8;
  const double server = 25e9 / 8;
  const Answer a = parameter_servers_needed(resnet(32), c, true, 64, server, 0.8);
  const Answer more = parameter_servers_needed(resnet(32), c, true, 128, server, 0.8);
  const Answer stricter = parameter_servers_needed(resnet(32), c, true, 64, server, 0.95);
  REQUIRE(a.possible);
  REQUIRE(stricter.possible);
  CHECK(a.value >= 1);
  CHECK(more.value >= a.value);
  CHECK(stricter.value >= a.value);
  // With S servers push + pull fit the allowed time: 2·p·M/(S·B_s) <= A.
  const double allowed = resnet(32).compute_seconds() / 0.8 - 32e-3 - 2e-3;
  CHECK(2.0 * 64 * 102.2e6 / (a.value * server) <= allowed * (1 + 1e-9));
}

TEST_CASE("guide rules: the smallest batch for a target is the first that reaches it") {
  const ClusterFigures c = cloud();
  for (double target : {0.7, 0.8, 0.9}) {
    const Answer a =
        smallest_batch_for_efficiency(resnet, c, GuideAlgorithm::ring, true, 64, target, 4096);
    INFO(target);
    REQUIRE(a.possible);
    const int b = int(a.value);
    CHECK(efficiency(resnet(b), c, GuideAlgorithm::ring, true, 64) >= target);
    if (b > 1) CHECK(efficiency(resnet(b - 1), c, GuideAlgorithm::ring, true, 64) < target);
  }
  // A stricter target needs a larger batch.
  CHECK(smallest_batch_for_efficiency(resnet, c, GuideAlgorithm::ring, true, 64, 0.9, 4096).value >
        smallest_batch_for_efficiency(resnet, c, GuideAlgorithm::ring, true, 64, 0.7, 4096).value);
}

TEST_CASE("guide rules: at the crossover size ring and recursive doubling take equal time") {
  ClusterFigures c = cloud();
  const Answer a = latency_bandwidth_crossover(c, 64);
  REQUIRE(a.possible);
  const double n = a.value;
  // p = 64, g = 8: 3 rounds inside the node, 3 across with 8 flows per NIC.
  const double rd = 3 * (2e-6 + n / 150e9) + 3 * (10e-6 + 8 * n / c.nic_bytes_per_second);
  const double ring = 2.0 * 63 * (10e-6 + n / (64 * c.nic_bytes_per_second));
  CHECK(rd == Approx(ring).epsilon(1e-9));
  CHECK_FALSE(latency_bandwidth_crossover(c, 2).possible);
}
