// RingWindow: a FIFO with random access, on one power-of-two array that grows when full and is
// never freed while in use. An executor's window of steps in flight moves forward step by step;
// std::deque would allocate and free a block every few steps.
#pragma once

#include <cstddef>
#include <vector>

namespace ddlsim::sim {

template <typename T> class RingWindow {
public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return items_[(head_ + i) & mask_]; }
  const T& operator[](std::size_t i) const { return items_[(head_ + i) & mask_]; }
  T& front() { return items_[head_]; }

  void push_back(const T& item) {
    if (size_ == items_.size()) grow();
    items_[(head_ + size_) & mask_] = item;
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) & mask_;
    --size_;
  }

private:
  void grow() {
    std::vector<T> bigger(items_.empty() ? 8 : items_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = (*this)[i];
    items_ = std::move(bigger);
    head_ = 0;
    mask_ = items_.size() - 1;
  }

  std::vector<T> items_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
  std::size_t mask_ = 0;
};

} // namespace ddlsim::sim
