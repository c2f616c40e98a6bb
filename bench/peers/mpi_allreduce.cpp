// Peer benchmark: Open MPI's MPI_Allreduce (fp32 sum) on the ranks mpirun starts.
// Usage: mpirun -np N bench_mpi_allreduce MIN_BYTES MAX_BYTES ITERS WARMUP
// Rank 0 prints "bytes seconds_per_iteration" per size (sizes double from MIN to MAX); the time
// of a size is the slowest rank's.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 5) {
    if (rank == 0) std::fprintf(stderr, "usage: %s MIN_BYTES MAX_BYTES ITERS WARMUP\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  const long long min_bytes = std::atoll(argv[1]), max_bytes = std::atoll(argv[2]);
  const int iterations = std::atoi(argv[3]), warmup = std::atoi(argv[4]);
  for (long long bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
    const int count = static_cast<int>(bytes / 4);
    std::vector<float> in(static_cast<std::size_t>(count), float(rank + 1));
    std::vector<float> out(in.size());
    for (int i = 0; i < warmup; ++i)
      MPI_Allreduce(in.data(), out.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    for (int i = 0; i < iterations; ++i)
      MPI_Allreduce(in.data(), out.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double seconds = (MPI_Wtime() - start) / iterations, slowest = 0;
    MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) std::printf("%lld %.9f\n", bytes, slowest);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
