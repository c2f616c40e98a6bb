// The queue policies of a shared cluster (queue.hpp).
#include "ddlsim/jobs/queue.hpp"

#include "ddlsim/core/input_error.hpp"

#include <algorithm>
#include <limits>
#include <string>

namespace ddlsim::jobs {

void FifoQueue::schedule(double, const std::vector<WaitingJob>& waiting, std::vector<RunningJob>,
                         int, const TryStart& try_start) const {
  for (std::size_t i = 0; i < waiting.size(); ++i)
    if (!try_start(i)) return;
}

void EasyBackfillQueue::schedule(double now, const std::vector<WaitingJob>& waiting,
                                 std::vector<RunningJob> running, int free_gpus,
                                 const TryStart& try_start) const {
  std::size_t head = 0;
  for (; head < waiting.size(); ++head) {
    if (!try_start(head)) break;
    free_gpus -= waiting[head].gpus;
    running.push_back({waiting[head].gpus, now + waiting[head].estimate_seconds});
  }
  if (head >= waiting.size()) return;
  // The head's reservation: when the running jobs' ends free enough GPUs.
  const int need = waiting[head].gpus;
  double shadow = std::numeric_limits<double>::infinity();
  int extra = 0;
  if (free_gpus >= need) { // it fits by count but not in its placement's shape: no backfill
    shadow = now;
    extra = free_gpus - need;
  } else {
    std::stable_sort(running.begin(), running.end(), [](const RunningJob& a, const RunningJob& b) {
      return a.end_seconds < b.end_seconds;
    });
    int available = free_gpus;
    for (const RunningJob& r : running) {
      available += r.gpus;
      if (available >= need) {
        shadow = r.end_seconds;
        extra = available - need;
        break;
      }
    }
  }
  for (std::size_t i = head + 1; i < waiting.size(); ++i) {
    const WaitingJob& job = waiting[i];
    if (job.gpus > free_gpus) continue;
    const bool ends_before = now + job.estimate_seconds <= shadow;
    if (!ends_before && job.gpus > extra) continue;
    if (!try_start(i)) continue;
    free_gpus -= job.gpus;
    if (!ends_before) extra -= job.gpus;
  }
}

std::unique_ptr<QueuePolicy> make_queue(std::string_view name) {
  if (name == "fifo") return std::make_unique<FifoQueue>();
  if (name == "easy") return std::make_unique<EasyBackfillQueue>();
  throw InputError("/workload/scheduler/queue",
                   "unknown queue \"" + std::string(name) + "\"; use fifo or easy");
}

} // namespace ddlsim::jobs
