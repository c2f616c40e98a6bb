// run_cuda: the host walks every program like the reference executor and enqueues GPU work on
// the ranks' streams (see cuda_backend.hpp). Compiled by the host compiler (C++20: the Schedule's
// coroutines); the kernels are in cuda_kernels.cu.
#include "ddlsim/real/cuda_backend.hpp"

#include "cuda_kernels.hpp"
#include "dtype.hpp"
#include "step_rules.hpp"

#include "ddlsim/collectives/reference.hpp"

#include <array>
#include <chrono>
#include <cmath>
#include <cuda_runtime_api.h>
#include <deque>
#include <map>
#include <stdexcept>
#include <tuple>

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
  VirtualRanks(const coll::Schedule& schedule, int device)
      : schedule_(schedule), call_(schedule.call()), ranks_(schedule.ranks()),
        channels_(schedule.channels()) {
    must(cudaSetDevice(device), "cudaSetDevice");
    buffers_.resize(std::size_t(ranks_));
    sizes_.resize(std::size_t(ranks_));
    streams_.resize(std::size_t(ranks_), nullptr);
    for (int r = 0; r < ranks_; ++r) {
      must(cudaStreamCreateWithFlags(&streams_[std::size_t(r)], cudaStreamNonBlocking),
           "cudaStreamCreate");
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
    cudaDeviceSynchronize();
    for (auto& rank : buffers_)
      for (void* pointer : rank)
        if (pointer) cudaFree(pointer);
    for (cudaStream_t stream : streams_)
      if (stream) cudaStreamDestroy(stream);
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
    if (!host.empty())
      must(cudaMemcpy(buffers_[std::size_t(rank)][0], host.data(), host.size(),
                      cudaMemcpyHostToDevice),
           "copy the input to the GPU");
  }

  std::uint64_t count_wrong(int rank, const std::vector<double>& want) {
    const std::size_t e = coll::element_size(call_.dtype);
    std::vector<std::byte> host(sizes_[std::size_t(rank)][1]);
    if (!host.empty())
      must(cudaMemcpy(host.data(), buffers_[std::size_t(rank)][1], host.size(),
                      cudaMemcpyDeviceToHost),
           "copy the output back");
    if (host.size() / e != want.size()) return std::max(host.size() / e, want.size());
    std::uint64_t wrong = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      const double got = coll::detail::load(call_.dtype, &host[i * e]);
      if (!(got == want[i] || (std::isnan(got) && std::isnan(want[i])))) ++wrong;
    }
    return wrong;
  }

  // Enqueues one execution of every program; the GPU runs it asynchronously.
  void run_once() {
    programs_.clear();
    programs_.resize(std::size_t(ranks_ * channels_));
    queues_.clear();
    ready_.clear();
    for (int r = 0; r < ranks_; ++r)
      for (int c = 0; c < channels_; ++c) {
        Program& program = programs_[std::size_t(r * channels_ + c)];
        program.rank = r;
        program.channel = c;
        program.stream = schedule_.program(r, c);
        program.queued = true;
        ready_.push_back(std::uint32_t(r * channels_ + c));
      }
    while (!ready_.empty()) {
      const std::uint32_t id = ready_.front();
      ready_.pop_front();
      programs_[id].queued = false;
      advance(id);
    }
    for (const Program& program : programs_)
      if (program.has_next || !program.ended)
        throw CudaFailure("rank " + std::to_string(program.rank) + " ch " +
                          std::to_string(program.channel) +
                          " cannot go on (a deadlock in the schedule)");
    for (const auto& [key, queue] : queues_)
      if (!queue.sends.empty() || !queue.receives.empty())
        throw CudaFailure("a send or receive has no partner (a malformed schedule)");
  }

  void synchronize() { must(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }
  std::uint64_t steps() const { return steps_; }
  std::uint64_t bytes_sent() const { return bytes_sent_; }

private:
  struct Program {
    int rank = 0, channel = 0;
    coll::StepStream stream;
    coll::Step next{};
    bool has_next = false, ended = false, queued = false;
    std::vector<std::uint8_t> done;
  };
  struct Started {
    std::uint32_t program = 0, index = 0;
    coll::Step step;
  };
  struct Queue {
    std::deque<Started> sends, receives;
  };

  void* at(int rank, const coll::BufferRange& range) const {
    auto* base = static_cast<std::byte*>(buffers_[std::size_t(rank)][std::size_t(range.buffer)]);
    return base ? base + range.offset : nullptr;
  }

  std::string where(const Started& s) const {
    const Program& program = programs_[s.program];
    return coll::detail::to_string(
               coll::detail::StepPlace{program.rank, program.channel, s.index}) +
           " (" + coll::detail::describe(s.step) + ")";
  }

  void advance(std::uint32_t id) {
    Program& program = programs_[id];
    for (;;) {
      const auto index = std::uint32_t(program.done.size());
      if (!program.has_next) {
        if (program.ended || !program.stream.next(program.next)) {
          program.ended = true;
          return;
        }
        program.has_next = true;
        const coll::detail::RankBuffers sizes{sizes_[std::size_t(program.rank)][0],
                                              sizes_[std::size_t(program.rank)][1],
                                              sizes_[std::size_t(program.rank)][2]};
        const std::string problem = coll::detail::step_problem(
            program.next, {program.rank, program.channel, index}, ranks_, sizes, call_.dtype);
        if (!problem.empty()) throw CudaFailure(where({id, index, program.next}) + ": " + problem);
      }
      for (std::size_t d = 0; d < program.next.dep_count; ++d)
        if (!program.done[program.next.deps[d]]) return;
      if (program.next.has_wait()) {
        const Program& other =
            programs_[std::size_t(program.rank * channels_ + program.next.wait_channel)];
        if (!(program.next.wait_step < other.done.size() && other.done[program.next.wait_step]))
          return;
      }
      program.has_next = false;
      program.done.push_back(0);
      ++steps_;
      start({id, index, program.next});
    }
  }

  void start(const Started& s) {
    const int rank = programs_[s.program].rank;
    const coll::Step& step = s.step;
    if (step.is_local()) {
      execute_local(s);
      return complete(s.program, s.index);
    }
    const auto key = step.is_send() ? std::tuple{rank, step.peer, int(step.channel)}
                                    : std::tuple{step.peer, rank, int(step.channel)};
    Queue& queue = queues_[key];
    if (step.is_send()) {
      if (queue.receives.empty()) return queue.sends.push_back(s);
      const Started receive = queue.receives.front();
      queue.receives.pop_front();
      transfer(s, receive);
    } else {
      if (queue.sends.empty()) return queue.receives.push_back(s);
      const Started send = queue.sends.front();
      queue.sends.pop_front();
      transfer(send, s);
    }
  }

  void execute_local(const Started& s) {
    const int rank = programs_[s.program].rank;
    const coll::Step& step = s.step;
    cudaStream_t stream = streams_[std::size_t(rank)];
    const int dtype = static_cast<int>(call_.dtype);
    const std::size_t n = step.dst.bytes / coll::element_size(call_.dtype);
    switch (step.kind) {
    case coll::StepKind::copy:
      if (step.dst.bytes > 0)
        must(cudaMemcpyAsync(at(rank, step.dst), at(rank, step.src), step.dst.bytes,
                             cudaMemcpyDeviceToDevice, stream),
             where(s));
      return;
    case coll::StepKind::reduce:
      refuse_adasum(s);
      must(cuda::launch_add(dtype, at(rank, step.dst), at(rank, step.src), at(rank, step.dst), n,
                            stream),
           where(s));
      return;
    case coll::StepKind::scale:
      must(cuda::launch_scale(dtype, at(rank, step.src), at(rank, step.dst), n, step.param, stream),
           where(s));
      return;
    case coll::StepKind::compute:
      must(cuda::launch_spin(std::llround(step.param / 1000), stream), where(s));
      return;
    default:
      throw CudaFailure(where(s) + ": the cuda backend has no kernel for " +
                        std::string(coll::to_string(step.codec)) +
                        " compress / decompress yet (run it with --backend host)");
    }
  }

  void refuse_adasum(const Started& s) const {
    if (call_.reduction == coll::Reduction::adasum)
      throw CudaFailure(where(s) + ": the cuda backend has no adasum kernel yet");
  }

  void transfer(const Started& send, const Started& receive) {
    const int from = programs_[send.program].rank, to = programs_[receive.program].rank;
    if (send.step.bytes != receive.step.bytes)
      throw CudaFailure(where(send) + ": its receive " + where(receive) + " expects other bytes");
    cudaStream_t sender = streams_[std::size_t(from)], receiver = streams_[std::size_t(to)];
    cudaEvent_t ready = nullptr, done = nullptr;
    must(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), "cudaEventCreate");
    must(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "cudaEventCreate");
    // The sender's bytes are ready once its stream reached this point (the send's deps were
    // enqueued before it); the receiver waits for that, moves or reduces, and the sender waits
    // for the receiver before it may overwrite what was sent.
    must(cudaEventRecord(ready, sender), where(send));
    must(cudaStreamWaitEvent(receiver, ready, 0), where(receive));
    const coll::Step& r = receive.step;
    if (r.kind == coll::StepKind::recv) {
      if (r.bytes > 0)
        must(cudaMemcpyAsync(at(to, r.dst), at(from, send.step.src), r.bytes,
                             cudaMemcpyDeviceToDevice, receiver),
             where(receive));
    } else {
      refuse_adasum(receive);
      must(cuda::launch_add(static_cast<int>(call_.dtype), at(to, r.src), at(from, send.step.src),
                            at(to, r.dst), r.bytes / coll::element_size(call_.dtype), receiver),
           where(receive));
    }
    must(cudaEventRecord(done, receiver), where(receive));
    must(cudaStreamWaitEvent(sender, done, 0), where(send));
    cudaEventDestroy(ready); // released by the runtime once the waits are done
    cudaEventDestroy(done);
    bytes_sent_ += send.step.bytes;
    complete(send.program, send.index);
    complete(receive.program, receive.index);
  }

  void complete(std::uint32_t id, std::uint32_t index) {
    Program& program = programs_[id];
    program.done[index] = 1;
    const auto enqueue = [this](std::uint32_t p) {
      if (programs_[p].queued) return;
      programs_[p].queued = true;
      ready_.push_back(p);
    };
    enqueue(id);
    const auto first = std::uint32_t(program.rank * channels_);
    for (std::uint32_t other = first; other < first + std::uint32_t(channels_); ++other)
      if (programs_[other].has_next && programs_[other].next.has_wait()) enqueue(other);
  }

  const coll::Schedule& schedule_;
  coll::CollectiveCall call_;
  int ranks_, channels_;
  std::vector<std::array<void*, 3>> buffers_;
  std::vector<std::array<std::uint64_t, 3>> sizes_;
  std::vector<cudaStream_t> streams_;
  std::vector<Program> programs_;
  std::map<std::tuple<int, int, int>, Queue> queues_;
  std::deque<std::uint32_t> ready_;
  std::uint64_t steps_ = 0, bytes_sent_ = 0;
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
  if (const std::string why = cuda_unavailable_reason(); !why.empty()) {
    run.error = why;
    return run;
  }
  std::vector<std::vector<double>> inputs, expected;
  run.checked = std::uint64_t(schedule.ranks()) * call.bytes <= options.check_limit_bytes;
  if (run.checked) {
    inputs = coll::reference_inputs(call, {});
    coll::ReferenceRun reference = coll::execute_reference(schedule, inputs);
    if (!reference.status.ok) {
      run.error = "the reference executor rejects this schedule: " + reference.status.error;
      return run;
    }
    expected = std::move(reference.outputs);
  }
  try {
    VirtualRanks ranks(schedule, options.device);
    for (int r = 0; r < schedule.ranks(); ++r)
      ranks.set_input(r, run.checked && r < call.ranks ? &inputs[std::size_t(r)] : nullptr);
    for (int i = 0; i < options.warmup; ++i) ranks.run_once();
    ranks.synchronize();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < options.iterations; ++i) ranks.run_once();
    ranks.synchronize();
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
                  std::max(1, options.iterations);
    const auto runs = std::uint64_t(options.warmup + options.iterations);
    run.steps = ranks.steps() / runs;
    run.bytes_sent = ranks.bytes_sent() / runs;
    if (run.checked)
      for (int r = 0; r < call.ranks; ++r)
        run.wrong += ranks.count_wrong(r, expected[std::size_t(r)]);
    run.ok = run.wrong == 0;
    if (!run.ok)
      run.error = std::to_string(run.wrong) + " output elements differ from the reference";
  } catch (const CudaFailure& failure) {
    run.error = failure.what();
  }
  return run;
}

} // namespace ddlsim::real
