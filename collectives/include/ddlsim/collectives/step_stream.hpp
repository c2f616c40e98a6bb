// StepStream: a C++20 coroutine generator of Steps, so that a generator reads like the algorithm
// and a Schedule never has to be held whole in memory:
//
//   StepStream ring_program(...) {
//     for (int s = 0; s < p - 1; ++s) { co_yield send_step(...); co_yield recv_step(...); }
//   }
//
// An executor pulls steps one at a time with next(); memory is one coroutine frame per program.
#pragma once

#include "ddlsim/collectives/step.hpp"

#include <coroutine>
#include <exception>
#include <utility>

namespace ddlsim::coll {

class StepStream {
public:
  struct promise_type {
    Step current;
    std::exception_ptr error;

    StepStream get_return_object() {
      return StepStream(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    std::suspend_always initial_suspend() noexcept { return {}; }
    std::suspend_always final_suspend() noexcept { return {}; }
    std::suspend_always yield_value(const Step& step) noexcept {
      current = step;
      return {};
    }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { error = std::current_exception(); }
  };

  StepStream() = default;
  explicit StepStream(std::coroutine_handle<promise_type> handle) : handle_(handle) {}
  StepStream(StepStream&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  StepStream& operator=(StepStream&& other) noexcept {
    if (this != &other) {
      if (handle_) handle_.destroy();
      handle_ = std::exchange(other.handle_, {});
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
    if (!handle_ || handle_.done()) return false;
    handle_.resume();
    if (handle_.promise().error) std::rethrow_exception(std::exchange(handle_.promise().error, {}));
    if (handle_.done()) return false;
    step = handle_.promise().current;
    return true;
  }

private:
  std::coroutine_handle<promise_type> handle_;
};

} // namespace ddlsim::coll
