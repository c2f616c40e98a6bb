// Which NCCL protocols a measured system ran with: NCCL's LL128 enable rule by release, GPU
// architecture, intra-node link and GPU-NIC path, and what is left to the data when the log does
// not say its NCCL version.
#include "ddlsim/calibrate/nccl_protocols.hpp"

#include <catch2/catch.hpp>

using namespace ddlsim;
using namespace ddlsim::calib;

namespace {

topo::ClusterSpec cluster(const std::string& gpu, int nodes, int gpus, topo::IntraNode intra,
                          int pcie_switches, int nics) {
  topo::NodeSpec node;
  node.gpu_model = gpu;
  node.gpus = gpus;
  node.intra = intra;
  node.pcie_switches = pcie_switches;
  node.nics = nics;
  topo::ClusterSpec spec;
  spec.node_groups.push_back({node, nodes});
  return spec;
}

MeasuredSystem logged(const std::string& version, const std::string& transport) {
  MeasuredSystem system;
  system.library_version = version;
  system.transport = transport;
  return system;
}

using Protocols = std::vector<std::string>;

} // namespace

TEST_CASE("GPU names map to their compute capability") {
  CHECK(compute_capability("Tesla V100-SXM2-16GB") == 70);
  CHECK(compute_capability("A100-SXM4-80GB") == 80);
  CHECK(compute_capability("NVIDIA A10G") == 86);
  CHECK(compute_capability("NVIDIA H100 80GB HBM3") == 90);
  CHECK(compute_capability("Tesla P100-PCIE-16GB") == 60);
  CHECK(compute_capability("some accelerator") == 0);
}

TEST_CASE("LL128 follows NCCL's default rule when the log gives the version") {
  const topo::ClusterSpec a100 = cluster("A100-SXM4-80GB", 2, 8, topo::IntraNode::nvswitch, 4, 4);
  // NCCL 2.11 enables LL128 on sm_80 with NVLink and GPUDirect RDMA.
  ProtocolChoice c = infer_nccl_protocols(logged("NCCL 2.11.4+cuda11.4", "NET/IB"), a100);
  CHECK(c.protocols == Protocols{"simple", "ll", "ll128"});
  CHECK(c.optional.empty());
  CHECK_THAT(c.reason, Catch::Contains("sm_80") && Catch::Contains("NCCL 2.11 (from the log)"));
  // Before 2.5 there is no LL128; 2.5-2.6 have it on Volta only.
  c = infer_nccl_protocols(logged("NCCL 2.4.8", "NET/IB"), a100);
  CHECK(c.protocols == Protocols{"simple", "ll"});
  CHECK_THAT(c.reason, Catch::Contains("predates LL128"));
  CHECK(infer_nccl_protocols(logged("NCCL 2.6.4", "NET/IB"), a100).protocols.size() == 2);
  const topo::ClusterSpec v100 =
      cluster("V100-SXM2-16GB", 1, 8, topo::IntraNode::nvlink_hybrid_cube_mesh, 1, 1);
  CHECK(infer_nccl_protocols(logged("NCCL 2.6.4", ""), v100).protocols.size() == 3);
  // Socket transport stages through host memory: no LL128 across nodes.
  c = infer_nccl_protocols(logged("NCCL 2.11.4", "NET/Socket"), a100);
  CHECK(c.protocols == Protocols{"simple", "ll"});
  CHECK_THAT(c.reason, Catch::Contains("NET/Socket"));
  // GPUs on PCIe only, or NICs behind the CPU (no PCIe switch), disable it too.
  CHECK(infer_nccl_protocols(logged("NCCL 2.18.3", "NET/IB"),
                             cluster("A100-PCIE-40GB", 2, 8, topo::IntraNode::pcie_only, 4, 4))
            .protocols.size() == 2);
  CHECK(infer_nccl_protocols(logged("NCCL 2.18.3", "NET/IB"),
                             cluster("A100-SXM4-40GB", 2, 8, topo::IntraNode::nvswitch, 0, 1))
            .protocols.size() == 2);
  // sm_86 (A10G) only from 2.27; before that NCCL leaves LL128 off on it.
  const topo::ClusterSpec a10g = cluster("A10G", 1, 4, topo::IntraNode::nvswitch, 1, 1);
  CHECK(infer_nccl_protocols(logged("NCCL 2.18.3", ""), a10g).protocols.size() == 2);
  CHECK(infer_nccl_protocols(logged("NCCL 2.27.7", ""), a10g).protocols.size() == 3);
}

TEST_CASE("without a version in the log, LL128 is left to the data") {
  const topo::ClusterSpec a100 = cluster("A100-SXM4-80GB", 2, 8, topo::IntraNode::nvswitch, 4, 4);
  const ProtocolChoice c = infer_nccl_protocols(logged("", ""), a100);
  CHECK(c.protocols == Protocols{"simple", "ll"});
  CHECK(c.optional == "ll128");
  CHECK_THAT(c.reason, Catch::Contains("fitted with and without LL128"));
  // Where even the newest rule keeps it off, nothing is optional.
  const ProtocolChoice pcie =
      infer_nccl_protocols(logged("", ""), cluster("A10G", 1, 4, topo::IntraNode::pcie_only, 1, 1));
  CHECK(pcie.optional.empty());
  CHECK(infer_nccl_protocols(logged("", "NET/Socket"), a100).optional.empty());
}
