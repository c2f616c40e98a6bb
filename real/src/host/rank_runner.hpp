// What one rank of the host backend does from start to end, the same in a forked process and in
// a thread: enter its namespace, connect to its peers, warm up, wait at the barrier, run the
// timed iterations, check its output against the reference, close in order, report.
#pragma once

#include "ddlsim/real/host_backend.hpp"

#include "rank_engine.hpp"
#include "transport.hpp"

#include <atomic>
#include <vector>

namespace ddlsim::real::host {

struct RankJob {
  const coll::Schedule* schedule = nullptr;
  const HostOptions* options = nullptr;
  int rank = 0;
  std::vector<Endpoint> endpoints; // every rank's listener
  int listen_fd = -1;              // this rank's (owned)
  int control_fd = -1;             // this rank's end of the control socket pair (owned)
  // This rank's input values (empty: the unchecked pattern) and the reference output it must
  // match (empty: unchecked or no output).
  const std::vector<double>* input = nullptr;
  const std::vector<double>* expected = nullptr;
  bool checked = false;
  bool in_process = true;
  const std::atomic<bool>* abort = nullptr;
  int ranks_on_host = 1; // ranks running on this machine, for the spin-or-sleep choice
};

// Runs the rank and reports on the control socket. An injected crash in a thread rank returns
// without a report; in a process it never returns.
void run_rank(const RankJob& job);

} // namespace ddlsim::real::host
