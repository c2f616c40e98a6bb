#include "ddlsim/planning/point_runner.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

namespace ddlsim::plan {

std::vector<PointResult> run_points(const std::vector<std::size_t>& indices,
                                    const EvaluatePoint& evaluate, unsigned threads,
                                    const PointProgress& progress) {
  std::vector<PointResult> results(indices.size());
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(
      std::min<std::size_t>(threads, std::max<std::size_t>(1, indices.size())));
  std::atomic<std::size_t> next{0};
  std::mutex progress_mutex;
  std::size_t done = 0;
  auto work = [&] {
    for (std::size_t k = next++; k < indices.size(); k = next++) {
      try {
        results[k] = evaluate(indices[k]);
      } catch (const std::exception& error) {
        results[k].error = error.what();
      }
      results[k].index = indices[k];
      std::lock_guard lock(progress_mutex);
      ++done;
      if (progress) progress(done, indices.size());
    }
  };
  {
    std::vector<std::jthread> workers; // joined at the end of this block, before results leave
    for (unsigned t = 1; t < threads; ++t) workers.emplace_back(work);
    work();
  }
  return results;
}

} // namespace ddlsim::plan
