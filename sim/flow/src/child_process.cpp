#include "child_process.hpp"

#include "ddlsim/core/input_error.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ddlsim::sim::flow {
namespace {

// The message from child to parent: a header, then the error text or the step records.
enum class Outcome : std::uint8_t { ok, input_error, logic_error, other_error };
struct Header {
  Outcome outcome = Outcome::ok;
  bool complete = true;
  Picoseconds time = 0;
  std::uint64_t steps = 0;
  std::uint64_t transfers = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t peak_flows_per_link = 0;
  std::uint64_t records = 0;     // StepRecords that follow
  std::uint64_t text_bytes = 0;  // error text that follows (InputError: where, then reason)
  std::uint64_t where_bytes = 0; // InputError: length of `where` within the text
};
static_assert(std::is_trivially_copyable_v<Header> && std::is_trivially_copyable_v<StepRecord>);

void write_all(int fd, const void* data, std::size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t written = ::write(fd, bytes, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) ::_exit(121); // the parent is gone; nothing left to tell
    bytes += written;
    size -= static_cast<std::size_t>(written);
  }
}

// Reads exactly `size` bytes; false at a premature end of file.
bool read_all(int fd, void* data, std::size_t size) {
  char* bytes = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t got = ::read(fd, bytes, size);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      throw std::runtime_error(std::string("flow engine: reading the result failed: ") +
                               std::strerror(errno));
    if (got == 0) return false;
    bytes += got;
    size -= static_cast<std::size_t>(got);
  }
  return true;
}

[[noreturn]] void send_and_exit(int fd, Header header, const std::string& text,
                                const CollectiveTiming& timing) {
  header.text_bytes = text.size();
  write_all(fd, &header, sizeof header);
  write_all(fd, text.data(), text.size());
  write_all(fd, timing.steps_recorded.data(), timing.steps_recorded.size() * sizeof(StepRecord));
  ::close(fd);
  // Skip destructors and atexit handlers: SimGrid's teardown is slow and the parent owns
  // every shared resource.
  ::_exit(0);
}

Header header_of(const CollectiveTiming& timing) {
  Header header;
  header.complete = timing.complete;
  header.time = timing.time;
  header.steps = timing.steps;
  header.transfers = timing.transfers;
  header.bytes_sent = timing.bytes_sent;
  header.peak_flows_per_link = timing.peak_flows_per_link;
  header.records = timing.steps_recorded.size();
  return header;
}

[[noreturn]] void child(int fd, const std::function<CollectiveTiming(const ReportNow&)>& simulate) {
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  Header header;
  std::string text;
  CollectiveTiming timing;
  try {
    timing =
        simulate([fd](const CollectiveTiming& now) { send_and_exit(fd, header_of(now), "", now); });
    header = header_of(timing);
  } catch (const InputError& error) {
    header.outcome = Outcome::input_error;
    text = error.where() + error.reason();
    header.where_bytes = error.where().size();
  } catch (const std::logic_error& error) {
    header.outcome = Outcome::logic_error;
    text = error.what();
  } catch (const std::exception& error) {
    header.outcome = Outcome::other_error;
    text = error.what();
  }
  send_and_exit(fd, header, text, timing);
}

} // namespace

CollectiveTiming
run_in_child_process(const std::function<CollectiveTiming(const ReportNow&)>& simulate) {
  // Text buffered in this process would otherwise be written twice, once by the child.
  std::cout.flush();
  std::fflush(nullptr);
  int fds[2];
  if (::pipe(fds) != 0)
    throw std::runtime_error(std::string("flow engine: pipe failed: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("flow engine: fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1], simulate);
  }
  ::close(fds[1]);
  Header header;
  CollectiveTiming timing;
  std::string text;
  bool whole = false;
  try {
    if (read_all(fds[0], &header, sizeof header)) {
      text.resize(header.text_bytes);
      timing.steps_recorded.resize(header.records);
      whole = read_all(fds[0], text.data(), text.size()) &&
              read_all(fds[0], timing.steps_recorded.data(), header.records * sizeof(StepRecord));
    }
  } catch (...) {
    ::close(fds[0]);
    ::waitpid(pid, nullptr, 0);
    throw;
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (!whole || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string how = WIFSIGNALED(status)
                          ? "was killed by signal " + std::to_string(WTERMSIG(status))
                          : "exited with status " + std::to_string(WEXITSTATUS(status));
    throw std::runtime_error("flow engine: the SimGrid simulation process " + how +
                             " before reporting (SimGrid's message, if any, is above)");
  }
  switch (header.outcome) {
  case Outcome::ok:
    break;
  case Outcome::input_error:
    throw InputError(text.substr(0, header.where_bytes), text.substr(header.where_bytes));
  case Outcome::logic_error:
    throw std::logic_error(text);
  case Outcome::other_error:
    throw std::runtime_error(text);
  }
  timing.complete = header.complete;
  timing.time = header.time;
  timing.steps = header.steps;
  timing.transfers = header.transfers;
  timing.bytes_sent = header.bytes_sent;
  timing.peak_flows_per_link = header.peak_flows_per_link;
  return timing;
}

} // namespace ddlsim::sim::flow
