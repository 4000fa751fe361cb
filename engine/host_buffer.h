#pragma once
// A host array that records itself in a MemoryLedger for as long as it lives. 64-byte aligned for vector loads.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <span>
#include <string>
#include <utility>

#include "engine/ledger.h"

namespace dlsys {

template <typename T>
class HostBuffer {
 public:
  HostBuffer() = default;
  HostBuffer(MemoryLedger& ledger, std::string tag, std::size_t count)
      : ledger_(&ledger), tag_(std::move(tag)), count_(count) {
    const std::size_t bytes = ((count * sizeof(T) + 63) / 64) * 64;
    data_ = static_cast<T*>(std::aligned_alloc(64, bytes == 0 ? 64 : bytes));
    if (data_ == nullptr) throw std::bad_alloc();
    ledger_->allocate(tag_, size_bytes());
  }
  ~HostBuffer() { reset(); }
  HostBuffer(HostBuffer&& other) noexcept { swap(other); }
  HostBuffer& operator=(HostBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      swap(other);
    }
    return *this;
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return count_; }
  std::int64_t size_bytes() const { return static_cast<std::int64_t>(count_ * sizeof(T)); }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  std::span<T> span() { return {data_, count_}; }
  std::span<const T> span() const { return {data_, count_}; }

 private:
  void reset() {
    if (data_ != nullptr) {
      ledger_->release(tag_, size_bytes());
      std::free(data_);
      data_ = nullptr;
    }
  }
  void swap(HostBuffer& other) noexcept {
    std::swap(ledger_, other.ledger_);
    std::swap(tag_, other.tag_);
    std::swap(count_, other.count_);
    std::swap(data_, other.data_);
  }
  MemoryLedger* ledger_ = nullptr;
  std::string tag_;
  std::size_t count_ = 0;
  T* data_ = nullptr;
};

}  // namespace dlsys
