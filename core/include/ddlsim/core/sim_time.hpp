// Simulated time that cannot wrap around.
//
// Engines count time in int64 picoseconds, which hold about 106 days. A bandwidth the scenario
// validator accepts (anything above 0) can make one transfer longer than that: converted with
// llround, the duration wrapped to a negative or tiny number, and a 1 MiB all-reduce over
// 1e-11 Gb/s NICs reported 26.78 us with exit 0. Every engine converts durations and advances
// its clock through these functions, which stop the run with an InputError instead; the
// scenario loader rejects, naming the key, a bandwidth that makes one transfer longer than
// kMaxSimulatedPs before any engine starts.
#pragma once

#include "ddlsim/core/input_error.hpp"
#include "ddlsim/core/units.hpp"

#include <cmath>
#include <string>

namespace ddlsim {

// 2^62 ps, about 53 days: the sum of two times below it cannot overflow int64, so an engine may
// add a duration to its clock and check the result afterwards.
inline constexpr Picoseconds kMaxSimulatedPs = Picoseconds{1} << 62;
inline constexpr double kMaxSimulatedSeconds = static_cast<double>(kMaxSimulatedPs) * 1e-12;

[[noreturn, gnu::cold, gnu::noinline]] inline void simulated_time_overflow(double seconds) {
  const std::string length = std::isfinite(seconds) ? format_significant(seconds, 3) + " s"
                                                    : std::string("an unbounded time");
  throw InputError("simulated time",
                   "the run would last " + length + " of simulated time, beyond the " +
                       format_significant(kMaxSimulatedSeconds, 3) + " s (" +
                       format_significant(kMaxSimulatedSeconds / 86400, 3) +
                       " days) an engine can count; check for a bandwidth given in the wrong "
                       "unit (e.g. bandwidth_gbps 1e-9), a zero rate or an absurd size");
}

// A duration in picoseconds (a double, e.g. bytes / rate * 1e12) rounded to nearest, halves
// away from zero like std::llround; throws when it is not a finite time in [0, kMaxSimulatedPs).
inline Picoseconds checked_ps(double ps) {
  if (!(ps >= 0 && ps < static_cast<double>(kMaxSimulatedPs))) [[unlikely]]
    simulated_time_overflow(ps * 1e-12);
  return static_cast<Picoseconds>(std::llround(ps));
}

// The picoseconds `bytes` take at `bytes_per_second`, rounded to nearest; throws when the
// duration is not a finite time below kMaxSimulatedPs (a zero or denormal rate included).
inline Picoseconds checked_transfer_ps(double bytes, double bytes_per_second) {
  return checked_ps(bytes / bytes_per_second * 1e12);
}

// A clock value an engine is about to use (an event time): throws when it reached
// kMaxSimulatedPs. Sums of values below 2^62 cannot have wrapped, so checking the sum suffices.
inline Picoseconds checked_time(Picoseconds time) {
  if (time >= kMaxSimulatedPs || time < 0) [[unlikely]]
    simulated_time_overflow(static_cast<double>(time) * 1e-12);
  return time;
}

// now + duration for now, duration in [0, kMaxSimulatedPs); throws when the sum leaves it.
inline Picoseconds checked_later(Picoseconds now, Picoseconds duration) {
  return checked_time(now + duration); // both below 2^62: no overflow
}

} // namespace ddlsim
