// The pipeline devices (pipeline_devices.h): CPU threads and GPU streams behind one interface.
#include <fmt/format.h>

#include "kernels/pipeline/executor_cuda.h"
#include "kernels/pipeline/pipeline_devices.h"

namespace dlsys::pipeline {

namespace {

// An F&B pair (DualPipeV, or a schedule holding two copies of the parameters) runs its two halves one after the other.
bool has_pairs(const Schedule& s) { return s.param_copies > 1 || s.shape.kind == ScheduleKind::DualPipeV; }

class CpuPipeline final : public PipelineDevice {
 public:
  const char* timer() const override { return "steady_clock"; }
  ExecutionResult execute(const Schedule& schedule, const ExecutorConfig& config, MemoryLedger& ledger,
                          const RunControl& control) const override {
    return execute_schedule(schedule, config, ledger, control);
  }
  bool emulated(const ExecutionResult&) const override { return true; }
  std::vector<std::string> notes(const Schedule& s, const ExecutionResult& r) const override {
    std::vector<std::string> out;
    if (r.mode == "concurrent")
      out.push_back(
          fmt::format("stages are {} CPU threads (one per device, OpenBLAS single-threaded "
                      "in each) on {} hardware threads; messages are memory copies",
                      s.devices(), r.hardware_threads));
    else
      out.push_back(
          fmt::format("replayed: every op ran for real, one at a time, and its measured "
                      "duration was replayed on the schedule ({} stages, {} hardware threads)",
                      s.devices(), r.hardware_threads));
    if (has_pairs(s))
      out.push_back(
          "an F&B pair runs its two halves one after the other: on a CPU there is no "
          "all-to-all communication for the overlap to hide");
    return out;
  }
  std::optional<int> gpus_used(const ExecutionResult&) const override { return std::nullopt; }
  std::optional<double> core_share(const ExecutionResult& r) const override {
    if (r.mode != "concurrent") return std::nullopt;
    return r.core_share;
  }
  bool fed_by_one_host_thread() const override { return false; }
};

class CudaPipeline final : public PipelineDevice {
 public:
  const char* timer() const override { return "cuda_event"; }
  ExecutionResult execute(const Schedule& schedule, const ExecutorConfig& config, MemoryLedger& ledger,
                          const RunControl& control) const override {
    return cuda::execute_schedule(schedule, config, ledger, control);
  }
  bool emulated(const ExecutionResult& r) const override { return r.emulated; }
  std::vector<std::string> notes(const Schedule& s, const ExecutionResult& r) const override {
    std::vector<std::string> out = r.notes;
    if (has_pairs(s))
      out.push_back(
          "an F&B pair runs its two halves one after the other on its device's stream: no second stream overlaps "
          "them");
    return out;
  }
  std::optional<int> gpus_used(const ExecutionResult& r) const override { return r.gpus; }
  std::optional<double> core_share(const ExecutionResult&) const override { return std::nullopt; }
  bool fed_by_one_host_thread() const override { return true; }
};

}  // namespace

std::unique_ptr<PipelineDevice> make_pipeline_device(BackendKind backend) {
  if (backend == BackendKind::Cuda) return std::make_unique<CudaPipeline>();
  return std::make_unique<CpuPipeline>();
}

}  // namespace dlsys::pipeline
