// ddlsim: simulate and emulate distributed deep-learning training communication.
#include "commands.hpp"
#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/suggest.hpp"

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

namespace {

constexpr int kExitBadInput = 2;
constexpr int kExitInternalError = 3;
constexpr int kExitIncomplete = 4;
constexpr int kExitRealRunFailed = 5;

std::string version_text() {
  std::string text = "ddlsim " DDLSIM_VERSION;
  if (const std::string commit = DDLSIM_GIT_DESCRIBE; !commit.empty())
    text += " (git " + commit + ")";
#ifdef DDLSIM_WITH_CUDA
  text += " (GPU backends built)";
#else
  text += " (GPU backends not built)";
#endif
  return text;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"ddlsim: a cluster-scale simulator and emulator of distributed deep-learning "
               "training communication.\nRun `ddlsim SUBCOMMAND --help` for each subcommand.",
               "ddlsim"};
  app.set_version_flag("--version", version_text());
  app.require_subcommand(1);
  app.footer("Exit status: 0 done, 2 bad input (the message names the place and the fix), "
             "3 internal error (a bug: please report it), 4 stopped by --max-wall-seconds, 5 a "
             "real run failed (a rank died, timed out or computed "
             "wrong numbers).");
  ddlsim::cli::add_run_command(app);
  ddlsim::cli::add_schedule_command(app);
  ddlsim::cli::add_check_command(app);
  ddlsim::cli::add_topo_command(app);
  ddlsim::cli::add_presets_command(app);
  ddlsim::cli::add_calibrate_command(app);
  ddlsim::cli::add_validate_command(app);
  ddlsim::cli::add_real_command(app);
  ddlsim::cli::add_plan_command(app);
  ddlsim::cli::add_guide_command(app);

  // CLI11 answers an unknown subcommand with "A subcommand is required"; say what was wrong.
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(sub->get_name());
  if (argc > 1 && argv[1][0] != '-' &&
      std::find(names.begin(), names.end(), argv[1]) == names.end()) {
    std::cerr << "ddlsim: error: unknown subcommand \"" << argv[1] << "\""
              << ddlsim::did_you_mean(argv[1], names) << "; subcommands: ";
    for (std::size_t i = 0; i < names.size(); ++i) std::cerr << (i ? ", " : "") << names[i];
    std::cerr << " (ddlsim --help)\n";
    return kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version arrive here too, with exit code 0.
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitBadInput;
  } catch (const ddlsim::cli::IncompleteRun& e) {
    std::cerr << "ddlsim: " << e.what() << "\n";
    return kExitIncomplete;
  } catch (const ddlsim::cli::RealRunFailed& e) {
    std::cerr << "ddlsim: the real run failed: " << e.what() << "\n";
    return kExitRealRunFailed;
  } catch (const ddlsim::InputError& e) {
    std::cerr << "ddlsim: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "ddlsim: internal error (please report it): " << e.what() << "\n";
    return kExitInternalError;
  }
  return 0;
}
