#include "ddlsim/real/netns_cluster.hpp"

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <poll.h>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace ddlsim::real {

namespace {

// Runs a command (argv, no shell) and returns "" on success, else its error output. Bounded:
// the command is killed after 20 s.
std::string run_command(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return std::string("pipe: ") + std::strerror(errno);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipe_fds[1], 2);
    ::dup2(pipe_fds[1], 1);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "cannot run %s: %s", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  if (pid < 0) {
    ::close(pipe_fds[0]);
    return std::string("fork: ") + std::strerror(errno);
  }
  std::string output;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    pollfd p{pipe_fds[0], POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) {
      char chunk[512];
      const ssize_t n = ::read(pipe_fds[0], chunk, sizeof chunk);
      if (n <= 0) break;
      output.append(chunk, std::size_t(n));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      output += " (timed out)";
      break;
    }
  }
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  std::string command;
  for (const std::string& a : argv) command += (command.empty() ? "" : " ") + a;
  while (!output.empty() && (output.back() == '\n' || output.back() == ' ')) output.pop_back();
  return "`" + command + "` failed: " + (output.empty() ? "no message" : output);
}

void must(const std::vector<std::string>& argv) {
  if (std::string error = run_command(argv); !error.empty()) throw std::runtime_error(error);
}

// The namespaces to delete if a signal arrives: fixed storage, so the handler needs no
// allocation. One cluster at a time per process.
constexpr std::size_t kMaxNamespaces = 300;
std::array<std::array<char, 40>, kMaxNamespaces> g_names{};
volatile std::sig_atomic_t g_count = 0;
struct sigaction g_previous[3];
constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};

// Async-signal-safe: fork, execve and waitpid only.
void delete_namespaces_now() {
  for (int i = 0; i < g_count; ++i) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      char ip[] = "ip", netns[] = "netns", del[] = "del";
      char* argv[] = {ip, netns, del, g_names[std::size_t(i)].data(), nullptr};
      char* envp[] = {nullptr};
      ::execve("/usr/sbin/ip", argv, envp);
      ::execve("/sbin/ip", argv, envp);
      ::_exit(127);
    }
    if (pid > 0) ::waitpid(pid, nullptr, 0);
  }
  g_count = 0;
}

void on_signal(int signal) {
  delete_namespaces_now();
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

void install_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &action, &g_previous[i]);
}

void restore_handlers() {
  for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &g_previous[i], nullptr);
}

std::string address_of(int rank) {
  return "10.77." + std::to_string(rank / 250) + "." + std::to_string(rank % 250 + 1);
}

std::string rate_text(double gbps) {
  return std::to_string(static_cast<long long>(gbps * 1e9)) + "bit";
}

// The process id in a namespace name this class made ("ddlsim<pid>sw", "ddlsim<pid>r<rank>"),
// or 0 for any other name.
pid_t owner_of(const std::string& name) {
  if (name.rfind("ddlsim", 0) != 0) return 0;
  std::size_t i = 6;
  pid_t pid = 0;
  while (i < name.size() && name[i] >= '0' && name[i] <= '9' && pid < 100'000'000)
    pid = pid * 10 + (name[i++] - '0');
  if (i == 6 || i == name.size()) return 0;
  const std::string rest = name.substr(i);
  const bool rank = rest.size() > 1 && rest[0] == 'r' &&
                    rest.find_first_not_of("0123456789", 1) == std::string::npos;
  return rest == "sw" || rank ? pid : 0;
}

} // namespace

std::vector<std::string> NetnsCluster::reap_orphans() {
  // A run killed with SIGKILL cannot delete its namespaces (no handler runs); the next run does,
  // for every namespace named by this class whose owner process no longer exists.
  std::vector<std::string> reaped;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/run/netns", error)) {
    const std::string name = entry.path().filename().string();
    const pid_t owner = owner_of(name);
    if (owner <= 0 || owner == ::getpid()) continue;
    if (::kill(owner, 0) == 0 || errno != ESRCH) continue; // alive (or not ours to judge)
    if (run_command({"ip", "netns", "del", name}).empty()) reaped.push_back(name);
  }
  return reaped;
}

std::string NetnsCluster::unavailable_reason() {
  if (::geteuid() != 0)
    return "network namespaces need root (this process runs as uid " + std::to_string(::geteuid()) +
           ")";
  const std::string probe = "ddlsim-probe-" + std::to_string(::getpid());
  if (std::string error = run_command({"ip", "netns", "add", probe}); !error.empty())
    return "cannot create a network namespace: " + error;
  run_command({"ip", "netns", "del", probe});
  return {};
}

