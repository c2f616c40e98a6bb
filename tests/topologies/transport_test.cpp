// Transports: every preset names how NCCL drives its NICs, and the socket transport's host bounce
// and stream ceiling land on the links every engine reads.
#include "topology_test_util.hpp"

#include "ddlsim/topologies/router.hpp"
#include "ddlsim/topologies/transport.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>

using namespace ddlsim;
using namespace ddlsim::topo;
using namespace ddlsim::topo::test;

namespace {

double nic_link_rate(const Topology& t, int node) {
  return out_links_of_class(t, t.node(node).nics.at(0), LinkClass::nic)
      .at(0)
      ->bandwidth_bytes_per_second;
}

// Two nodes of an 8-GPU PCIe box with one 100 Gb/s NIC under `transport_keys`.
std::string two_boxes(const std::string& transport_keys) {
  return R"({"nodes": [{"count": 2, "gpus": 8, "gpu_model": "A10G", "intra": "pcie_only",
             "pcie_switches": 4, "pcie_bandwidth_gbps": 252, "nics": 1,
             "nic_bandwidth_gbps": 100)" +
         transport_keys + "}]}";
}

bool path_visits(const Topology& t, const Path& path, VertexId v) {
  for (LinkId l : path)
    if (t.link(l).src == v || t.link(l).dst == v) return true;
  return false;
}

} // namespace

TEST_CASE("transports: every preset with NICs names the transport its cloud or vendor runs") {
  const std::map<std::string, Transport> want{
      {"aws-g5-48xlarge", Transport::socket},
      {"aws-g6e-48xlarge", Transport::socket},
      {"aws-p4d-24xlarge", Transport::efa},
      {"aws-p4de-24xlarge", Transport::efa},
      {"aws-p5-48xlarge", Transport::efa},
      {"azure-nd96asr-v4", Transport::ib},
      {"azure-nd96isr-h100-v5", Transport::ib},
      {"cloud-8xv100-25g", Transport::socket},
      {"dgx-a100", Transport::ib},
      {"dgx-b200", Transport::ib},
      {"dgx-h100", Transport::ib},
      {"dgx-h200", Transport::ib},
      {"dgx1-v100", Transport::ib},
      {"gcp-a3-highgpu-8g", Transport::tcpx},
      {"gcp-a3-megagpu-8g", Transport::tcpxo},
      {"oci-bm-gpu-h100-8", Transport::roce},
      {"oci-bm-gpu4-8", Transport::roce},
      {"pcie-8gpu-10g", Transport::socket},
      {"pcie-8x-rtx4090", Transport::socket},
      {"single-gpu-host", Transport::socket},
      {"gb200-nvl72", Transport::ib},
      {"gh200-quad", Transport::cxi},
      {"aws-p5e-48xlarge", Transport::efa},
      {"gcp-a3-ultragpu-8g", Transport::roce},
      {"gcp-a4-highgpu-8g", Transport::roce},
      {"hgx-a100-80gb", Transport::ib},
      {"pcie-8x-rtx3090", Transport::socket},
      {"pcie-8x-rtx2080ti", Transport::socket},
  };
  for (const std::string& name : node_preset_names()) {
    INFO(name);
    const NodeSpec spec = *find_node_preset(name);
    if (spec.nics == 0) continue;
    REQUIRE(want.count(name) == 1);
    CHECK(spec.transport == want.at(name));
  }
}

TEST_CASE(
    "transports: AWS socket presets carry NCCL's ENA defaults and the EC2 single-flow limit") {
  for (const char* name : {"aws-g5-48xlarge", "aws-g6e-48xlarge", "cloud-8xv100-25g"}) {
    INFO(name);
    const NodeSpec spec = *find_node_preset(name);
    CHECK(spec.socket_nthreads == 2);         // net_socket.cc, vendor 0x1d0f
    CHECK(spec.socket_nsocks_perthread == 8); // net_socket.cc, vendor 0x1d0f
    CHECK(spec.socket_stream_bytes_per_second == gbps_to_bytes_per_second(10));
  }
  // 16 streams x 10 Gb/s is above the g5's 100 Gb/s card: the card is the ceiling.
  CHECK(nic_link_rate(build_topology(cluster("aws-g5-48xlarge", 1)), 0) ==
        gbps_to_bytes_per_second(100));
}

