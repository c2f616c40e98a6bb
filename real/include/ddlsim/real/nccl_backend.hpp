// The NCCL backend: one rank of the Schedule per GPU, one process per rank (on one node or many),
// bootstrapped with MPI (rank 0 makes the ncclUniqueId, MPI_Bcast hands it to the others). Every
// process plans the same rounds (p2p_rounds.hpp) and runs its share of each: local steps as our
// kernels, then the round's sends and receives as one ncclGroupStart / ncclSend / ncclRecv /
// ncclGroupEnd group, then our reduce kernel for each recv_reduce (received into a staging
// buffer). Results are checked against the reference executor like the other backends, and
// NCCL's own collective for the same call (ncclAllReduce, ncclReduceScatter, ...) runs after it on
// the same buffers as the baseline. Every wait is bounded: a communicator that does not finish
// within the timeout is aborted (ncclCommAbort) and the run fails naming the rank.
//
// Built only when CUDA, NCCL and MPI are found (DDLSIM_WITH_NCCL).
#pragma once

#include "ddlsim/collectives/schedule.hpp"

#include <chrono>
#include <cstdint>
#include <string>

namespace ddlsim::real {

// MPI for the NCCL backend: initialised by the constructor unless the process already did,
// finalised by the destructor if the constructor initialised it. Without mpirun, Open MPI runs
// the process as a world of one (the degenerate single-rank case).
class MpiSession {
public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; } // among the processes of this node
  int local_size() const { return local_size_; }

private:
  bool owned_ = false;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
};

struct NcclOptions {
  int warmup = 0;
  int iterations = 1;
  std::uint64_t check_limit_bytes = 256ull << 20; // ranks x bytes checked with the reference
  std::chrono::milliseconds timeout{60000};       // per iteration batch, then ncclCommAbort
  bool baseline = true;                           // also time NCCL's own collective
};

// The same on every rank (agreed with MPI) except `error`, which is this rank's own failure or
// names the first rank that failed.
struct NcclRun {
  bool ok = false;
  std::string error;
  bool checked = false;
  double seconds = 0; // slowest rank's mean iteration time
  std::uint64_t wrong = 0;
  std::uint64_t steps = 0, bytes_sent = 0, rounds = 0; // per iteration, all ranks
  std::string baseline;        // the NCCL call timed beside ours, or why none
  double baseline_seconds = 0; // 0: no baseline
  int device = 0;              // this rank's GPU
};

// "" when a GPU is usable, else why not.
std::string nccl_unavailable_reason();

// Runs `schedule` with one MPI process per rank; every process calls it with the same schedule.
NcclRun run_nccl(const coll::Schedule& schedule, const NcclOptions& options, const MpiSession& mpi);

} // namespace ddlsim::real
