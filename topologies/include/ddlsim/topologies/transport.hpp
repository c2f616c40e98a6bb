// Transports: how NCCL moves a node's inter-node bytes through its NICs, and what each costs in
// the topology every engine shares (the NIC's place on the node's PCIe tree, its link's rate
// and latency). docs/transports.md says what each models and what it does not, with sources.
#pragma once

#include "ddlsim/core/units.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ddlsim::topo {

enum class Transport : std::uint8_t {
  ib,     // InfiniBand verbs, GPUDirect RDMA (NCCL NET/IB)
  roce,   // RDMA over Converged Ethernet, GPUDirect RDMA (NCCL NET/IB on RoCE)
  efa,    // AWS Elastic Fabric Adapter, SRD, aws-ofi-nccl plugin, GPUDirect RDMA
  socket, // NCCL NET/Socket: kernel TCP, bytes bounce through host memory
  tcpx,   // GCP GPUDirect-TCPX: kernel TCP, payload DMAed between NIC and GPU memory
  tcpxo,  // GCP GPUDirect-TCPXO: TCP offloaded to the NIC, payload to/from GPU memory
  cxi,    // HPE Slingshot 11 (Cassini NIC), libfabric "cxi" provider via aws-ofi-nccl, GPUDirect
};

// "ib", "roce", ...; the names the scenario's "transport" key takes, in enum order.
std::string_view transport_name(Transport transport);
const std::vector<std::string>& transport_names();
Transport transport_from_name(std::string_view name); // a name of transport_names()

// Whether the payload crosses host memory between GPU and NIC (NET/Socket), rather than going
// GPU <-> NIC over the PCIe switch (GPUDirect RDMA, TCPX(O) devmem).
bool bounces_through_host(Transport transport);

// NCCL's NET/Socket defaults, src/transport/net_socket.cc (NCCL 2.30.7,
// ncclNetSocketGetNsockNthread): without NCCL_SOCKET_NTHREADS / NCCL_NSOCKS_PERTHREAD, 0 helper
// threads and 1 socket (the proxy thread drives the connection's one socket itself), except on
// AWS ENA (PCI vendor 0x1d0f: 2 threads x 8 sockets) and GCP gVNIC (0x1ae0: 4 threads x 1).
inline constexpr int kSocketDefaultThreads = 0;
inline constexpr int kSocketDefaultSocksPerThread = 1;
inline constexpr int kSocketMaxThreads = 16; // net_socket.cc MAX_THREADS
inline constexpr int kSocketMaxSockets = 64; // net_socket.cc MAX_SOCKETS
// The rate one kernel-TCP stream moves when one CPU core does its copies: 34.0 Gbit/s, an
// iperf3 single stream with the sender core at 99% (gist.github.com/gangliao/
// ed9fd49f46e270d3e40548c4d6d7653b, Linux 3.10, 131072-byte writes). Measured over loopback, so
// it has no NIC or wire in it: an upper bound of what one core's TCP stack moves, used only where
// the scenario or preset names no per-stream rate.
inline constexpr double kDefaultSocketStreamGbps = 34.0;

// The data streams (TCP sockets) one NCCL NET/Socket connection spreads a message over:
// threads x sockets per thread, capped at 64 as NCCL does; 0 helper threads = the one socket
// the proxy thread drives.
int socket_streams(int threads, int socks_per_thread);

// The share of a stream's rate each direction of a NIC gets from the CPU threads that copy its
// bytes. With helper threads (threads > 0) every connection has its own, and NCCL's send and
// receive connections are separate comms with separate threads (net_socket.cc): 1. With none,
// the socket is driven by the rank's one proxy progress thread (net_socket.cc
// ncclNetSocketTest, "progress request using main thread"; one proxy thread per rank,
// src/proxy.cc), which copies the rank's sends and its receives on one core. A NIC that one
// rank drives (a GPU per NIC or more NICs) gets half of that core each way (an all-reduce
// sends and receives alike); a NIC shared by two GPUs or more is driven by at least two ranks,
// NCCL's rings entering the node at one and leaving at the other, each half a core in each
// direction: 1.
double socket_proxy_share(int threads, int gpus, int nics);

} // namespace ddlsim::topo
