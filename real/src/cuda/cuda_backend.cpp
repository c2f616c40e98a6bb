// run_cuda: the host walks every program with the collectives' step rules (StepRunner and
// MessageQueues, as the reference executor does) and enqueues GPU work on the ranks' streams (see
// cuda_backend.hpp). Compiled by the host compiler (C++20: the Schedule's coroutines); the kernels
// are in cuda_kernels.cu.
#include "ddlsim/real/cuda_backend.hpp"

#include "cuda_kernels.hpp"
#include "dtype.hpp"
#include "local_steps.hpp"
#include "result_check.hpp"

#include "ddlsim/collectives/reference.hpp"
#include "ddlsim/collectives/step_runner.hpp"
#include "ddlsim/real/gpu_layout.hpp"

#include <array>
#include <chrono>
#include <cmath>
#include <cuda_runtime_api.h>
#include <memory>
#include <stdexcept>

namespace ddlsim::real {

namespace {

struct CudaFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void must(cudaError_t error, const std::string& what) {
  if (error != cudaSuccess) throw CudaFailure(what + ": " + cudaGetErrorString(error));
}

class VirtualRanks {
public:
  VirtualRanks(const coll::Schedule& schedule, const CudaOptions& options)
      : call_(schedule.call()), ranks_(schedule.ranks()), channels_(schedule.channels()),
        pace_(options.pace), runner_(*this, schedule, 0, schedule.ranks()),
        messages_(ranks_, channels_) {
    int visible = 0;
    must(cudaGetDeviceCount(&visible), "cudaGetDeviceCount");
    const int first = std::min(std::max(options.device, 0), std::max(visible - 1, 0));
    int devices = options.devices > 0 ? options.devices : visible - first;
    devices = std::max(1, std::min(devices, visible - first));
    device_of_ = place_virtual_ranks(ranks_, devices);
    for (int& d : device_of_) d += first;
    devices_used_ = device_of_.empty() ? 0 : device_of_.back() - first + 1;
    // Peer access between every pair of GPUs in use, where the hardware allows it; a reduce
    // across GPUs without it goes through a staging copy on the receiver's GPU.
    peer_ok_.assign(std::size_t(visible * visible), 0);
    for (int a = first; a < first + devices_used_; ++a)
      for (int b = first; b < first + devices_used_; ++b) {
        if (a == b) continue;
        int can = 0;
        must(cudaDeviceCanAccessPeer(&can, a, b), "cudaDeviceCanAccessPeer");
        if (!can) continue;
        use_device(a);
        const cudaError_t error = cudaDeviceEnablePeerAccess(b, 0);
        if (error != cudaSuccess && error != cudaErrorPeerAccessAlreadyEnabled)
          must(error, "cudaDeviceEnablePeerAccess");
        cudaGetLastError(); // clear "already enabled"
        peer_ok_[std::size_t(a * visible + b)] = 1;
      }
    visible_ = visible;
    free_events_.resize(std::size_t(visible));
    buffers_.resize(std::size_t(ranks_));
    sizes_.resize(std::size_t(ranks_));
    streams_.resize(std::size_t(ranks_), nullptr);
    staging_.resize(std::size_t(ranks_), nullptr);
    pace_slots_.resize(std::size_t(ranks_), nullptr);
    pending_sends_.resize(std::size_t(ranks_));
    for (int r = 0; r < ranks_; ++r) {
      workspaces_.push_back(std::make_unique<cuda::CodecWorkspace>());
      use_device(device_of_[std::size_t(r)]);
      must(cudaStreamCreateWithFlags(&streams_[std::size_t(r)], cudaStreamNonBlocking),
           "cudaStreamCreate");
      if (pace_.active())
        must(cudaMalloc(&pace_slots_[std::size_t(r)], sizeof(unsigned long long)), "cudaMalloc");
      for (coll::Buffer b : {coll::Buffer::input, coll::Buffer::output, coll::Buffer::scratch}) {
        const std::uint64_t bytes = schedule.buffer_bytes(r, b);
        sizes_[std::size_t(r)][std::size_t(b)] = bytes;
        void*& pointer = buffers_[std::size_t(r)][std::size_t(b)];
        if (bytes > 0) must(cudaMalloc(&pointer, bytes), "cudaMalloc");
        if (bytes > 0) must(cudaMemset(pointer, 0, bytes), "cudaMemset");
      }
    }
  }
  ~VirtualRanks() {
    for (int d : device_of_) {
      cudaSetDevice(d);
      cudaDeviceSynchronize();
    }
    for (auto& pending : pending_sends_)
      for (PendingSend& send : pending) cudaEventDestroy(send.done);
    for (auto& pool : free_events_)
      for (cudaEvent_t event : pool) cudaEventDestroy(event);
    if (graph_) cudaGraphExecDestroy(graph_);
    for (std::size_t r = 0; r < buffers_.size(); ++r) {
      cudaSetDevice(device_of_[r]);
      for (void* pointer : buffers_[r])
        if (pointer) cudaFree(pointer);
      if (staging_[r]) cudaFree(staging_[r]);
      if (pace_slots_[r]) cudaFree(pace_slots_[r]);
      workspaces_[r].reset();
      if (streams_[r]) cudaStreamDestroy(streams_[r]);
    }
  }
  VirtualRanks(const VirtualRanks&) = delete;
  VirtualRanks& operator=(const VirtualRanks&) = delete;

