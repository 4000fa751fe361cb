#pragma once
// The two places a pipeline schedule runs, behind one interface the pipeline lessons are written against (they choose
// the device once, by the run's backend):
//   CPU   a thread per pipeline device (or every op in turn, replayed), timed with steady_clock (executor.h).
//   CUDA  a stream per pipeline device on the GPUs there are (several on one GPU: emulated), timed with CUDA events
//         (executor_cuda.h).
// Both run the same schedule with the same contract; a device also says what its run's numbers mean (notes, how many
// GPUs, the share of a core its threads got). Without CUDA in the build (or its library) the CUDA device throws
// RunFailure saying why, and the CUDA backend is never chosen.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "kernels/pipeline/executor.h"

namespace dlsys::pipeline {

class PipelineDevice {
 public:
  virtual ~PipelineDevice() = default;
  virtual const char* timer() const = 0;  // "steady_clock" or "cuda_event", as the run's JSON names it
  virtual ExecutionResult execute(const Schedule& schedule, const ExecutorConfig& config, MemoryLedger& ledger,
                                  const RunControl& control) const = 0;
  // Whether the run's pipeline devices stood in for separate hardware (threads sharing cores, streams sharing a GPU).
  virtual bool emulated(const ExecutionResult& r) const = 0;
  // What a reader of the run needs to know about how it ran.
  virtual std::vector<std::string> notes(const Schedule& schedule, const ExecutionResult& r) const = 0;
  virtual std::optional<int> gpus_used(const ExecutionResult& r) const = 0;
  // The share of a core the stage threads got while inside their ops (threads running side by side only).
  virtual std::optional<double> core_share(const ExecutionResult& r) const = 0;
  // Whether the pipeline devices are streams that one host thread feeds (op by op, or as one graph), so that they can
  // end up taking turns.
  virtual bool fed_by_one_host_thread() const = 0;
};

std::unique_ptr<PipelineDevice> make_pipeline_device(BackendKind backend);

}  // namespace dlsys::pipeline
