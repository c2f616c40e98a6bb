// The `ddlsim` subcommands. Each registers itself on the CLI11 app and runs when selected; the
// callback throws InputError for bad input, which main() prints with exit status 2.
#pragma once

#include <CLI/CLI.hpp>

#include <stdexcept>

namespace ddlsim::cli {

// A run stopped by --max-wall-seconds after reporting what it finished; exit status 4.
struct IncompleteRun : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A real run that failed (a rank died or timed out, or numbers were wrong); exit status 5.
struct RealRunFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void add_real_command(CLI::App& app);
void add_check_command(CLI::App& app);
void add_topo_command(CLI::App& app);
void add_presets_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_schedule_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_guide_command(CLI::App& app);

} // namespace ddlsim::cli
