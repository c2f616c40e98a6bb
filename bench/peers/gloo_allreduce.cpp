// Peer benchmark: Gloo's all-reduce algorithms (ring, ring_chunked, halving_doubling) over its TCP
// transport on loopback, one process per rank, meeting through a FileStore in a shared folder.
// Usage: bench_gloo_allreduce RANK SIZE STORE_DIR ALGORITHM MIN_BYTES MAX_BYTES ITERS WARMUP
// Rank 0 prints "bytes seconds_per_iteration" per size (fp32 sum; sizes double from MIN to MAX).
#include <gloo/allreduce_halving_doubling.h>
#include <gloo/allreduce_ring.h>
#include <gloo/allreduce_ring_chunked.h>
#include <gloo/barrier_all_to_all.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

namespace {

std::unique_ptr<gloo::Algorithm> make(const std::string& name,
                                      const std::shared_ptr<gloo::Context>& context,
                                      std::vector<float*>& ptrs, int count) {
  if (name == "ring") return std::make_unique<gloo::AllreduceRing<float>>(context, ptrs, count);
  if (name == "ring_chunked")
    return std::make_unique<gloo::AllreduceRingChunked<float>>(context, ptrs, count);
  if (name == "halving_doubling")
    return std::make_unique<gloo::AllreduceHalvingDoubling<float>>(context, ptrs, count);
  return nullptr;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 9) {
    std::fprintf(stderr,
                 "usage: %s RANK SIZE STORE_DIR ring|ring_chunked|halving_doubling "
                 "MIN_BYTES MAX_BYTES ITERS WARMUP\n",
                 argv[0]);
    return 2;
  }
  const int rank = std::atoi(argv[1]), size = std::atoi(argv[2]);
  const std::string store_dir = argv[3], algorithm = argv[4];
  const long long min_bytes = std::atoll(argv[5]), max_bytes = std::atoll(argv[6]);
  const int iterations = std::atoi(argv[7]), warmup = std::atoi(argv[8]);

  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";
  auto device = gloo::transport::tcp::CreateDevice(attr);
  gloo::rendezvous::FileStore store(store_dir);
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
  context->connectFullMesh(store, device);

  for (long long bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
    const int count = static_cast<int>(bytes / 4);
    std::vector<float> data(std::size_t(count), float(rank + 1));
    std::vector<float*> ptrs{data.data()};
    auto all_reduce = make(algorithm, context, ptrs, count);
    if (!all_reduce) {
      std::fprintf(stderr, "unknown algorithm %s\n", algorithm.c_str());
      return 2;
    }
    for (int i = 0; i < warmup; ++i) all_reduce->run();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) all_reduce->run();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
        iterations;
    if (rank == 0) std::printf("%lld %.9f\n", bytes, seconds);
    std::fflush(stdout);
  }
  // Every size is measured (and printed by rank 0). Nobody leaves (closing its connections)
  // while another rank still runs its last iteration: a barrier. A peer that passes it first and
  // exits closes its sockets, which Gloo's I/O thread may report here as an exception
  // (std::terminate) before our own barrier returns; that end of stream is expected now.
  std::fflush(stdout);
  std::set_terminate([] { std::_Exit(0); });
  gloo::BarrierAllToAll(context).run();
  std::_Exit(0);
}
