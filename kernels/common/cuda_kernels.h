#pragma once
// Every operation's CUDA entry points, one table per operation (declared beside its functions, in <op>/*_cuda.h),
// gathered into the one table the CUDA library hands the program (engine/cuda_plugin.h). The program calls the
// functions of <op>/*_cuda.h as before: <op>/cuda/*_calls.cpp forwards each call through this table.
#include "engine/cuda_plugin.h"
#include "kernels/attention/attention_cuda.h"
#include "kernels/collectives/collectives_cuda.h"
#include "kernels/collectives/ipc_ring_processes.h"
#include "kernels/collectives/nccl_processes.h"
#include "kernels/common/device_buffer.h"
#include "kernels/ddp/ddp_cuda.h"
#include "kernels/decoder/decoder_cuda.h"
#include "kernels/fusion/fusion_cuda.h"
#include "kernels/matmul/matmul_cuda.h"
#include "kernels/pipeline/executor_cuda.h"
#include "kernels/precision/precision_cuda.h"
#include "kernels/quant/gemv_cuda.h"
#include "kernels/roofline/roofline_cuda.h"
#include "kernels/serving/model_cuda.h"
#include "kernels/tensor/tensor_cuda.h"
#include "kernels/zero/zero_cuda.h"

namespace dlsys {

struct CudaKernels {
  cuda::DeviceCalls device;
  attention::cuda::Calls attention;
  collectives::cuda::Calls collectives;
  collectives::cuda::NcclProcessCalls nccl_processes;
  collectives::cuda::IpcRingCalls ipc_ring;
  ddp::cuda::Calls ddp;
  decoder::cuda::Calls decoder;
  fusion::cuda::Calls fusion;
  matmul::cuda::Calls matmul;
  pipeline::cuda::Calls pipeline;
  precision::cuda::Calls precision;
  quant::cuda::Calls quant;
  roofline::cuda::Calls roofline;
  serving::cuda::Calls serving;
  tensor::cuda::Calls tensor;
  zero::cuda::Calls zero;
};

// The loaded library's table. Throws RunFailure with cuda_status().reason where there is none (a build without
// CUDA, or a library that could not be opened).
const CudaKernels& cuda_kernels();

}  // namespace dlsys
