// Schedule: a collective call bound to its algorithm (or to programs loaded from a dump, or to a
// composite ProgramSource). It hands out one StepStream per (rank, channel) on demand, so an
// executor holds only the ranks and the steps in flight, never the whole schedule.
#pragma once

#include "ddlsim/collectives/algorithm.hpp"
#include "ddlsim/collectives/call.hpp"
#include "ddlsim/collectives/step.hpp"
#include "ddlsim/collectives/step_stream.hpp"

#include <memory>
#include <vector>

namespace ddlsim::coll {

struct MaterializedSchedule;

// The third kind of schedule: programs composed from several collectives and compute steps,
// such as a training iteration (models/ builds one: compute on channel 0, the gradient buckets'
// collectives re-emitted on channels 1..C). The source must follow step.hpp like a generator,
// hand out fresh lazy streams (never the whole schedule) and stay immutable once shared.
class ProgramSource {
public:
  virtual ~ProgramSource() = default;
  virtual std::string_view name() const = 0;
  virtual int ranks() const = 0;
  virtual int channels() const = 0;
  virtual std::uint64_t buffer_bytes(int rank, Buffer buffer) const = 0;
  virtual StepStream program(int rank, int channel) const = 0;
  // The protocols its steps name (Step::protocol indexes this list), one per collective or
  // shared; empty means every step uses the composite call's protocol (and names 0).
  virtual std::vector<Protocol> protocols() const { return {}; }
};

class Schedule {
public:
  // Binds `call` to the algorithm it names. Throws InputError for a malformed call (rank count,
  // bytes not a multiple of the element size, root, reduction the op has no use for, params),
  // an unknown algorithm (listing the valid ones, with "did you mean") or a call the algorithm
  // rejects.
  static Schedule make(CollectiveCall call);
  // Wraps loaded programs (from a dump); they are validated first (see validate()).
  static Schedule from_materialized(MaterializedSchedule programs);
  // Wraps a composite source. `call` is what executors read the dtype and reduction from, and
  // what the reference executor checks the outputs against (e.g. one all-reduce of the whole
  // gradient buffer for a data-parallel iteration whose buckets tile it).
  static Schedule composite(CollectiveCall call, std::shared_ptr<const ProgramSource> source);

  const CollectiveCall& call() const { return call_; }
  int ranks() const { return ranks_; } // including dedicated servers
  int channels() const { return channels_; }
  std::uint64_t buffer_bytes(int rank, Buffer buffer) const;
  StepStream program(int rank, int channel) const;
  std::string_view algorithm_name() const;
  // The protocols the steps name: Step::protocol indexes this list. A generator's schedule has
  // one, its call's; a loaded one the dump's; a composite the source's.
  const std::vector<Protocol>& protocols() const { return protocols_; }
  // The generator, or nullptr for a schedule loaded from a dump or composed.
  const Algorithm* algorithm() const { return algorithm_; }

private:
  CollectiveCall call_;
  const Algorithm* algorithm_ = nullptr;
  std::shared_ptr<const MaterializedSchedule> loaded_;
  std::shared_ptr<const ProgramSource> source_;
  std::vector<Protocol> protocols_;
  int ranks_ = 0;
  int channels_ = 0;
};

// Every program of a schedule held in memory: for dumps, loading, and small cases.
struct MaterializedSchedule {
  CollectiveCall call;
  std::string algorithm;
  int ranks = 0;
  int channels = 0;
  std::vector<std::uint64_t> scratch_bytes;             // per rank
  std::vector<std::vector<std::vector<Step>>> programs; // [rank][channel] -> steps
  // What Step::protocol indexes; empty means {call.protocol}.
  std::vector<Protocol> protocols;

  bool operator==(const MaterializedSchedule&) const = default;
};

// The checks of Schedule::make that do not depend on the algorithm; throws InputError.
void check_call(const CollectiveCall& call);
// Throws InputError at `where` unless payload_efficiency and switch_efficiency are in (0, 1] and
// the hop latencies >= 0.
void check_protocol(const Protocol& protocol, const std::string& where);

MaterializedSchedule materialize(const Schedule& schedule);

// Whether any program of `schedule` holds a switch step (rule 4 of step.hpp): such a schedule
// needs a switch that reduces (NVLS) and no real backend can run it. Walks every step.
bool has_switch_steps(const Schedule& schedule);

// Input and output buffer sizes of `rank` for a call (servers beyond call.ranks have none).
// Block i of n elements is partition(n, ranks, i) (uneven sizes allowed):
//   all_reduce:     input n, output n.
//   reduce_scatter: input n, output block `rank`.
//   all_gather:     input block `rank`, output n (block i holds rank i's input).
//   broadcast:      input n on the root only, output n everywhere (the root copies).
//   reduce:         input n everywhere, output n on the root only.
//   all_to_all:     input n, output n; block j of rank i's input lands in block i of rank j's
//                   output (n must be a multiple of ranks, so every pair moves the same count).
//   send_recv:      input n on rank 0, output n on `root` (root 0 is a local copy).
std::uint64_t input_bytes(const CollectiveCall& call, int rank);
std::uint64_t output_bytes(const CollectiveCall& call, int rank);

// Structural checks that any executor relies on: ranges inside their buffers, deps pointing to
// earlier steps of the same program, peers in range and not self, every send matched by a receive
// with the same byte count and protocol (rule 2 of step.hpp), channels consistent, protocols
// named by index in range. Throws InputError naming
// the rank, channel and step.
void validate(const MaterializedSchedule& schedule);

} // namespace ddlsim::coll
