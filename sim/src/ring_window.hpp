// RingWindow: a FIFO with random access, on one power-of-two array that grows when full and is
// never freed while in use. An executor's window of steps in flight moves forward step by step;
// std::deque would allocate and free a block every few steps. 24 bytes beside its array (a
// vector and three sizes took 48), so that a program's state keeps one inline.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ddlsim::sim {

template <typename T> class RingWindow {
public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) { return items_[(head_ + i) & mask_]; }
  const T& operator[](std::size_t i) const { return items_[(head_ + i) & mask_]; }
  T& front() { return items_[head_]; }
  const T& front() const { return items_[head_]; }

  void push_back(const T& item) {
    if (items_ == nullptr || size_ == mask_ + 1) grow();
    items_[(head_ + size_) & mask_] = item;
    ++size_;
  }
  void pop_front() {
    head_ = (head_ + 1) & mask_;
    --size_;
  }
  // Removes entry i, moving the later ones forward (O(size - i)).
  void erase(std::size_t i) {
    for (std::size_t j = i; j + 1 < size_; ++j) (*this)[j] = (*this)[j + 1];
    --size_;
  }

private:
  void grow() {
    const std::uint32_t capacity = items_ == nullptr ? 8 : (mask_ + 1) * 2;
    auto bigger = std::make_unique<T[]>(capacity);
    for (std::uint32_t i = 0; i < size_; ++i) bigger[i] = (*this)[i];
    items_ = std::move(bigger);
    head_ = 0;
    mask_ = capacity - 1;
  }

  std::unique_ptr<T[]> items_;
  std::uint32_t head_ = 0;
  std::uint32_t size_ = 0;
  std::uint32_t mask_ = 0;
};

} // namespace ddlsim::sim
