#pragma once
// The ddp lesson's parameters as read once from the checked values (the specs are in ddp_lesson.cpp).
#include <string>
#include <vector>

#include "engine/params.h"
#include "kernels/ddp/train_types.h"
#include "kernels/ddp/wire_format.h"
#include "lessons/common/process_placement.h"

namespace dlsys::ddp {

using dlsys::Launcher;  // threads, or one MPI process per rank

struct DdpParams {
  int n = 0;           // ranks
  std::string n_text;  // n as written, for the message that compares it with the MPI world
  int layers = 0, width = 0;
  int batch = 0;            // global batch
  double bucket_bytes = 0;  // the DDP bucket cap
  SyncMode mode = SyncMode::Ddp;
  int accumulate = 1;
  WireFormat grad_dtype = WireFormat::Fp32;
  int steps = 0;  // timed steps per configuration
  double max_minutes = 0;
  Launcher launcher = Launcher::Threads;
};

DdpParams read_ddp_params(const ParamValues& values);

}  // namespace dlsys::ddp