TEST_CASE("transports: NCCL's socket streams are threads x sockets per thread, capped at 64") {
  CHECK(socket_streams(0, 1) == 1); // no helper thread: the proxy drives one socket
  CHECK(socket_streams(0, 8) == 1);
  CHECK(socket_streams(2, 8) == 16);
  CHECK(socket_streams(4, 1) == 4);
  CHECK(socket_streams(16, 64) == 64); // NCCL lowers NSOCKS_PERTHREAD to 64 / threads
  CHECK(socket_streams(3, 30) == 63);
}

TEST_CASE("transports: socket caps the NIC at streams x the per-stream rate (closed form)") {
  // NCCL's defaults off the clouds: one stream at the default per-stream rate.
  const Topology one = build(two_boxes(R"(, "transport": "socket")"));
  CHECK(nic_link_rate(one, 0) == gbps_to_bytes_per_second(kDefaultSocketStreamGbps));
  const Topology four = build(two_boxes(
      R"(, "transport": "socket", "socket_nthreads": 4, "socket_nsocks_perthread": 1,
         "socket_stream_gbps": 12.5)"));
  CHECK(nic_link_rate(four, 1) == gbps_to_bytes_per_second(50));
  // Enough streams: the NIC's own rate.
  const Topology many = build(
      two_boxes(R"(, "transport": "socket", "socket_nthreads": 2, "socket_nsocks_perthread": 8)"));
  CHECK(nic_link_rate(many, 0) == gbps_to_bytes_per_second(100));
  // GPUDirect transports run at the NIC's rate.
  for (const char* t : {"ib", "roce", "efa", "tcpx", "tcpxo", "cxi"}) {
    INFO(t);
    CHECK(nic_link_rate(build(two_boxes(std::string(R"(, "transport": ")") + t + "\"")), 0) ==
          gbps_to_bytes_per_second(100));
  }
  CHECK(nic_link_rate(build(two_boxes("")), 0) == gbps_to_bytes_per_second(100)); // default ib
}

TEST_CASE("transports: without helper threads one proxy core copies both directions of a NIC") {
  CHECK(socket_proxy_share(0, 1, 1) == 0.5); // one rank's proxy drives the NIC: half each way
  CHECK(socket_proxy_share(0, 4, 4) == 0.5); // GH200 quad: a NIC per GPU
  CHECK(socket_proxy_share(0, 8, 1) == 1.0); // the rings' entry and exit ranks: a core each way
  CHECK(socket_proxy_share(0, 8, 4) == 1.0);
  CHECK(socket_proxy_share(2, 1, 1) == 1.0); // helper threads: per connection, per direction
  // A GPU per NIC: the NIC link runs at half a stream; with helper threads, at the streams'.
  const std::string one_per_nic = R"({"nodes": [{"count": 2, "gpus": 4, "gpu_model": "GH200",
      "intra": "nvlink_all_to_all", "nvlink_bandwidth_gbps": 1200, "pcie_bandwidth_gbps": 252,
      "nics": 4, "nic_bandwidth_gbps": 200, "transport": "socket")";
  CHECK(nic_link_rate(build(one_per_nic + "}]}"), 0) ==
        Approx(gbps_to_bytes_per_second(kDefaultSocketStreamGbps) / 2));
  CHECK(nic_link_rate(
            build(one_per_nic + R"(, "socket_nthreads": 1, "socket_nsocks_perthread": 2}]})"), 1) ==
        Approx(gbps_to_bytes_per_second(2 * kDefaultSocketStreamGbps)));
  // Halving the per-stream rate halves the NIC link's (a monotonic response).
  CHECK(nic_link_rate(build(one_per_nic + R"(, "socket_stream_gbps": 17}]})"), 0) ==
        Approx(gbps_to_bytes_per_second(8.5)));
}

TEST_CASE("transports: socket bytes bounce through host memory, GPUDirect ones do not") {
  for (const char* t : {"ib", "socket"}) {
    INFO(t);
    const Topology topo = build(two_boxes(std::string(R"(, "transport": ")") + t + "\""));
    Router router(topo);
    const VertexId cpu0 = vertex(topo, "node0/cpu");
    // GPU 0 shares PCIe switch 0 with the NIC: GPUDirect goes GPU -> switch -> NIC.
    const VertexId near_gpu = topo.node(0).gpus[0];
    const VertexId remote = topo.node(1).gpus[0];
    for (const Path& path : router.paths(near_gpu, remote))
      CHECK(path_visits(topo, path, cpu0) == (std::string(t) == "socket"));
  }
}

