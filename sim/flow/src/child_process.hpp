// Runs a simulation in a forked child process and brings its CollectiveTiming back through a
// pipe. SimGrid allows one simulation per process (its clock and network model are
// process-wide and cannot be reset), while `ddlsim run` simulates several sizes and the tests
// many cases; a child per simulation gives each one a fresh SimGrid.
#pragma once

#include "ddlsim/sim/analytic_engine.hpp"

#include <functional>

namespace ddlsim::sim::flow {

// Calls `simulate` in a child process whose standard output goes to standard error (so that
// nothing but our report reaches stdout) and returns its result. An InputError,
// std::logic_error or other exception thrown by `simulate` is thrown again here with the same
// type (InputError, logic_error, runtime_error) and message; a child that dies (a SimGrid abort)
// becomes a std::runtime_error naming the signal or exit status.
//
// `simulate` receives `report_now`: calling it sends a result at once and ends the child (a run
// stopped early ends this way, with no SimGrid teardown).
using ReportNow = std::function<void(const CollectiveTiming&)>;
CollectiveTiming
run_in_child_process(const std::function<CollectiveTiming(const ReportNow& report_now)>& simulate);

} // namespace ddlsim::sim::flow
