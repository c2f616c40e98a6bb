#include "progress.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace ddlsim::cli {

Progress::Progress(double max_wall_seconds, bool forced)
    : max_wall_seconds_(max_wall_seconds), terminal_(isatty(STDERR_FILENO) == 1), forced_(forced) {}

double Progress::elapsed_seconds() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

void Progress::begin(std::string label, std::string unit, double work_done) {
  label_ = std::move(label);
  unit_ = std::move(unit);
  work_done_ = work_done;
  label_start_ = Clock::now();
  // Off a terminal the first label is logged at once, later ones at most once a second (a run
  // of many quick sizes would otherwise log every one).
  if (forced_ && !terminal_ && (!logged_ || label_start_ - last_draw_ >= std::chrono::seconds(1)))
    draw(0, 0, label_start_);
}

std::string Progress::status(Picoseconds simulated, std::uint64_t steps_done) const {
  const auto now = Clock::now();
  const double seconds = std::chrono::duration<double>(now - label_start_).count();
  const double rate = seconds > 0 ? static_cast<double>(steps_done) / seconds : 0.0;
  char line[512];
  // Counts and rates under a million (the jobs of a trace) read better whole; simulated
  // times past 10 s (a job trace's hours) better in seconds.
  char count[64];
  if (steps_done < 1000000)
    std::snprintf(count, sizeof count, "%llu %s", static_cast<unsigned long long>(steps_done),
                  unit_.c_str());
  else
    std::snprintf(count, sizeof count, "%.3g M %s", static_cast<double>(steps_done) / 1e6,
                  unit_.c_str());
  char pace[64];
  if (rate < 1e6)
    std::snprintf(pace, sizeof pace, "%.3g %s/s", rate, unit_.c_str());
  else
    std::snprintf(pace, sizeof pace, "%.3g M %s/s", rate / 1e6, unit_.c_str());
  const double simulated_s = ps_to_seconds(simulated);
  char when[48];
  if (simulated_s >= 10)
    std::snprintf(when, sizeof when, "%.1f s", simulated_s);
  else
    std::snprintf(when, sizeof when, "%.3f ms", simulated_s * 1e3);
  std::snprintf(line, sizeof line, "%s: %s, %s, simulated %s, wall %.1f s", label_.c_str(), count,
                pace, when, elapsed_seconds());
  std::string text = line;
  // The run so far took elapsed for work_done of the work: the rest at the same pace.
  if (work_done_ > 0 && work_done_ < 1) {
    const double eta = elapsed_seconds() * (1 - work_done_) / work_done_;
    std::snprintf(line, sizeof line, ", ETA %.0f s", std::ceil(eta));
    text += line;
  }
  return text;
}

void Progress::draw(Picoseconds simulated, std::uint64_t steps_done, Clock::time_point now) {
  const std::string text = status(simulated, steps_done);
  if (terminal_)
    std::fprintf(stderr, "\r%s\033[K", text.c_str());
  else
    std::fprintf(stderr, "progress: %s\n", text.c_str());
  std::fflush(stderr);
  last_draw_ = now;
  drawn_ = terminal_;
  logged_ = true;
}

bool Progress::keep_going(Picoseconds simulated, std::uint64_t steps_done) {
  const auto now = Clock::now();
  if (max_wall_seconds_ > 0 && elapsed_seconds() > max_wall_seconds_) {
    deadline_passed_ = true;
    return false;
  }
  // A terminal line is redrawn in place 4 times a second; a log gets one line a second.
  const auto every = terminal_ ? std::chrono::milliseconds(250) : std::chrono::milliseconds(1000);
  if ((terminal_ || forced_) && now - last_draw_ >= every) draw(simulated, steps_done, now);
  return true;
}

void Progress::end() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
  drawn_ = false;
  // A simulation shorter than one progress interval never asked keep_going: the deadline is
  // checked here too, between simulations.
  if (max_wall_seconds_ > 0 && elapsed_seconds() > max_wall_seconds_) deadline_passed_ = true;
}

} // namespace ddlsim::cli