TEST_CASE("transports: bad names and keys are errors that say what to write") {
  CHECK_THAT(error_of([] { build(two_boxes(R"(, "transport": "rocev2")")); }),
             Catch::Contains("/topology/nodes/0/transport") && Catch::Contains("roce"));
  CHECK_THAT(error_of([] { build(two_boxes(R"(, "transport": "infiniband")")); }),
             Catch::Contains("ib"));
  CHECK_THAT(error_of([] { build(two_boxes(R"(, "socket_nthreads": 2)")); }),
             Catch::Contains("socket_nthreads") && Catch::Contains("\"transport\": \"socket\""));
  CHECK_THAT(
      error_of([] { build(two_boxes(R"(, "transport": "socket", "socket_nthreads": 17)")); }),
      Catch::Contains("socket_nthreads"));
  // Over a preset, the transport is overridable and socket keys follow it.
  const std::string p5 = R"({"nodes": [{"preset": "aws-p5-48xlarge", "count": 2,
      "transport": "socket"}]})";
  CHECK(parse(p5).node_groups.at(0).spec.transport == Transport::socket);
  const Topology p5_socket = build(p5);
  // 8 GPUs over 32 NICs: each NIC driven by one rank's proxy, half a stream each way.
  CHECK(nic_link_rate(p5_socket, 0) == gbps_to_bytes_per_second(kDefaultSocketStreamGbps) / 2);
}

TEST_CASE("transports: on EFA a GPU's NICs are one device of their summed rate (4 x 100 = 400)") {
  // aws-ofi-nccl's RDMA protocol stripes every message over the NICs beside a GPU
  // (nic_devices): p5.48xlarge's 32 x 100 Gb/s become 8 ports of 400 Gb/s, one per GPU.
  const std::string p5 = R"({"nodes": [{"preset": "aws-p5-48xlarge", "count": 2}]})";
  const NodeSpec spec = parse(p5).node_groups.at(0).spec;
  CHECK(nic_devices(spec).count == 8);
  CHECK(nic_devices(spec).rails == 4);
  const Topology t = build(p5);
  REQUIRE(t.node(0).nics.size() == 8);
  for (int node : {0, 1})
    for (VertexId nic : t.node(node).nics)
      CHECK(out_links_of_class(t, nic, LinkClass::nic).at(0)->bandwidth_bytes_per_second ==
            gbps_to_bytes_per_second(400));
  // Each GPU leaves by its own device.
  std::set<VertexId> used;
  for (const auto& nics : t.node(0).gpu_nics) {
    REQUIRE(nics.size() == 1);
    used.insert(nics.front());
  }
  CHECK(used.size() == 8);
  // Another transport keeps a port per NIC; EFA with fewer NICs than GPUs (p4de) too.
  const Topology ib = build(R"({"nodes": [{"preset": "aws-p5-48xlarge", "count": 2,
      "transport": "ib"}]})");
  CHECK(ib.node(0).nics.size() == 32);
  CHECK(nic_link_rate(ib, 0) == gbps_to_bytes_per_second(100));
  const Topology p4de = build(R"({"nodes": [{"preset": "aws-p4de-24xlarge", "count": 2}]})");
  CHECK(p4de.node(0).nics.size() == 4);
  CHECK(nic_link_rate(p4de, 0) == gbps_to_bytes_per_second(100));
}

TEST_CASE("transports: a preset with NICs must name its transport") {
  const std::string text = R"({"name": "x", "description": "d",
    "node": {"gpu_model": "A10G", "gpus": 1, "intra": "pcie_only", "pcie_bandwidth_gbps": 252,
             "nics": 1, "nic_bandwidth_gbps": 100},
    "sources": {"gpu_model": "s", "gpus": "s", "intra": "s", "pcie_bandwidth_gbps": "s",
                "nics": "s", "nic_bandwidth_gbps": "s"}})";
  CHECK_THAT(error_of([&] { parse_node_preset("x", text); }),
             Catch::Contains("transport") && Catch::Contains("socket"));
}
