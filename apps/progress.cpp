#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace ddlsim::cli {

Progress::Progress(double max_wall_seconds)
    : max_wall_seconds_(max_wall_seconds), terminal_(isatty(STDERR_FILENO) == 1) {}

double Progress::elapsed_seconds() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

void Progress::begin(std::string label, std::string unit) {
  label_ = std::move(label);
  unit_ = std::move(unit);
  label_start_ = Clock::now();
}

bool Progress::keep_going(Picoseconds simulated, std::uint64_t steps_done) {
  const auto now = Clock::now();
  if (max_wall_seconds_ > 0 && elapsed_seconds() > max_wall_seconds_) {
    deadline_passed_ = true;
    return false;
  }
  if (terminal_ && now - last_draw_ > std::chrono::milliseconds(250)) {
    const double seconds = std::chrono::duration<double>(now - label_start_).count();
    std::fprintf(stderr, "\r%s: %.3g M %s, %.3g M %s/s, simulated %.3f ms, wall %.1f s\033[K",
                 label_.c_str(), static_cast<double>(steps_done) / 1e6, unit_.c_str(),
                 static_cast<double>(steps_done) / 1e6 / seconds, unit_.c_str(),
                 ps_to_seconds(simulated) * 1e3, elapsed_seconds());
    std::fflush(stderr);
    last_draw_ = now;
    drawn_ = true;
  }
  return true;
}

void Progress::end() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
  drawn_ = false;
}

} // namespace ddlsim::cli
