#pragma once
// The oracle for every collective run. With the inputs of inputs.h every sum is exact, so a result is right only if it
// equals the reference exactly, and `wrong` counts the elements that do not (as nccl-tests' #wrong column does).
#include <cstdint>
#include <vector>

#include "kernels/collectives/inputs.h"
#include "kernels/collectives/op.h"

namespace dlsys::collectives {

// send: (count) of rank `rank`'s inputs. Threads split the work (first touch of large buffers is slow on one core).
void fill_inputs(float* send, int rank, std::int64_t count, int threads);
// Elements of the ranks' recv buffers that differ from what `op` must leave there: for all-reduce the whole sum,
// for reduce-scatter the owned chunk of the sum, for all-gather every chunk equal to its owner's input.
std::int64_t count_wrong(Op op, const std::vector<float*>& recv, std::int64_t count, int threads);

}  // namespace dlsys::collectives
