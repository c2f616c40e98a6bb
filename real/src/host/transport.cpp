#include "transport.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ddlsim::real::host {

namespace {

std::string system_error(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

sockaddr_in socket_address(const std::string& address, std::uint16_t port) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(port);
  if (inet_pton(AF_INET, address.c_str(), &in.sin_addr) != 1)
    throw TransportError("\"" + address + "\" is not an IPv4 address");
  return in;
}

void set_nonblocking(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    throw TransportError(system_error("fcntl O_NONBLOCK"));
}

// Socket buffers large enough that a step's payload of a few MiB goes into the kernel in one
// sendmsg and out in a few recv calls: every wake-up a transfer needs is a scheduling delay on a
// loaded machine. Must be set before connect / listen (the window scale is fixed then); the
// kernel caps it at net.core.{w,r}mem_max. On loopback, Reno rather than the system's default
// (BBR here): BBR paces a burst out through kernel timers, which a loaded machine serves late
// (with the 8 MiB buffers: 4-16 MiB ring all-reduce medians 18-28% below the old build, see
// docs/benchmarks.md, the host backend against its peers); emulated links keep the default, whose
// behaviour against tc's shaping the emulation figures measured.
void size_buffers(int fd, const std::string& address) {
  const int bytes = 8 << 20;
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
  if (address.rfind("127.", 0) == 0) {
    static const char reno[] = "reno";
    setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, reno, sizeof reno - 1);
  }
}

void tune(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// Waits until `fd` is ready for `events` or the deadline passes; false on timeout.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, millis_until(deadline, 1000));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) throw TransportError(system_error("poll"));
    if (Clock::now() >= deadline) return false;
  }
}

// Reads or writes exactly `size` bytes of a non-blocking socket before the deadline.
void exchange(int fd, void* data, std::size_t size, bool write, Clock::time_point deadline,
              const std::string& what) {
  auto* bytes = static_cast<char*>(data);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = write ? ::send(fd, bytes + done, size - done, MSG_NOSIGNAL)
                            : ::recv(fd, bytes + done, size - done, 0);
    if (n > 0) {
      done += std::size_t(n);
      continue;
    }
    if (n == 0) throw TransportError(what + ": the connection closed");
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) throw TransportError(system_error(what));
    if (!wait_for(fd, write ? POLLOUT : POLLIN, deadline))
      throw TransportError(what + ": timed out");
  }
}

} // namespace

int millis_until(Clock::time_point deadline, int cap) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<long long>(0, std::min<long long>(left, cap)));
}

Listener listen_on(const std::string& address, int backlog) {
  Listener listener;
  listener.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener.fd < 0) throw TransportError(system_error("socket"));
  const int one = 1;
  setsockopt(listener.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  size_buffers(listener.fd, address); // accepted connections inherit it
  sockaddr_in in = socket_address(address, 0);
  socklen_t length = sizeof in;
  if (::bind(listener.fd, reinterpret_cast<sockaddr*>(&in), sizeof in) < 0 ||
      ::listen(listener.fd, backlog) < 0 ||
      ::getsockname(listener.fd, reinterpret_cast<sockaddr*>(&in), &length) < 0) {
    const std::string error = system_error("listen on " + address);
    ::close(listener.fd);
    throw TransportError(error);
  }
  listener.port = ntohs(in.sin_port);
  return listener;
}

std::vector<int> connect_mesh(int rank, const std::vector<Endpoint>& endpoints, int listen_fd,
                              Clock::time_point deadline) {
  const int ranks = static_cast<int>(endpoints.size());
  std::vector<int> fds(std::size_t(ranks), -1);
  try {
    for (int peer = rank + 1; peer < ranks; ++peer) {
      const std::string what = "connect to rank " + std::to_string(peer) + " at " +
                               endpoints[std::size_t(peer)].address + ":" +
                               std::to_string(endpoints[std::size_t(peer)].port);
      const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) throw TransportError(system_error("socket"));
      fds[std::size_t(peer)] = fd;
      set_nonblocking(fd);
      tune(fd);
      size_buffers(fd, endpoints[std::size_t(peer)].address);
      const sockaddr_in in =
          socket_address(endpoints[std::size_t(peer)].address, endpoints[std::size_t(peer)].port);
      if (::connect(fd, reinterpret_cast<const sockaddr*>(&in), sizeof in) < 0) {
        if (errno != EINPROGRESS) throw TransportError(system_error(what));
        if (!wait_for(fd, POLLOUT, deadline)) throw TransportError(what + ": timed out");
        int error = 0;
        socklen_t length = sizeof error;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
        if (error != 0) throw TransportError(what + ": " + std::strerror(error));
      }
      std::int32_t me = rank;
      exchange(fd, &me, sizeof me, true, deadline, what);
    }
    set_nonblocking(listen_fd);
    for (int accepted = 0; accepted < rank; ++accepted) {
      if (!wait_for(listen_fd, POLLIN, deadline))
        throw TransportError("rank " + std::to_string(rank) + " accepted " +
                             std::to_string(accepted) + " of its " + std::to_string(rank) +
                             " lower-ranked peers before the deadline");
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) {
        if (errno == EAGAIN || errno == EINTR) {
          --accepted;
          continue;
        }
        throw TransportError(system_error("accept"));
      }
      tune(fd);
      std::int32_t peer = -1;
      exchange(fd, &peer, sizeof peer, false, deadline, "read a peer's rank");
      if (peer < 0 || peer >= rank || fds[std::size_t(peer)] >= 0) {
        ::close(fd);
        throw TransportError("a connection introduced itself as rank " + std::to_string(peer) +
                             ", not a lower rank still expected");
      }
      fds[std::size_t(peer)] = fd;
    }
  } catch (...) {
    close_all(fds);
    throw;
  }
  return fds;
}

void close_all(std::vector<int>& fds) {
  for (int& fd : fds)
    if (fd >= 0) {
      ::close(fd);
      fd = -1;
    }
}

} // namespace ddlsim::real::host
