#include "ddlsim/planning/distributed.hpp"

#include <cstdlib>
#include <stdexcept>

#ifdef DDLSIM_WITH_MPI
#include <mpi.h>
#endif

namespace ddlsim::plan {

bool Distributed::launched_by_mpi() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(variable) != nullptr) return true;
  return false;
}

#ifdef DDLSIM_WITH_MPI

bool Distributed::built_with_mpi() {
  return true;
}

Distributed::Distributed() {
  if (!launched_by_mpi()) return;
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) MPI_Init(nullptr, nullptr);
  active_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

Distributed::~Distributed() {
  if (active_) MPI_Finalize();
}

std::vector<std::string> Distributed::gather(const std::string& mine) const {
  if (!active_) return {mine};
  if (mine.size() > static_cast<std::size_t>(INT32_MAX))
    throw std::length_error("a rank's plan results exceed 2 GiB");
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size_));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<std::size_t>(size_), 0);
  std::size_t total = 0;
  for (int r = 0; r < size_; ++r) {
    offsets[std::size_t(r)] = static_cast<int>(total);
    total += static_cast<std::size_t>(lengths[std::size_t(r)]);
  }
  if (rank_ == 0 && total > static_cast<std::size_t>(INT32_MAX))
    throw std::length_error("the plan's gathered results exceed 2 GiB");
  std::string all(rank_ == 0 ? total : 0, '\0');
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
              0, MPI_COMM_WORLD);
  if (rank_ != 0) return {};
  std::vector<std::string> parts;
  for (int r = 0; r < size_; ++r)
    parts.push_back(
        all.substr(std::size_t(offsets[std::size_t(r)]), std::size_t(lengths[std::size_t(r)])));
  return parts;
}

#else

bool Distributed::built_with_mpi() {
  return false;
}
Distributed::Distributed() = default;
Distributed::~Distributed() = default;
std::vector<std::string> Distributed::gather(const std::string& mine) const {
  return {mine};
}

#endif

} // namespace ddlsim::plan
