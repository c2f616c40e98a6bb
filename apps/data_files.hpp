// ddlsim's bundled data (scenarios, model zoo, plot scripts) and the helper programs run on it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ddlsim::cli {

// A file of the data folder, found relative to the running executable: <its
// folder>/../share/ddlsim, which is <prefix>/share/ddlsim once installed and <build>/share/ddlsim
// (links into the sources) in the build tree. Throws InputError naming the place looked at when the
// file is not there.
std::filesystem::path data_file(const std::filesystem::path& relative);

// Runs a program with these arguments (argv[0] is the program, looked up on PATH unless it holds a
// '/') without a shell, so arguments may hold spaces and quotes; waits for it and returns its exit
// status (128 + signal when killed, 127 when it could not be started).
int run_program(const std::vector<std::string>& argv);

} // namespace ddlsim::cli
