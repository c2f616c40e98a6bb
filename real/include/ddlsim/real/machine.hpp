// A description of the machine a real run measured, for reports and for calibrate: host name,
// CPU model and count, memory, kernel, and how links were emulated.
#pragma once

#include "ddlsim/core/json_reader.hpp"

#include <string>

namespace ddlsim::real {

// {"host", "cpu", "cpus", "memory_bytes", "kernel", "link_emulation"}
Json describe_machine(const std::string& link_emulation);

} // namespace ddlsim::real
