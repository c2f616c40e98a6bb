// run_nccl: every process plans the same rounds and runs its own share on its GPU (see
// nccl_backend.hpp). Compiled by the host compiler; the kernels are the CUDA backend's.
#include "ddlsim/real/nccl_backend.hpp"

#include "dtype.hpp"
#include "local_steps.hpp"
#include "result_check.hpp"
#include "step_rules.hpp"

#include "ddlsim/collectives/reference.hpp"
#include "ddlsim/real/nccl_baseline.hpp"
#include "ddlsim/real/p2p_rounds.hpp"

#include <array>
#include <cmath>
#include <cstdio>
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>
#include <stdexcept>
#include <thread>
#include <vector>

namespace ddlsim::real {

namespace {

struct NcclFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Clock = std::chrono::steady_clock;

void must(cudaError_t error, const std::string& what) {
  if (error != cudaSuccess) throw NcclFailure(what + ": " + cudaGetErrorString(error));
}

// With a non-blocking communicator a call may return ncclInProgress: poll until it settled,
// bounded by the deadline (then abort the communicator, which ends every pending operation).
void settle(ncclResult_t result, ncclComm_t comm, Clock::time_point deadline,
            const std::string& what) {
  while (result == ncclInProgress) {
    if (Clock::now() > deadline) {
      ncclCommAbort(comm);
      throw NcclFailure(what + ": no progress before the timeout (communicator aborted)");
    }
    std::this_thread::yield();
    ncclCommGetAsyncError(comm, &result);
  }
  if (result != ncclSuccess)
    throw NcclFailure(what + ": " + ncclGetErrorString(result) + " (" +
                      (comm ? ncclGetLastError(comm) : "") + ")");
}

ncclDataType_t nccl_type(coll::DataType type) {
  return type == coll::DataType::fp32   ? ncclFloat32
         : type == coll::DataType::fp16 ? ncclFloat16
                                        : ncclBfloat16;
}

class NcclRank {
public:
  NcclRank(const coll::Schedule& schedule, const P2pRounds& plan, int rank, int device,
           std::chrono::milliseconds timeout)
      : schedule_(schedule), plan_(plan), call_(schedule.call()), rank_(rank), device_(device),
        timeout_(timeout) {
    must(cudaSetDevice(device), "cudaSetDevice");
    must(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    for (coll::Buffer b : {coll::Buffer::input, coll::Buffer::output, coll::Buffer::scratch}) {
      const std::uint64_t bytes = schedule.buffer_bytes(rank, b);
      sizes_[std::size_t(b)] = bytes;
      if (bytes > 0) must(cudaMalloc(&buffers_[std::size_t(b)], bytes), "cudaMalloc");
      if (bytes > 0) must(cudaMemset(buffers_[std::size_t(b)], 0, bytes), "cudaMemset");
    }
    const std::uint64_t staging = plan.staging_bytes[std::size_t(rank)];
    if (staging > 0) must(cudaMalloc(&staging_, staging), "cudaMalloc (receive staging)");
  }
  ~NcclRank() {
    cudaSetDevice(device_);
    if (stream_) cudaStreamSynchronize(stream_);
    if (comm_) {
      // A non-blocking communicator finalises asynchronously: wait (bounded) before freeing it.
      ncclResult_t state = ncclCommFinalize(comm_);
      const auto until = Clock::now() + std::chrono::seconds(10);
      while (state == ncclInProgress && Clock::now() < until) {
        std::this_thread::yield();
        ncclCommGetAsyncError(comm_, &state);
      }
      if (state == ncclSuccess)
        ncclCommDestroy(comm_);
      else
        ncclCommAbort(comm_);
    }
    for (void* pointer : buffers_)
      if (pointer) cudaFree(pointer);
    if (staging_) cudaFree(staging_);
    workspace_.reset();
    if (stream_) cudaStreamDestroy(stream_);
  }
  NcclRank(const NcclRank&) = delete;
  NcclRank& operator=(const NcclRank&) = delete;

  void connect(const ncclUniqueId& id, int ranks) {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    const ncclResult_t result = ncclCommInitRankConfig(&comm_, ranks, id, rank_, &config);
    settle(result, comm_, Clock::now() + timeout_, "ncclCommInitRankConfig");
  }

  void set_input(const std::vector<double>* values) {
    const std::size_t e = coll::element_size(call_.dtype);
    std::vector<std::byte> host(sizes_[0]);
    for (std::size_t i = 0; i < host.size() / e; ++i) {
      const double v = values && i < values->size()
                           ? (*values)[i]
                           : double(int((i * 7 + std::size_t(rank_) * 3) % 7) - 3);
      coll::detail::store(call_.dtype, &host[i * e], static_cast<float>(v));
    }
    if (!host.empty())
      must(cudaMemcpy(buffers_[0], host.data(), host.size(), cudaMemcpyHostToDevice),
           "copy the input to the GPU");
  }

  std::uint64_t count_wrong(const std::vector<double>& want) {
    std::vector<std::byte> host(sizes_[1]);
    if (!host.empty())
      must(cudaMemcpy(host.data(), buffers_[1], host.size(), cudaMemcpyDeviceToHost),
           "copy the output back");
    return count_wrong_elements(call_.dtype, host.data(), host.size(), want);
  }

  // Enqueues one execution of this rank's share of every round.
  void run_once(Clock::time_point deadline) {
    for (std::size_t r = 0; r < plan_.rounds.size(); ++r) {
      const RankRound& share = plan_.rounds[r][std::size_t(rank_)];
      for (const RoundStep& s : share.local) {
        try {
          cuda::enqueue_local_step(s.step, call_, at(s.step.src), at(s.step.aux), at(s.step.dst),
                                   stream_, *workspace_);
        } catch (const cuda::StepFailure& failure) {
          throw NcclFailure(where(s) + ": " + failure.what());
        }
      }
      if (share.group.empty()) continue;
      settle(ncclGroupStart(), comm_, deadline, "ncclGroupStart");
      std::uint64_t staged = 0;
      for (const RoundStep& s : share.group) {
        const coll::Step& step = s.step;
        if (step.bytes == 0) continue; // both sides skip it: the byte counts match (rule 2)
        ncclResult_t result;
        if (step.is_send())
          result = ncclSend(at(step.src), step.bytes, ncclUint8, step.peer, comm_, stream_);
        else if (step.kind == coll::StepKind::recv)
          result = ncclRecv(at(step.dst), step.bytes, ncclUint8, step.peer, comm_, stream_);
        else
          result = ncclRecv(static_cast<std::byte*>(staging_) + staged, step.bytes, ncclUint8,
                            step.peer, comm_, stream_);
        if (step.kind == coll::StepKind::recv_reduce) staged += step.bytes;
        if (result != ncclSuccess && result != ncclInProgress)
          throw NcclFailure(where(s) + ": " + ncclGetErrorString(result));
      }
      settle(ncclGroupEnd(), comm_, deadline, "round " + std::to_string(r) + ": ncclGroupEnd");
      staged = 0;
      for (const RoundStep& s : share.group) {
        if (s.step.kind != coll::StepKind::recv_reduce) continue;
        try {
          cuda::enqueue_combine(call_, at(s.step.src), static_cast<std::byte*>(staging_) + staged,
                                at(s.step.dst), s.step.bytes, stream_);
        } catch (const cuda::StepFailure& failure) {
          throw NcclFailure(where(s) + ": " + failure.what());
        }
        staged += s.step.bytes;
      }
    }
  }

  // NCCL's own collective for the call, on the same buffers (overwrites the output).
  void run_baseline(const NcclBaselineCall& baseline, Clock::time_point deadline) {
    const ncclDataType_t type = nccl_type(call_.dtype);
    const ncclRedOp_t op = call_.reduction == coll::Reduction::avg ? ncclAvg : ncclSum;
    void* in = buffers_[0] ? buffers_[0] : buffers_[1];
    void* out = buffers_[1] ? buffers_[1] : buffers_[0];
    using Kind = NcclBaselineCall::Kind;
    ncclResult_t result = ncclSuccess;
    switch (baseline.kind) {
    case Kind::all_reduce:
      result = ncclAllReduce(in, out, baseline.count, type, op, comm_, stream_);
      break;
    case Kind::reduce_scatter:
      result = ncclReduceScatter(in, out, baseline.count, type, op, comm_, stream_);
      break;
    case Kind::all_gather:
      result = ncclAllGather(in, out, baseline.count, type, comm_, stream_);
      break;
    case Kind::broadcast:
      result = ncclBroadcast(in, out, baseline.count, type, baseline.root, comm_, stream_);
      break;
    case Kind::reduce:
      result = ncclReduce(in, out, baseline.count, type, op, baseline.root, comm_, stream_);
      break;
    case Kind::all_to_all: {
      const std::size_t block = baseline.count * coll::element_size(call_.dtype);
      settle(ncclGroupStart(), comm_, deadline, "ncclGroupStart");
      for (int peer = 0; peer < call_.ranks; ++peer) {
        ncclSend(static_cast<std::byte*>(in) + block * std::size_t(peer), baseline.count, type,
                 peer, comm_, stream_);
        ncclRecv(static_cast<std::byte*>(out) + block * std::size_t(peer), baseline.count, type,
                 peer, comm_, stream_);
      }
      result = ncclGroupEnd();
      break;
    }
    case Kind::none:
      return;
    }
    settle(result, comm_, deadline, baseline.name);
  }

  // Waits until the GPU finished everything enqueued, bounded by the deadline.
  void wait(Clock::time_point deadline, const std::string& what) {
    for (;;) {
      const cudaError_t state = cudaStreamQuery(stream_);
      if (state == cudaSuccess) break;
      if (state != cudaErrorNotReady) must(state, what);
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(comm_, &async);
      if (async != ncclSuccess && async != ncclInProgress)
        throw NcclFailure(what + ": " + ncclGetErrorString(async));
      if (Clock::now() > deadline) {
        ncclCommAbort(comm_);
        comm_ = nullptr;
        throw NcclFailure(what + ": not finished within the timeout (communicator aborted; a "
                                 "peer rank died or stalls)");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    std::uint32_t errors = 0;
    must(workspace_->error_count(stream_, errors), "read the codec error count");
    if (errors > 0)
      throw NcclFailure(std::to_string(errors) +
                        " top-k pairs held an index outside their destination");
  }

private:
  void* at(const coll::BufferRange& range) const {
    auto* base = static_cast<std::byte*>(buffers_[std::size_t(range.buffer)]);
    return base && range.bytes > 0 ? base + range.offset : nullptr;
  }
  std::string where(const RoundStep& s) const {
    return coll::detail::to_string(coll::detail::StepPlace{rank_, s.channel, s.index}) + " (" +
           coll::detail::describe(s.step) + ")";
  }

  const coll::Schedule& schedule_;
  const P2pRounds& plan_;
  coll::CollectiveCall call_;
  int rank_, device_;
  std::chrono::milliseconds timeout_;
  cudaStream_t stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
  std::array<void*, 3> buffers_{};
  std::array<std::uint64_t, 3> sizes_{};
  void* staging_ = nullptr;
  std::unique_ptr<cuda::CodecWorkspace> workspace_ = std::make_unique<cuda::CodecWorkspace>();
};

// Whether every rank succeeded; the lowest failing rank's number otherwise (-1: none).
int first_failure(bool ok) {
  int mine = ok ? 1 << 30 : 0, lowest = 0;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!ok) mine = rank;
  MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return lowest == 1 << 30 ? -1 : lowest;
}

double slowest(double seconds) {
  double out = 0;
  MPI_Allreduce(&seconds, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

} // namespace

std::string nccl_unavailable_reason() {
  int count = 0;
  if (cudaError_t error = cudaGetDeviceCount(&count); error != cudaSuccess)
    return std::string("cudaGetDeviceCount: ") + cudaGetErrorString(error);
  return count == 0 ? "the CUDA runtime sees no GPU" : "";
}

NcclRun run_nccl(const coll::Schedule& schedule, const NcclOptions& options,
                 const MpiSession& mpi) {
  NcclRun run;
  const coll::CollectiveCall& call = schedule.call();
  const int me = mpi.rank();
  int gpus = 0;
  std::string failure;
  if (cudaGetDeviceCount(&gpus) != cudaSuccess) gpus = 0;
  if (schedule.ranks() != mpi.size()) {
    failure = "the schedule has " + std::to_string(schedule.ranks()) + " ranks but " +
              std::to_string(mpi.size()) + " MPI process" + (mpi.size() == 1 ? "" : "es") +
              " run it: start one process per rank (mpirun -np " +
              std::to_string(schedule.ranks()) +
              " ddlsim real --backend nccl ...), each on its own GPU (NCCL refuses two ranks on "
              "one GPU; this node has " +
              std::to_string(gpus) + ")";
  } else if (mpi.local_size() > gpus) {
    failure = "this node runs " + std::to_string(mpi.local_size()) + " ranks but has " +
              std::to_string(gpus) +
              " GPU(s): NCCL refuses two ranks on one GPU, so more ranks need more GPUs";
  }
  run.device = gpus > 0 ? mpi.local_rank() % gpus : 0;
  // Every process builds the same plan and (when small enough) the same reference result.
  std::unique_ptr<P2pRounds> plan;
  std::vector<std::vector<double>> inputs, expected;
  std::string schedule_error;
  run.checked = std::uint64_t(schedule.ranks()) * call.bytes <= options.check_limit_bytes;
  if (failure.empty()) {
    try {
      plan = std::make_unique<P2pRounds>(plan_p2p_rounds(schedule));
      run.rounds = plan->rounds.size();
      run.steps = plan->steps;
      if (run.checked) {
        coll::RealRunExpectation reference = coll::expected_real_outputs(schedule);
        if (!reference.status.ok)
          failure = "the reference executor rejects this schedule: " + reference.status.error;
        inputs = std::move(reference.inputs);
        expected = std::move(reference.outputs);
        schedule_error = std::move(reference.schedule_error);
      }
    } catch (const std::exception& error) {
      failure = error.what();
    }
  }
  std::unique_ptr<NcclRank> rank;
  if (failure.empty()) {
    try {
      rank = std::make_unique<NcclRank>(schedule, *plan, me, run.device, options.timeout);
      rank->set_input(run.checked && me < call.ranks ? &inputs[std::size_t(me)] : nullptr);
    } catch (const std::exception& error) {
      failure = "rank " + std::to_string(me) + " on GPU " + std::to_string(run.device) + ": " +
                error.what();
    }
  }
  // Nobody enters NCCL unless everybody is ready (a lone rank in ncclCommInitRank would wait).
  if (const int bad = first_failure(failure.empty()); bad >= 0) {
    run.error =
        !failure.empty() ? failure : "rank " + std::to_string(bad) + " failed (see its message)";
    return run;
  }
  try {
    ncclUniqueId id{};
    if (me == 0) {
      const ncclResult_t result = ncclGetUniqueId(&id);
      if (result != ncclSuccess)
        throw NcclFailure(std::string("ncclGetUniqueId: ") + ncclGetErrorString(result));
    }
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    rank->connect(id, mpi.size());
    const auto deadline = [&] { return Clock::now() + options.timeout; };
    for (int i = 0; i < options.warmup; ++i) rank->run_once(deadline());
    rank->wait(deadline(), "warm-up");
    MPI_Barrier(MPI_COMM_WORLD);
    auto start = Clock::now();
    for (int i = 0; i < options.iterations; ++i) rank->run_once(deadline());
    rank->wait(deadline(), "timed iterations");
    const double mine = std::chrono::duration<double>(Clock::now() - start).count() /
                        std::max(1, options.iterations);
    if (run.checked && me < call.ranks) run.wrong = rank->count_wrong(expected[std::size_t(me)]);
    const NcclBaselineCall baseline = nccl_baseline_for(schedule);
    run.baseline = baseline.name;
    double theirs = 0;
    if (options.baseline && baseline.kind != NcclBaselineCall::Kind::none) {
      for (int i = 0; i < options.warmup; ++i) rank->run_baseline(baseline, deadline());
      rank->wait(deadline(), baseline.name + " warm-up");
      MPI_Barrier(MPI_COMM_WORLD);
      start = Clock::now();
      for (int i = 0; i < options.iterations; ++i) rank->run_baseline(baseline, deadline());
      rank->wait(deadline(), baseline.name);
      theirs = std::chrono::duration<double>(Clock::now() - start).count() /
               std::max(1, options.iterations);
    }
    run.seconds = slowest(mine);
    run.baseline_seconds = slowest(theirs);
    std::uint64_t wrong = 0;
    MPI_Allreduce(&run.wrong, &wrong, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    run.wrong = wrong;
    for (const auto& round : plan->rounds)
      for (const RankRound& share : round)
        for (const RoundStep& s : share.group)
          if (s.step.is_send()) run.bytes_sent += s.step.bytes;
  } catch (const std::exception& error) {
    // A failure inside NCCL leaves the peers in calls that cannot be matched any more: report
    // and end the whole job (mpirun stops every rank), never a hang.
    std::fprintf(stderr, "ddlsim real: rank %d: %s\n", me, error.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 5);
  }
  run.ok = run.wrong == 0;
  // Each process knows only its own rank's count, so the message names no ranks.
  if (!run.ok) run.error = wrong_result_message(run.wrong, {}, schedule_error);
  return run;
}

} // namespace ddlsim::real
