#include "ddlsim/topologies/transport.hpp"

#include <algorithm>
#include <array>

namespace ddlsim::topo {
namespace {

constexpr std::array<std::string_view, 7> kNames{"ib",   "roce",  "efa", "socket",
                                                 "tcpx", "tcpxo", "cxi"};

} // namespace

std::string_view transport_name(Transport transport) {
  return kNames[static_cast<std::size_t>(transport)];
}

const std::vector<std::string>& transport_names() {
  static const std::vector<std::string> names(kNames.begin(), kNames.end());
  return names;
}

Transport transport_from_name(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return static_cast<Transport>(i);
  return Transport::ib;
}

bool bounces_through_host(Transport transport) {
  return transport == Transport::socket;
}

int socket_streams(int threads, int socks_per_thread) {
  // net_socket.cc: nSocks = nSocksPerThread x nThreads, reduced to MAX_SOCKETS; with no helper
  // thread nSocks is 0 and the request goes over the control socket, one stream.
  if (threads <= 0) return 1;
  const int per_thread = std::min(socks_per_thread, kSocketMaxSockets / threads);
  return std::max(1, per_thread * threads);
}

double socket_proxy_share(int threads, int gpus, int nics) {
  if (threads > 0) return 1.0;
  return gpus >= 2 * std::max(1, nics) ? 1.0 : 0.5;
}

} // namespace ddlsim::topo
