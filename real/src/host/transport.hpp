// TCP plumbing of the host backend: listeners, a full mesh of connections between ranks made
// with bounded waits, and the few socket calls the rank engine needs. Only the addresses the
// caller passes are ever contacted (loopback, or addresses a run assigned in its namespaces).
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ddlsim::real::host {

using Clock = std::chrono::steady_clock; // CLOCK_MONOTONIC: one time base for every process

struct TransportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Endpoint {
  std::string address; // IPv4 dotted quad
  std::uint16_t port = 0;
};

// A listening TCP socket on `address`, port chosen by the kernel; throws TransportError.
struct Listener {
  int fd = -1;
  std::uint16_t port = 0;
};
Listener listen_on(const std::string& address, int backlog);

// Connects `rank` to every other rank: it connects to the higher ranks (whose listeners exist
// already, so the kernel completes the handshake from the backlog) and accepts the lower ones,
// which introduce themselves with their rank. Returns one non-blocking, TCP_NODELAY socket per
// rank (-1 for itself). Throws TransportError naming the peer when `deadline` passes.
std::vector<int> connect_mesh(int rank, const std::vector<Endpoint>& endpoints, int listen_fd,
                              Clock::time_point deadline);

void close_all(std::vector<int>& fds);

// Milliseconds left until `deadline` (at least 0, at most `cap`).
int millis_until(Clock::time_point deadline, int cap);

} // namespace ddlsim::real::host
