#pragma once
// The memory ledger: every buffer a run allocates is recorded under a tag (weights, activations, kv, scratch, comm),
// so a lesson can report current and peak bytes per tag from what it really allocated, not from a formula.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace dlsys {

struct LedgerEntry {
  std::string tag;
  std::int64_t current_bytes = 0;
  std::int64_t peak_bytes = 0;
};

class MemoryLedger {
 public:
  void allocate(const std::string& tag, std::int64_t bytes);
  void release(const std::string& tag, std::int64_t bytes);

  std::int64_t current_bytes(const std::string& tag) const;
  std::int64_t peak_bytes(const std::string& tag) const;
  // Peak of the sum over all tags (not the sum of per-tag peaks).
  std::int64_t total_peak_bytes() const;
  std::int64_t total_current_bytes() const;
  std::vector<LedgerEntry> entries() const;
  // Forget peaks, keep what is still allocated (start of a new measurement).
  void reset_peaks();

 private:
  mutable std::mutex mutex_;
  std::map<std::string, LedgerEntry> by_tag_;
  std::int64_t total_current_ = 0;
  std::int64_t total_peak_ = 0;
};

}  // namespace dlsys
