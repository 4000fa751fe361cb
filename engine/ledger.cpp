#include "engine/ledger.h"

#include <algorithm>
#include <stdexcept>

namespace dlsys {

void MemoryLedger::allocate(const std::string& tag, std::int64_t bytes) {
  std::lock_guard lock(mutex_);
  auto& entry = by_tag_[tag];
  entry.tag = tag;
  entry.current_bytes += bytes;
  entry.peak_bytes = std::max(entry.peak_bytes, entry.current_bytes);
  total_current_ += bytes;
  total_peak_ = std::max(total_peak_, total_current_);
}

void MemoryLedger::release(const std::string& tag, std::int64_t bytes) {
  std::lock_guard lock(mutex_);
  auto it = by_tag_.find(tag);
  if (it == by_tag_.end() || it->second.current_bytes < bytes)
    throw std::logic_error("memory ledger: releasing more '" + tag + "' bytes than were allocated");
  it->second.current_bytes -= bytes;
  total_current_ -= bytes;
}

std::int64_t MemoryLedger::current_bytes(const std::string& tag) const {
  std::lock_guard lock(mutex_);
  auto it = by_tag_.find(tag);
  return it == by_tag_.end() ? 0 : it->second.current_bytes;
}

std::int64_t MemoryLedger::peak_bytes(const std::string& tag) const {
  std::lock_guard lock(mutex_);
  auto it = by_tag_.find(tag);
  return it == by_tag_.end() ? 0 : it->second.peak_bytes;
}

std::int64_t MemoryLedger::total_peak_bytes() const {
  std::lock_guard lock(mutex_);
  return total_peak_;
}

std::int64_t MemoryLedger::total_current_bytes() const {
  std::lock_guard lock(mutex_);
  return total_current_;
}

std::vector<LedgerEntry> MemoryLedger::entries() const {
  std::lock_guard lock(mutex_);
  std::vector<LedgerEntry> out;
  for (const auto& [tag, entry] : by_tag_) out.push_back(entry);
  return out;
}

void MemoryLedger::reset_peaks() {
  std::lock_guard lock(mutex_);
  for (auto& [tag, entry] : by_tag_) entry.peak_bytes = entry.current_bytes;
  total_peak_ = total_current_;
}

}  // namespace dlsys
