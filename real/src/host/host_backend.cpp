// run_host: the coordinator. Prepares inputs and the reference result, opens one listener per
// rank (inside the rank's namespace), starts the ranks as processes or threads, runs the start
// barrier, and supervises: once a rank fails or dies the others get `timeout` to report what
// they saw, then whatever is left is killed (processes) or told to stop (threads).
#include "ddlsim/real/host_backend.hpp"

#include "control.hpp"
#include "rank_runner.hpp"
#include "result_check.hpp"

#include "ddlsim/collectives/reference.hpp"
#include "ddlsim/core/input_error.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace ddlsim::real {

namespace {

using host::Clock;

// Opens every rank's listener in that rank's namespace (a socket stays in the namespace it was
// made in), returning to the caller's namespace afterwards.
std::vector<host::Listener> open_listeners(const std::vector<RankPlace>& places, int ranks) {
  std::vector<host::Listener> listeners;
  const int home = ::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  try {
    for (int r = 0; r < ranks; ++r) {
      const RankPlace place = places.empty() ? RankPlace{} : places[std::size_t(r)];
      if (!place.netns_path.empty()) {
        const int fd = ::open(place.netns_path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0 || ::setns(fd, CLONE_NEWNET) != 0) {
          if (fd >= 0) ::close(fd);
          throw host::TransportError("cannot enter network namespace " + place.netns_path + ": " +
                                     std::strerror(errno));
        }
        ::close(fd);
      }
      listeners.push_back(host::listen_on(place.address, ranks + 16));
      if (!place.netns_path.empty() && ::setns(home, CLONE_NEWNET) != 0)
        throw host::TransportError("cannot return to the original network namespace");
    }
  } catch (...) {
    if (home >= 0) {
      ::setns(home, CLONE_NEWNET);
      ::close(home);
    }
    for (auto& l : listeners) ::close(l.fd);
    throw;
  }
  if (home >= 0) ::close(home);
  return listeners;
}

std::string exit_text(int status) {
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  return "status " + std::to_string(status);
}

struct RankSlot {
  int control = -1; // coordinator's end
  pid_t pid = -1;
  bool ready = false, reported = false, closed = false;
  host::MessageReader reader;
  RankOutcome outcome;
  std::string death;    // set when it vanished without a report
  bool stopped = false; // ddlsim killed it: it had not reported a timeout after a failure
};

} // namespace

