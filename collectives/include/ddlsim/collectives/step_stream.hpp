// StepStream: a C++20 coroutine generator of Steps, so that a generator reads like the algorithm
// and a Schedule never has to be held whole in memory:
//
//   StepStream ring_program(...) {
//     for (int s = 0; s < p - 1; ++s) { co_yield send_step(...); co_yield recv_step(...); }
//   }
//
// An executor pulls steps one at a time with next(); memory is one coroutine frame per program.
//
// Speed: a co_yield does not suspend the generator until kBatch steps are buffered in its
// promise, and next() hands them out from there. An executor running thousands of programs (the
// analytic engine at 16k ranks) resumes each generator long after the others have run, when its
// frame (2 to 5 KiB with g++ 12, which gives every temporary of every co_yield its own slot) has
// left the cache; resuming once per kBatch steps instead of once per step spares most of those
// cache misses. Steps still come out in the same order, and an exception thrown by the generator
// surfaces after the steps yielded before it.
#pragma once

#include "ddlsim/collectives/step.hpp"

#include <array>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <utility>

namespace ddlsim::coll {

namespace detail {
// Where generators' coroutine frames live (frame_arena.cpp): packed into huge-page chunks, so
// that an executor resuming thousands of generators misses the translation buffer less.
void* allocate_frame(std::size_t size);
void free_frame(void* frame, std::size_t size) noexcept;
} // namespace detail

class StepStream {
public:
  static constexpr int kBatch = 8;

  struct promise_type {
    int count = 0; // steps in buffer
    std::exception_ptr error;
    std::array<Step, kBatch> buffer;

    // Suspends the generator only once the buffer is full.
    struct YieldAwaiter {
      bool full;
      bool await_ready() const noexcept { return !full; }
      void await_suspend(std::coroutine_handle<>) const noexcept {}
      void await_resume() const noexcept {}
    };

    static void* operator new(std::size_t size) { return detail::allocate_frame(size); }
    static void operator delete(void* frame, std::size_t size) noexcept {
      detail::free_frame(frame, size);
    }
    StepStream get_return_object() {
      return StepStream(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    YieldAwaiter yield_value(const Step& step) noexcept {
      buffer[static_cast<std::size_t>(count++)] = step;
      return YieldAwaiter{count == kBatch};
    }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { error = std::current_exception(); }
  };

  StepStream() = default;
  explicit StepStream(std::coroutine_handle<promise_type> handle) : handle_(handle) {}
  StepStream(StepStream&& other) noexcept
      : handle_(std::exchange(other.handle_, {})), count_(std::exchange(other.count_, 0)),
        read_(std::exchange(other.read_, 0)) {}
  StepStream& operator=(StepStream&& other) noexcept {
    if (this != &other) {
      if (handle_) handle_.destroy();
      handle_ = std::exchange(other.handle_, {});
      count_ = std::exchange(other.count_, 0);
      read_ = std::exchange(other.read_, 0);
    }
    return *this;
  }
  StepStream(const StepStream&) = delete;
  StepStream& operator=(const StepStream&) = delete;
  ~StepStream() {
    if (handle_) handle_.destroy();
  }

  // Writes the next step into `step` and returns true, or returns false at the end. Rethrows an
  // exception thrown by the generator.
  bool next(Step& step) {
    const Step* current = next();
    if (current == nullptr) return false;
    step = *current;
    return true;
  }
  // The next step in place, valid until the following call, or nullptr at the end. An executor
  // that keeps only a few fields of each step saves a copy of the whole Step this way.
  const Step* next() {
    if (read_ == count_) {
      if (!handle_) return nullptr;
      promise_type& promise = handle_.promise();
      if (promise.error) std::rethrow_exception(std::exchange(promise.error, {}));
      if (handle_.done()) return nullptr;
      promise.count = 0;
      handle_.resume();
      count_ = promise.count;
      read_ = 0;
      if (count_ == 0) {
        if (promise.error) std::rethrow_exception(std::exchange(promise.error, {}));
        return nullptr; // the generator returned
      }
    }
    return &handle_.promise().buffer[static_cast<std::size_t>(read_++)];
  }

  // A hint only: brings into cache what the next two calls to next() read. An executor that
  // starts a step usually pulls the one after it at once (the ring's send, then its receive), and
  // a Step spans two cache lines, so both steps are fetched whole. When the buffer is used up,
  // the next call resumes the generator, which first reads the promise's header instead.
  void prefetch() const {
    if (!handle_) return;
    const promise_type& promise = handle_.promise();
    if (read_ == count_) {
      __builtin_prefetch(&promise, 0, 3);
      asm volatile(""); // see below
      return;
    }
    const auto* first = reinterpret_cast<const char*>(&promise.buffer[std::size_t(read_)]);
    const int ahead = read_ + 1 < count_ ? 2 : 1;
    const auto* end = first + ahead * sizeof(Step);
    for (const char* line = first; line < end; line += 64) __builtin_prefetch(line, 0, 3);
    __builtin_prefetch(end - 1, 0, 3);
    // Without a visible effect GCC 12 may take this function for one without side effects and
    // delete the calls to it (ipa-pure-const); the empty volatile asm keeps them.
    asm volatile("");
  }

private:
  std::coroutine_handle<promise_type> handle_;
  // Steps of the promise's buffer, and those handed out: kept here, beside the handle, so that
  // handing out a buffered step touches only the step in the frame.
  std::int32_t count_ = 0;
  std::int32_t read_ = 0;
};

} // namespace ddlsim::coll