  void set_input(int rank, const std::vector<double>* values) {
    const std::size_t e = coll::element_size(call_.dtype);
    std::vector<std::byte> host(sizes_[std::size_t(rank)][0]);
    for (std::size_t i = 0; i < host.size() / e; ++i) {
      const double v = values && i < values->size()
                           ? (*values)[i]
                           : double(int((i * 7 + std::size_t(rank) * 3) % 7) - 3);
      coll::detail::store(call_.dtype, &host[i * e], static_cast<float>(v));
    }
    use_device(device_of_[std::size_t(rank)]);
    if (!host.empty())
      must(cudaMemcpy(buffers_[std::size_t(rank)][0], host.data(), host.size(),
                      cudaMemcpyHostToDevice),
           "copy the input to the GPU");
  }

  std::uint64_t count_wrong(int rank, const std::vector<double>& want) {
    std::vector<std::byte> host(sizes_[std::size_t(rank)][1]);
    use_device(device_of_[std::size_t(rank)]);
    if (!host.empty())
      must(cudaMemcpy(host.data(), buffers_[std::size_t(rank)][1], host.size(),
                      cudaMemcpyDeviceToHost),
           "copy the output back");
    return count_wrong_elements(call_.dtype, host.data(), host.size(), want);
  }

  // Enqueues one execution of every program; the GPU runs it asynchronously.
  void run_once() {
    ++walked_;
    messages_.clear();
    runner_.restart();
    runner_.drain();
    for (std::uint32_t id = 0; id < runner_.program_count(); ++id) {
      const auto& program = runner_.program(id);
      if (program.cursor.has_next() || !program.cursor.ended())
        throw CudaFailure("rank " + std::to_string(program.rank) + " ch " +
                          std::to_string(program.channel) +
                          " cannot go on (a deadlock in the schedule)");
    }
    if (!messages_.empty())
      throw CudaFailure("a send or receive has no partner (a malformed schedule)");
    // The next execution may write anything: every sender waits for its receivers first.
    for (int r = 0; r < ranks_; ++r) wait_for_receivers(r, nullptr);
  }

