#pragma once
// The two places the serving lesson's model runs, behind one interface its run is written against (it chooses the
// device once, by the run's backend):
//   CPU   the CPU model (model.h) itself behind the scheduler's interface (cpu_backend.h); passes timed with
//         steady_clock.
//   CUDA  the GPU model (model_cuda.h) built from the CPU model's weights, a thin forwarder to cuda::make_model;
//         the host waits for each pass's tokens, and the run holds the GPU's tokens against the CPU model's.
// The run always builds the CPU model: it is what the CPU serves, and on a GPU the reference of its tokens. Without
// CUDA in the build (or its library) the CUDA device's model() throws RunFailure saying why, and the CUDA backend is
// never chosen.
#include <memory>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/ledger.h"
#include "kernels/serving/backend.h"
#include "kernels/serving/model.h"

namespace dlsys::serving {

class ServingDevice {
 public:
  virtual ~ServingDevice() = default;
  virtual const char* timer() const = 0;  // the run's timer, as its JSON names it
  virtual const DeviceInfo& info() const = 0;
  virtual const char* roof_label() const = 0;  // the legend of the roof the passes are placed under
  // The bandwidth of the roof's slope: on the CPU a read stream measured now on every hardware thread, flushed from
  // the caches as the passes' weights are (hardware.h); on a GPU its datasheet figure.
  virtual double roof_bandwidth_gbps() const = 0;
  // Before each timed pass on the roofline: on the CPU the model's weights are flushed from the caches, so they come
  // from main memory as the weights of a model far larger than the caches would (the lesson's model is a few MB);
  // returns whether it flushed. On a GPU nothing: a pass at this size is kernel launches, far below the roof.
  virtual bool evict_weights(const Weights& weights) const = 0;
  // `cpu_model` (its layers, its weights, its rows of scratch) on this device with `slots` caches. `cpu_model`
  // outlives what this returns.
  virtual std::unique_ptr<ModelBackend> model(Model& cpu_model, int slots) const = 0;
  // Whether the run holds this device's tokens against the CPU model's (a device other than the CPU sums in
  // another order).
  virtual bool compares_with_cpu_model() const = 0;
  // What the run did on this device, in the notes beside its numbers; `cpu_match_fraction`: the share of the
  // requests whose tokens equal the CPU model's (when compares_with_cpu_model()).
  virtual std::vector<std::string> notes(double cpu_match_fraction) const = 0;
};

// The device of `backend`; the CPU's caches are recorded in `ledger` (under "kv"), which outlives the device.
std::unique_ptr<ServingDevice> make_serving_device(BackendKind backend, MemoryLedger& ledger);

}  // namespace dlsys::serving
