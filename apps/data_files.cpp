#include "data_files.hpp"

#include "ddlsim/core/input_error.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <system_error>

namespace ddlsim::cli {
namespace {

std::filesystem::path executable_folder() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error)
    throw std::system_error(error, "cannot find the running ddlsim executable (/proc/self/exe)");
  return self.parent_path();
}

} // namespace

std::filesystem::path data_file(const std::filesystem::path& relative) {
  const std::filesystem::path data = executable_folder().parent_path() / "share" / "ddlsim";
  const std::filesystem::path file = data / relative;
  std::error_code error;
  if (!std::filesystem::exists(file, error))
    throw InputError(
        file.string(),
        "ddlsim's data file is missing; install ddlsim with `cmake --install` (data "
        "goes to <prefix>/share/ddlsim beside <prefix>/bin/ddlsim), or run it from its "
        "build tree");
  return file;
}

int run_program(const std::vector<std::string>& argv) {
  if (argv.empty()) throw std::invalid_argument("run_program: no program given");
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  // Made before fork: the child may only call async-signal-safe functions.
  const std::string cannot_start = "ddlsim: cannot start " + argv.front() + "\n";
  std::cout.flush();
  std::cerr.flush();
  const pid_t child = fork();
  if (child < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (child == 0) {
    execvp(args.front(), args.data());
    [[maybe_unused]] const ssize_t written =
        write(STDERR_FILENO, cannot_start.data(), cannot_start.size());
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "waitpid");
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 127;
}

} // namespace ddlsim::cli