HostRun run_host(const coll::Schedule& schedule, const HostOptions& options) {
  const int ranks = schedule.ranks();
  const coll::CollectiveCall& call = schedule.call();
  if (!options.places.empty() && int(options.places.size()) != ranks)
    throw InputError("places", "one place per rank is needed: " + std::to_string(ranks) +
                                   " ranks, " + std::to_string(options.places.size()) + " places");
  if (options.iterations < 1 || options.warmup < 0)
    throw InputError("--iters", "at least one timed iteration and no negative warm-up");
  // In-switch reduction needs an NVSwitch: rejected rather than emulated by point-to-point
  // messages, whose timing would say nothing about NVLS.
  if (coll::has_switch_steps(schedule))
    throw InputError("algorithm " + call.algorithm,
                     "the host backend cannot run in-switch reduction (NVLS switch steps need an "
                     "NVSwitch with NVLink SHARP); simulate it (ddlsim run) or choose an algorithm "
                     "without NVLS (e.g. ring, nccl_ring)");

  HostRun run;
  // The reference result, when it fits: same inputs, same schedule, executed in this process.
  std::vector<std::vector<double>> inputs, expected;
  std::string schedule_error;
  run.checked = std::uint64_t(ranks) * call.bytes <= options.check_limit_bytes;
  if (run.checked) {
    coll::RealRunExpectation reference = coll::expected_real_outputs(schedule);
    if (!reference.status.ok) {
      run.error = "the reference executor rejects this schedule: " + reference.status.error;
      return run;
    }
    inputs = std::move(reference.inputs);
    expected = std::move(reference.outputs);
    schedule_error = std::move(reference.schedule_error);
  }

  std::vector<host::Listener> listeners;
  try {
    listeners = open_listeners(options.places, ranks);
  } catch (const host::TransportError& error) {
    run.error = error.what();
    return run;
  }
  std::vector<host::Endpoint> endpoints;
  for (int r = 0; r < ranks; ++r)
    endpoints.push_back(
        {options.places.empty() ? "127.0.0.1" : options.places[std::size_t(r)].address,
         listeners[std::size_t(r)].port});

  std::vector<RankSlot> slots(static_cast<std::size_t>(ranks));
  std::vector<int> rank_ends(std::size_t(ranks), -1);
  for (int r = 0; r < ranks; ++r) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
      run.error = std::string("socketpair: ") + std::strerror(errno);
      return run;
    }
    slots[std::size_t(r)].control = pair[0];
    rank_ends[std::size_t(r)] = pair[1];
  }
  std::atomic<bool> abort{false};
  const auto job_for = [&](int r) {
    host::RankJob job;
    job.schedule = &schedule;
    job.options = &options;
    job.rank = r;
    job.endpoints = endpoints;
    job.listen_fd = listeners[std::size_t(r)].fd;
    job.control_fd = rank_ends[std::size_t(r)];
    job.checked = run.checked;
    if (run.checked && r < call.ranks) {
      job.input = &inputs[std::size_t(r)];
      job.expected = &expected[std::size_t(r)];
    }
    job.in_process = options.mode == HostMode::processes;
    job.abort = &abort;
    job.ranks_on_host = ranks; // every rank runs here: loopback or this machine's namespaces
    return job;
  };

  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    if (options.mode == HostMode::threads) {
      threads.emplace_back([job = job_for(r)] { host::run_rank(job); });
      continue;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
      // A rank dies with the coordinator, and leaves signals to it (it tears down namespaces).
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      for (int signal : {SIGINT, SIGTERM, SIGHUP}) ::signal(signal, SIG_DFL);
      // The child keeps only its own ends: other ranks' listeners and control ends are closed
      // so that a dead rank's sockets really close.
      for (int q = 0; q < ranks; ++q) {
        ::close(slots[std::size_t(q)].control);
        if (q != r) {
          ::close(listeners[std::size_t(q)].fd);
          ::close(rank_ends[std::size_t(q)]);
        }
      }
      host::run_rank(job_for(r));
      ::_exit(0);
    }
    if (pid < 0) {
      slots[std::size_t(r)].death = std::string("fork failed: ") + std::strerror(errno);
      slots[std::size_t(r)].closed = true;
      continue;
    }
    slots[std::size_t(r)].pid = pid;
  }
  if (options.mode == HostMode::processes)
    for (int r = 0; r < ranks; ++r) {
      ::close(listeners[std::size_t(r)].fd);
      ::close(rank_ends[std::size_t(r)]);
    }

  // Supervise. Bounded: ranks bound their own waits by the timeout; once one failed, the rest
  // are stopped after one more timeout.
  bool started = false, failed = false;
  Clock::time_point stop_at = Clock::time_point::max();
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<int> owners;
    for (int r = 0; r < ranks; ++r)
      if (!slots[std::size_t(r)].closed) {
        fds.push_back({slots[std::size_t(r)].control, POLLIN, 0});
        owners.push_back(r);
      }
    if (fds.empty()) break;
    ::poll(fds.data(), fds.size(), 100);
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      RankSlot& slot = slots[std::size_t(owners[i])];
      const bool open = slot.reader.read_from(slot.control);
      while (auto message = slot.reader.next()) {
        if ((*message)["type"] == "ready") slot.ready = true;
        if ((*message)["type"] == "result") {
          slot.outcome = host::outcome_from_json(*message, owners[i]);
          slot.reported = true;
          if (!slot.outcome.finished) failed = true;
        }
      }
      if (!open) {
        slot.closed = true;
        ::close(slot.control);
        if (!slot.reported) failed = true;
      }
    }
    if (!started && !failed &&
        std::all_of(slots.begin(), slots.end(), [](const RankSlot& s) { return s.ready; })) {
      started = true;
      for (RankSlot& slot : slots) ::send(slot.control, "G", 1, MSG_NOSIGNAL);
    }
    if (failed && stop_at == Clock::time_point::max()) {
      stop_at = Clock::now() + options.timeout;
      // Ranks waiting at the barrier learn at once that the run is off.
      if (!started)
        for (RankSlot& slot : slots)
          if (!slot.closed) ::shutdown(slot.control, SHUT_WR);
    }
    if (Clock::now() >= stop_at) {
      abort = true;
      for (RankSlot& slot : slots)
        if (slot.pid > 0 && !slot.closed) {
          ::kill(slot.pid, SIGKILL);
          slot.stopped = true;
        }
      stop_at = Clock::now() + options.timeout; // threads: give them one more timeout to stop
    }
  }
  for (std::thread& thread : threads) thread.join();
  for (int r = 0; r < ranks; ++r) {
    RankSlot& slot = slots[std::size_t(r)];
    if (slot.pid > 0) {
      int status = 0;
      ::waitpid(slot.pid, &status, 0);
      // A rank ddlsim stopped did not die of its own: say it stalled (killed by signal 9 read
      // as a crash).
      if (!slot.reported && slot.stopped)
        slot.death = "rank " + std::to_string(r) +
                     " stalled: no result within the timeout after the run failed; ddlsim "
                     "stopped it";
      else if (!slot.reported)
        slot.death = "rank " + std::to_string(r) + " died (" + exit_text(status) + ")";
    } else if (!slot.reported && slot.death.empty()) {
      slot.death = "rank " + std::to_string(r) + " vanished without a report (a crashed thread)";
    }
  }

  // Aggregate: deaths first (the cause), then the ranks' own errors (what they saw).
  std::vector<std::string> errors;
  for (RankSlot& slot : slots)
    if (!slot.death.empty()) errors.push_back(slot.death);
  for (int r = 0; r < ranks; ++r) {
    RankSlot& slot = slots[std::size_t(r)];
    slot.outcome.rank = r;
    if (slot.reported && !slot.outcome.finished) errors.push_back(slot.outcome.error);
    run.seconds = std::max(run.seconds, slot.outcome.seconds);
    run.wrong += slot.outcome.wrong;
    run.steps += slot.outcome.steps;
    run.bytes_sent += slot.outcome.bytes_sent;
    run.ranks.push_back(std::move(slot.outcome));
  }
  const auto runs = std::uint64_t(options.warmup + options.iterations);
  run.steps /= runs;
  run.bytes_sent /= runs;
  for (std::size_t i = 0; i < errors.size(); ++i) run.error += (i ? "\n" : "") + errors[i];
  if (run.error.empty() && run.wrong > 0) {
    std::vector<int> wrong_ranks;
    for (const RankOutcome& rank : run.ranks)
      if (rank.wrong > 0) wrong_ranks.push_back(rank.rank);
    run.error = wrong_result_message(run.wrong, wrong_ranks, schedule_error);
  }
  run.ok = run.error.empty();
  return run;
}

} // namespace ddlsim::real
