#pragma once
// The CPU model (model.h) behind the scheduler's interface (backend.h).
#include <memory>
#include <vector>

#include "engine/ledger.h"
#include "kernels/serving/backend.h"
#include "kernels/serving/model.h"

namespace dlsys::serving {

// The CPU model with `slots` caches of its own (recorded under "kv").
class CpuBackend final : public ModelBackend {
 public:
  CpuBackend(Model& model, MemoryLedger& ledger, int slots);
  const ModelShape& shape() const override { return model_.shape(); }
  int layers() const override { return model_.layers(); }
  int slots() const override { return int(slots_.size()); }
  int max_rows() const override;
  std::int64_t length(int slot) const override { return slots_.at(std::size_t(slot))->length; }
  void set_length(int slot, std::int64_t length) override { slots_.at(std::size_t(slot))->length = length; }
  int prefill(int slot, const std::vector<int>& prompt) override;
  void forward(const std::vector<SlotRow>& rows, std::vector<int>& next) override;
  std::vector<float> logits(int row) override;
  const char* device() const override { return "cpu"; }

 private:
  Model& model_;
  std::vector<std::unique_ptr<Sequence>> slots_;
  std::vector<Row> rows_;
};

}  // namespace dlsys::serving
