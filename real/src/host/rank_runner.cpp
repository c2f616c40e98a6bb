#include "rank_runner.hpp"

#include "control.hpp"
#include "dtype.hpp"
#include "result_check.hpp"

#include <cerrno>
#include <cmath>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace ddlsim::real::host {

namespace {

// Long enough to cover a running peer's turn-around on loopback, short enough that an idle
// rank soon sleeps.
constexpr std::chrono::microseconds kSpinBeforeSleep{200};

void enter_namespace(const std::string& path) {
  if (path.empty()) return;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw TransportError("cannot open network namespace " + path);
  const int status = ::setns(fd, CLONE_NEWNET);
  ::close(fd);
  if (status != 0) throw TransportError("cannot enter network namespace " + path);
}

RankBuffers make_buffers(const RankJob& job) {
  const coll::Schedule& schedule = *job.schedule;
  const coll::DataType type = schedule.call().dtype;
  const std::size_t e = coll::element_size(type);
  RankBuffers buffers;
  for (coll::Buffer b : {coll::Buffer::input, coll::Buffer::output, coll::Buffer::scratch})
    buffers.data[std::size_t(b)].resize(schedule.buffer_bytes(job.rank, b));
  auto& input = buffers.data[std::size_t(coll::Buffer::input)];
  const std::size_t n = input.size() / e;
  for (std::size_t i = 0; i < n; ++i) {
    // Unchecked runs (too large for the reference) still move real, varied numbers.
    const double value = job.input && i < job.input->size()
                             ? (*job.input)[i]
                             : double(int((i * 7 + std::size_t(job.rank) * 3) % 7) - 3);
    coll::detail::store(type, &input[i * e], static_cast<float>(value));
  }
  return buffers;
}

std::uint64_t count_wrong(const RankJob& job, RankBuffers& buffers) {
  if (!job.checked || !job.expected) return 0;
  const auto& output = buffers.data[std::size_t(coll::Buffer::output)];
  return count_wrong_elements(job.schedule->call().dtype, output.data(), output.size(),
                              *job.expected);
}

// Waits for the coordinator's "go"; false if it closed the channel (the run is aborted).
bool wait_for_go(const RankJob& job) {
  for (;;) {
    if (job.abort && job.abort->load()) return false;
    pollfd p{job.control_fd, POLLIN, 0};
    const int n = ::poll(&p, 1, 100);
    if (n < 0 && errno != EINTR) return false;
    if (n <= 0) continue;
    char go = 0;
    return ::recv(job.control_fd, &go, 1, 0) == 1 && go == 'G';
  }
}

} // namespace

void run_rank(const RankJob& job) {
  const HostOptions& options = *job.options;
  RankOutcome outcome;
  outcome.rank = job.rank;
  int listen_fd = job.listen_fd;
  try {
    const std::string ns =
        options.places.empty() ? std::string() : options.places[std::size_t(job.rank)].netns_path;
    enter_namespace(ns);
    RankBuffers buffers = make_buffers(job);
    std::vector<int> sockets =
        connect_mesh(job.rank, job.endpoints, listen_fd, Clock::now() + options.timeout);
    ::close(listen_fd);
    listen_fd = -1;
    EngineOptions engine_options;
    engine_options.timeout = options.timeout;
    engine_options.fault = options.fault;
    engine_options.in_process = job.in_process;
    engine_options.abort = job.abort;
    if (job.ranks_on_host <= int(std::thread::hardware_concurrency()))
      engine_options.spin = kSpinBeforeSleep;
    RankEngine engine(*job.schedule, job.rank, std::move(sockets), buffers, engine_options);
    try {
      for (int i = 0; i < options.warmup; ++i) engine.run_once(nullptr);
      if (!send_message(job.control_fd, Json{{"type", "ready"}}) || !wait_for_go(job))
        throw RankFailure("rank " + std::to_string(job.rank) +
                          ": the run was aborted at the start barrier (another rank failed)");
      const auto start = Clock::now();
      for (int i = 0; i < options.iterations; ++i)
        engine.run_once(options.record_timeline && i + 1 == options.iterations ? &outcome.timeline
                                                                               : nullptr);
      outcome.seconds = std::chrono::duration<double>(Clock::now() - start).count() /
                        std::max(1, options.iterations);
      outcome.wrong = count_wrong(job, buffers);
      engine.finish();
      outcome.finished = true;
    } catch (const RankFailure& failure) {
      outcome.error = failure.what();
    }
    outcome.steps = engine.steps_completed();
    outcome.bytes_sent = engine.bytes_sent();
  } catch (const InjectedCrash&) {
    if (listen_fd >= 0) ::close(listen_fd);
    ::close(job.control_fd);
    return; // vanished without a word, like a crashed process
  } catch (const std::exception& error) {
    outcome.error = "rank " + std::to_string(job.rank) + ": " + error.what();
  }
  if (listen_fd >= 0) ::close(listen_fd);
  send_message(job.control_fd, outcome_to_json(outcome));
  ::close(job.control_fd);
}

} // namespace ddlsim::real::host
