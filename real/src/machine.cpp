#include "ddlsim/real/machine.hpp"

#include <fstream>
#include <sys/utsname.h>
#include <thread>
#include <unistd.h>

namespace ddlsim::real {

namespace {

// The value of the first "key : value" line of a /proc file, or "" when absent.
std::string proc_value(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      const auto begin = line.find_first_not_of(" \t", colon + 1);
      return begin == std::string::npos ? "" : line.substr(begin);
    }
  return "";
}

} // namespace

Json describe_machine(const std::string& link_emulation) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  utsname names{};
  ::uname(&names);
  const std::string memory_kib = proc_value("/proc/meminfo", "MemTotal");
  return {{"host", host},
          {"cpu", proc_value("/proc/cpuinfo", "model name")},
          {"cpus", std::thread::hardware_concurrency()},
          {"memory_bytes", memory_kib.empty() ? 0ull : std::stoull(memory_kib) * 1024ull},
          {"kernel", std::string(names.sysname) + " " + names.release},
          {"link_emulation", link_emulation}};
}

} // namespace ddlsim::real
