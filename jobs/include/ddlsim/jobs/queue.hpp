// The queue of a shared cluster: which waiting jobs start now. Each policy is a small class
// behind one interface; placement (placement.hpp) decides where, and may refuse (the cluster
// has the GPUs but not in the shape the policy wants), which the queue treats as "not now".
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

namespace ddlsim::jobs {

struct WaitingJob {
  int gpus = 0;
  double estimate_seconds = 0; // run time alone, the user's estimate a backfilling queue trusts
};
struct RunningJob {
  int gpus = 0;
  double end_seconds = 0; // expected at the current rates
};

// try_start(i): place waiting job i and start it now; false when placement refuses.
using TryStart = std::function<bool(std::size_t)>;

class QueuePolicy {
public:
  virtual ~QueuePolicy() = default;
  virtual std::string_view name() const = 0;
  // `waiting` in arrival order; `running` the jobs on the cluster now.
  virtual void schedule(double now, const std::vector<WaitingJob>& waiting,
                        std::vector<RunningJob> running, int free_gpus,
                        const TryStart& try_start) const = 0;
};

// fifo: jobs start in arrival order; the first that cannot start blocks all behind it.
class FifoQueue : public QueuePolicy {
public:
  std::string_view name() const override { return "fifo"; }
  void schedule(double now, const std::vector<WaitingJob>& waiting, std::vector<RunningJob> running,
                int free_gpus, const TryStart& try_start) const override;
};

// easy: EASY backfilling (Lifka 1995, "The ANL/IBM SP scheduling system"; Mu'alem & Feitelson
// 2001). Jobs start in order until one cannot; that head job gets a reservation at the earliest
// time enough GPUs free up (the "shadow" time, from the running jobs' expected ends), and a
// later job may jump ahead if it fits now and either ends (by its estimate) before the shadow
// time or uses only GPUs the head will not need then. Estimates are run times alone; a job
// slowed by sharing may end later than estimated and delay the head (as with users' estimates).
class EasyBackfillQueue : public QueuePolicy {
public:
  std::string_view name() const override { return "easy"; }
  void schedule(double now, const std::vector<WaitingJob>& waiting, std::vector<RunningJob> running,
                int free_gpus, const TryStart& try_start) const override;
};

// The policy of that name ("fifo", "easy").
std::unique_ptr<QueuePolicy> make_queue(std::string_view name);

} // namespace ddlsim::jobs