  // Records one execution as a CUDA graph, which execute() then launches: the host's per-transfer
  // CUDA calls (about 1 ms for the 112 transfers of an 8-rank ring) no longer bound small calls,
  // as NCCL's one kernel launch per call does not. Only with every rank on one GPU and after an
  // execution has sized the codecs' workspaces (their growth synchronises, which a capture may
  // not); otherwise execute() enqueues each execution as run_once does.
  void capture() {
    if (devices_used_ != 1) return;
    const int device = device_of_.front();
    use_device(device);
    cudaStream_t origin = streams_.front();
    must(cudaStreamBeginCapture(origin, cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture");
    cudaGraph_t graph = nullptr;
    try {
      // Every rank's stream joins the capture through an event of the origin stream, and the
      // origin waits for all of them at the end.
      cudaEvent_t fork = take_event(device);
      must(cudaEventRecord(fork, origin), "cudaEventRecord");
      for (std::size_t r = 1; r < streams_.size(); ++r)
        must(cudaStreamWaitEvent(streams_[r], fork, 0), "cudaStreamWaitEvent");
      give_event(device, fork);
      run_once();
      for (std::size_t r = 1; r < streams_.size(); ++r) {
        cudaEvent_t join = take_event(device);
        must(cudaEventRecord(join, streams_[r]), "cudaEventRecord");
        must(cudaStreamWaitEvent(origin, join, 0), "cudaStreamWaitEvent");
        give_event(device, join);
      }
    } catch (...) {
      cudaStreamEndCapture(origin, &graph);
      if (graph) cudaGraphDestroy(graph);
      throw;
    }
    must(cudaStreamEndCapture(origin, &graph), "cudaStreamEndCapture");
    const cudaError_t made = cudaGraphInstantiate(&graph_, graph, 0);
    cudaGraphDestroy(graph);
    must(made, "cudaGraphInstantiate");
  }
  void execute() {
    if (!graph_) return run_once();
    use_device(device_of_.front());
    must(cudaGraphLaunch(graph_, streams_.front()), "cudaGraphLaunch");
  }
  // Executions the host walked (run_once, the captured one included): steps() and bytes_sent()
  // count theirs.
  std::uint64_t walked() const { return walked_; }

  void synchronize() {
    for (int r = 0; r < ranks_; ++r) {
      use_device(device_of_[std::size_t(r)]);
      must(cudaStreamSynchronize(streams_[std::size_t(r)]), "cudaStreamSynchronize");
    }
  }
  // "" or the data-dependent failures the codec kernels counted (a top-k index outside dst).
  std::string codec_errors() {
    std::uint64_t total = 0;
    for (int r = 0; r < ranks_; ++r) {
      use_device(device_of_[std::size_t(r)]);
      std::uint32_t count = 0;
      must(workspaces_[std::size_t(r)]->error_count(streams_[std::size_t(r)], count),
           "read the codec error count");
      total += count;
    }
    return total == 0 ? ""
                      : std::to_string(total) +
                            " top-k pairs held an index outside their destination (skipped)";
  }
  int devices_used() const { return devices_used_; }
  std::uint64_t steps() const { return runner_.steps_started(); }
  std::uint64_t bytes_sent() const { return bytes_sent_; }

private:
  friend class coll::StepRunner<VirtualRanks>;
  struct Started {
    std::uint32_t program = 0, index = 0;
    coll::Step step;
    cudaEvent_t ready = nullptr; // a send's: recorded on the sender's stream when it started
  };

  void* at(int rank, const coll::BufferRange& range) const {
    auto* base = static_cast<std::byte*>(buffers_[std::size_t(rank)][std::size_t(range.buffer)]);
    return base ? base + range.offset : nullptr;
  }

  std::string where(const Started& s) const {
    const auto& program = runner_.program(s.program);
    return coll::step_place(program.rank, program.channel, s.index, s.step);
  }

  // StepRunner's driver: a malformed step, and a step that may start.
  [[noreturn]] void reject_step(const std::string& message) const { throw CudaFailure(message); }
  void start_step(coll::StepRef ref, const coll::Step& step) {
    Started s{ref.program, ref.index, step};
    const int rank = runner_.program(s.program).rank;
    if (step.is_local()) {
      execute_local(s);
      return runner_.complete(ref);
    }
    if (step.is_send()) {
      // The bytes are ready once the sender's stream has run what this send depends on, all
      // enqueued before it started. Recorded now: by the time its receive starts, the stream may
      // hold later work the send does not depend on (in a ring, the rank's own receive of the
      // same step), and waiting for that would run the ranks' transfers one after another.
      s.ready = take_event(device_of_[std::size_t(rank)]);
      must(cudaEventRecord(s.ready, streams_[std::size_t(rank)]), where(s));
      if (const auto receive = messages_.match_send(rank, step.peer, step.channel, s))
        transfer(s, *receive);
    } else {
      if (const auto send = messages_.match_receive(step.peer, rank, step.channel, s))
        transfer(*send, s);
    }
  }

  // A send's bytes stay in the sender's buffer until its receiver has moved or reduced them
  // (the reduce kernel reads them in place). Rather than stop the sender's stream at once, which
  // would chain every rank's next receive behind its successor's and run a ring's transfers one
  // after another, the sender's stream waits for a receiver only before it writes over the bytes
  // that receiver reads (`written`), or, with no range, for all of them (the end of an execution).
  struct PendingSend {
    coll::BufferRange src;
    cudaEvent_t done = nullptr;
    int done_device = 0;
  };

  // Events are reused: a wait holds the event's record at the time it was enqueued, so an event
  // may be recorded again once every wait on it is enqueued (CUDA's cudaStreamWaitEvent). Creating
  // and destroying two events per transfer cost more host time than a small transfer takes.
  cudaEvent_t take_event(int device) {
    auto& pool = free_events_[std::size_t(device)];
    if (!pool.empty()) {
      cudaEvent_t event = pool.back();
      pool.pop_back();
      return event;
    }
    use_device(device);
    cudaEvent_t event = nullptr;
    must(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
    return event;
  }
  void give_event(int device, cudaEvent_t event) {
    free_events_[std::size_t(device)].push_back(event);
  }
  // cudaSetDevice only when the device changes: with every virtual rank on one GPU it never does.
  void use_device(int device) {
    if (device == current_device_) return;
    must(cudaSetDevice(device), "cudaSetDevice");
    current_device_ = device;
  }
  static bool overlap(const coll::BufferRange& a, const coll::BufferRange& b) {
    return a.buffer == b.buffer && a.offset < b.end() && b.offset < a.end();
  }
  void wait_for_receivers(int rank, const coll::BufferRange* written) {
    auto& pending = pending_sends_[std::size_t(rank)];
    std::size_t kept = 0;
    for (PendingSend& send : pending) {
      if (written == nullptr || overlap(send.src, *written)) {
        use_device(device_of_[std::size_t(rank)]);
        must(cudaStreamWaitEvent(streams_[std::size_t(rank)], send.done, 0), "cudaStreamWaitEvent");
        give_event(send.done_device, send.done);
      } else {
        pending[kept++] = send;
      }
    }
    pending.resize(kept);
  }

  void execute_local(const Started& s) {
    const int rank = runner_.program(s.program).rank;
    const coll::Step& step = s.step;
    wait_for_receivers(rank, &step.dst);
    use_device(device_of_[std::size_t(rank)]);
    try {
      cuda::enqueue_local_step(step, call_, at(rank, step.src), at(rank, step.aux),
                               at(rank, step.dst), streams_[std::size_t(rank)],
                               *workspaces_[std::size_t(rank)]);
    } catch (const cuda::StepFailure& failure) {
      throw CudaFailure(where(s) + ": " + failure.what());
    }
  }

  void transfer(const Started& send, const Started& receive) {
    const int from = runner_.program(send.program).rank;
    const int to = runner_.program(receive.program).rank;
    if (send.step.bytes != receive.step.bytes)
      throw CudaFailure(where(send) + ": its receive " + where(receive) + " expects other bytes");
    const int from_device = device_of_[std::size_t(from)], to_device = device_of_[std::size_t(to)];
    cudaStream_t receiver = streams_[std::size_t(to)];
    cudaEvent_t done = nullptr;
    wait_for_receivers(to, &receive.step.dst);
    // The receiver waits for the send's `ready` and moves or reduces; the sender's stream waits
    // for the receiver's `done` only before it writes over what was sent (PendingSend).
    done = take_event(to_device);
    use_device(to_device); // the kernels below launch on the receiver's GPU
    must(cudaStreamWaitEvent(receiver, send.ready, 0), where(receive));
    const coll::Step& r = receive.step;
    unsigned long long* slot = static_cast<unsigned long long*>(pace_slots_[std::size_t(to)]);
    if (pace_.active()) must(cuda::launch_stamp(slot, receiver), where(receive));
    const void* incoming = at(from, send.step.src);
    const bool across = from_device != to_device;
    if (r.kind == coll::StepKind::recv) {
      if (r.bytes > 0)
        must(across ? cudaMemcpyPeerAsync(at(to, r.dst), to_device, incoming, from_device, r.bytes,
                                          receiver)
                    : cudaMemcpyAsync(at(to, r.dst), incoming, r.bytes, cudaMemcpyDeviceToDevice,
                                      receiver),
             where(receive));
    } else {
      if (across && !peer_ok_[std::size_t(to_device * visible_ + from_device)] && r.bytes > 0) {
        // No peer access: bring the operand over first.
        void*& staging = staging_[std::size_t(to)];
        if (staging_bytes_.size() < staging_.size()) staging_bytes_.resize(staging_.size(), 0);
        if (staging_bytes_[std::size_t(to)] < r.bytes) {
          must(cudaStreamSynchronize(receiver), "cudaStreamSynchronize");
          if (staging) cudaFree(staging);
          must(cudaMalloc(&staging, r.bytes), "cudaMalloc");
          staging_bytes_[std::size_t(to)] = r.bytes;
        }
        must(cudaMemcpyPeerAsync(staging, to_device, incoming, from_device, r.bytes, receiver),
             where(receive));
        incoming = staging;
      }
      try {
        cuda::enqueue_combine(call_, at(to, r.src), incoming, at(to, r.dst), r.bytes, receiver);
      } catch (const cuda::StepFailure& failure) {
        throw CudaFailure(where(receive) + ": " + failure.what());
      }
    }
    if (pace_.active())
      must(cuda::launch_pace(slot, paced_copy_ns(pace_, r.bytes), receiver), where(receive));
    must(cudaEventRecord(done, receiver), where(receive));
    pending_sends_[std::size_t(from)].push_back({send.step.src, done, to_device});
    give_event(from_device, send.ready);
    bytes_sent_ += send.step.bytes;
    runner_.complete({send.program, send.index});
    runner_.complete({receive.program, receive.index});
  }

  coll::CollectiveCall call_;
  int ranks_, channels_;
  std::vector<std::array<void*, 3>> buffers_;
  std::vector<std::array<std::uint64_t, 3>> sizes_;
  std::vector<cudaStream_t> streams_;
  LinkPace pace_;
  std::vector<int> device_of_; // per rank
  int devices_used_ = 1, visible_ = 1;
  std::vector<std::uint8_t> peer_ok_; // [to * visible + from]: to's kernels read from's memory
  std::vector<void*> staging_, pace_slots_;
  std::vector<std::uint64_t> staging_bytes_;
  std::vector<std::vector<PendingSend>> pending_sends_; // per sending rank
  std::vector<std::vector<cudaEvent_t>> free_events_;   // per device
  int current_device_ = -1;
  cudaGraphExec_t graph_ = nullptr; // one execution, once captured
  std::uint64_t walked_ = 0;
  std::vector<std::unique_ptr<cuda::CodecWorkspace>> workspaces_;
  coll::StepRunner<VirtualRanks> runner_; // programs numbered rank * channels + channel
  coll::MessageQueues<Started> messages_;
  std::uint64_t bytes_sent_ = 0;
};

} // namespace

std::string cuda_unavailable_reason() {
  int count = 0;
  if (cudaError_t error = cudaGetDeviceCount(&count); error != cudaSuccess)
    return std::string("cudaGetDeviceCount: ") + cudaGetErrorString(error);
  return count == 0 ? "the CUDA runtime sees no GPU" : "";
}

CudaRun run_cuda(const coll::Schedule& schedule, const CudaOptions& options) {
  CudaRun run;
  const coll::CollectiveCall& call = schedule.call();
  if (const std::string why = pace_problem(options.pace); !why.empty()) {
    run.error = "pace: " + why;
    return run;
  }
  if (coll::has_switch_steps(schedule)) {
    // NVLS needs multimem loads and stores on an NVSwitch multicast object; this backend moves
    // bytes with device-to-device copies only.
    run.error = "algorithm " + call.algorithm +
                ": the cuda backend cannot run in-switch reduction (NVLS switch steps need "
                "multimem instructions on an NVSwitch multicast object, which it does not use); "
                "simulate it (ddlsim run) or choose an algorithm without NVLS (e.g. ring)";
    return run;
  }
  if (const std::string why = cuda_unavailable_reason(); !why.empty()) {
    run.error = why;
    return run;
  }
  std::vector<std::vector<double>> inputs, expected;
  std::string schedule_error;
  run.checked = std::uint64_t(schedule.ranks()) * call.bytes <= options.check_limit_bytes;
  if (run.checked) {
    coll::RealRunExpectation reference = coll::expected_real_outputs(schedule);
    if (!reference.status.ok) {
      run.error = "the reference executor rejects this schedule: " + reference.status.error;
      return run;
    }
    inputs = std::move(reference.inputs);
    expected = std::move(reference.outputs);
    schedule_error = std::move(reference.schedule_error);
  }
  try {
    VirtualRanks ranks(schedule, options);
    run.devices = ranks.devices_used();
    for (int r = 0; r < schedule.ranks(); ++r)
      ranks.set_input(r, run.checked && r < call.ranks ? &inputs[std::size_t(r)] : nullptr);
    for (int i = 0; i < options.warmup; ++i) ranks.run_once();
    ranks.synchronize();
    if (options.warmup > 0) ranks.capture();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < options.iterations; ++i) ranks.execute();
    ranks.synchronize();
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
                  std::max(1, options.iterations);
    // Steps and bytes of the executions the host walked (a graph launch walks none).
    const std::uint64_t walked = std::max<std::uint64_t>(1, ranks.walked());
    run.steps = ranks.steps() / walked;
    run.bytes_sent = ranks.bytes_sent() / walked;
    if (const std::string codec = ranks.codec_errors(); !codec.empty()) {
      run.error = codec;
      return run;
    }
    std::vector<int> wrong_ranks;
    if (run.checked)
      for (int r = 0; r < call.ranks; ++r)
        if (const std::uint64_t wrong = ranks.count_wrong(r, expected[std::size_t(r)]); wrong) {
          run.wrong += wrong;
          wrong_ranks.push_back(r);
        }
    run.ok = run.wrong == 0;
    if (!run.ok) run.error = wrong_result_message(run.wrong, wrong_ranks, schedule_error);
  } catch (const CudaFailure& failure) {
    run.error = failure.what();
  }
  return run;
}

} // namespace ddlsim::real
