// Splitting a plan over MPI ranks: `mpirun -np K ddlsim plan ...` gives point i to rank i mod K
// and gathers every result on rank 0, which alone prints. Started by anything else, a plan is one
// process (size 1). Whether this process was started by an MPI launcher is read from the
// launcher's own environment (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK): that is how MPI
// programs learn it, not a ddlsim setting.
#pragma once

#include <string>
#include <vector>

namespace ddlsim::plan {

class Distributed {
public:
  Distributed(); // initialises MPI when launched by mpirun and MPI was built in
  ~Distributed();
  Distributed(const Distributed&) = delete;
  Distributed& operator=(const Distributed&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Every rank passes its text; rank 0 gets all of them in rank order, the others get nothing.
  std::vector<std::string> gather(const std::string& mine) const;

  // Whether the environment says an MPI launcher started this process.
  static bool launched_by_mpi();
  // Whether this build can use MPI at all.
  static bool built_with_mpi();

private:
  bool active_ = false;
  int rank_ = 0;
  int size_ = 1;
};

} // namespace ddlsim::plan