NetnsCluster::NetnsCluster(const std::vector<LinkShape>& links)
    : prefix_("ddlsim" + std::to_string(::getpid())) {
  if (links.size() + 1 > kMaxNamespaces)
    throw std::runtime_error("at most " + std::to_string(kMaxNamespaces - 1) + " emulated ranks");
  if (g_count != 0) throw std::runtime_error("only one emulated cluster at a time");
  reaped_ = reap_orphans();
  install_handlers();
  const auto remember = [this](const std::string& name) {
    namespaces_.push_back(name);
    std::snprintf(g_names[std::size_t(g_count)].data(), g_names[0].size(), "%s", name.c_str());
    g_count = g_count + 1;
  };
  try {
    const std::string sw = prefix_ + "sw";
    must({"ip", "netns", "add", sw});
    remember(sw);
    must({"ip", "-n", sw, "link", "add", "br0", "type", "bridge"});
    must({"ip", "-n", sw, "link", "set", "br0", "up"});
    // Does this kernel have netem (delay, loss)? Probe on the bridge, then remove.
    has_netem_ =
        run_command({"tc", "-n", sw, "qdisc", "add", "dev", "br0", "root", "netem", "delay", "1us"})
            .empty();
    if (has_netem_) run_command({"tc", "-n", sw, "qdisc", "del", "dev", "br0", "root"});
    bool wants_delay = false;
    for (std::size_t r = 0; r < links.size(); ++r) {
      const std::string node = prefix_ + "r" + std::to_string(r);
      const std::string port = "p" + std::to_string(r);
      must({"ip", "netns", "add", node});
      remember(node);
      must({"ip", "link", "add", "eth0", "netns", node, "type", "veth", "peer", "name", port,
            "netns", sw});
      must({"ip", "-n", node, "addr", "add", address_of(int(r)) + "/16", "dev", "eth0"});
      must({"ip", "-n", node, "link", "set", "lo", "up"});
      // Jumbo frames, as data-centre fabrics use: headers cost 0.7% of the link, not 4.4%.
      must({"ip", "-n", node, "link", "set", "eth0", "mtu", "9000"});
      must({"ip", "-n", sw, "link", "set", port, "mtu", "9000"});
      must({"ip", "-n", node, "link", "set", "eth0", "up"});
      // A collective's steps leave links idle between messages; TCP's default restart from a
      // small window after idle would make every step pay slow start again.
      must({"ip", "netns", "exec", node, "sysctl", "-q", "-w",
            "net.ipv4.tcp_slow_start_after_idle=0"});
      must({"ip", "-n", sw, "link", "set", port, "master", "br0"});
      must({"ip", "-n", sw, "link", "set", port, "up"});
      const LinkShape& shape = links[r];
      wants_delay |= shape.delay_us > 0 || shape.loss_percent > 0;
      for (const auto& [ns, dev] : {std::pair{node, std::string("eth0")}, std::pair{sw, port}}) {
        if (shape.rate_gbps > 0) {
          // Token bucket at the link rate: a burst of 1 ms of traffic (at least 64 KiB, one
          // GSO packet) and a queue of 20 ms (at least 1 MiB), so TCP fills the link without
          // the queue drops a shallow buffer would cause.
          const double bytes_per_second = shape.rate_gbps * 1e9 / 8;
          const auto burst = static_cast<long long>(std::max(65536.0, bytes_per_second * 1e-3));
          const auto limit = static_cast<long long>(std::max(1048576.0, bytes_per_second * 0.02));
          must({"tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "handle", "1:", "tbf", "rate",
                rate_text(shape.rate_gbps), "burst", std::to_string(burst), "limit",
                std::to_string(limit)});
        }
        if (has_netem_ && (shape.delay_us > 0 || shape.loss_percent > 0)) {
          std::vector<std::string> netem{"tc", "-n", ns, "qdisc", "add", "dev", dev};
          if (shape.rate_gbps > 0) {
            netem.insert(netem.end(), {"parent", "1:1", "handle", "10:"});
          } else {
            netem.insert(netem.end(), {"root", "handle", "10:"});
          }
          netem.insert(netem.end(),
                       {"netem", "delay",
                        std::to_string(static_cast<long long>(shape.delay_us)) + "us", "loss",
                        std::to_string(shape.loss_percent) + "%", "limit", "100000"});
          must(netem);
        }
      }
      places_.push_back({"/run/netns/" + node, address_of(int(r))});
    }
    const double rate = links.empty() ? 0 : links.front().rate_gbps;
    description_ = std::to_string(links.size()) + " namespaces on one bridge, " +
                   (rate > 0 ? "tbf " + rate_text(rate) + " per direction" : "unshaped");
    if (wants_delay)
      description_ += has_netem_ ? ", netem delay and loss"
                                 : "; delay and loss NOT emulated: this kernel has no netem qdisc";
  } catch (...) {
    teardown();
    throw;
  }
}

NetnsCluster::~NetnsCluster() {
  teardown();
}

void NetnsCluster::teardown() {
  // Deleting a namespace removes its veth ends (and so their peers) and qdiscs.
  for (auto it = namespaces_.rbegin(); it != namespaces_.rend(); ++it)
    run_command({"ip", "netns", "del", *it});
  namespaces_.clear();
  g_count = 0;
  restore_handlers();
}

} // namespace ddlsim::real
