#pragma once
// The data-parallel lesson's typed values: the closed forms at the chosen sizes, and what one run measured. `dlsys-lab
// run --json` writes them under "theory" and "measured" with these field names as keys.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/lesson_values.h"

namespace dlsys::ddp {

struct DdpTheory {
  std::int64_t parameters = 0;           // layers x 2 width^2
  std::int64_t gradient_bytes = 0;       // parameters x 4 (fp32, as computed)
  std::int64_t wire_gradient_bytes = 0;  // parameters x 2 or 4: what travels per all-reduce of the whole gradient
  std::int64_t bucket_bytes = 0;         // the cap, fp32 bytes (whole, even element counts)
  std::int64_t buckets = 0;              // ceil(parameters / bucket elements); 0 in dataparallel mode
  // Bytes rank 0 sends per optimizer step. DDP: the ring's, bucket by bucket (each 2 (N-1)/N x its wire bytes when N
  // divides its words). DataParallel: the master's copies of the model and of the workers' rows.
  std::int64_t bytes_per_rank_per_step = 0;
  double ring_closed_form_bytes = 0;                   // 2 (N-1)/N x wire gradient bytes
  std::int64_t dataparallel_rank0_bytes_sent = 0;      // (N-1) (4 P + 2 x 4 w B / N)
  std::int64_t dataparallel_rank0_bytes_received = 0;  // (N-1) x wire gradient bytes
  std::int64_t rows_per_rank_per_micro_step = 0;       // B / (N k)
  double flop_per_step = 0;                            // 12 B w^2 L: forward 4, backward 8 per row and weight
  // PyTorch DistributedDataParallel's defaults [EXT]: bucket_cap_mb = 25 (MiB), and the first bucket
  // (torch.distributed._DEFAULT_FIRST_BUCKET_BYTES) 1 MiB, so the first all-reduce can start early.
  std::int64_t pytorch_bucket_cap_bytes = 25 << 20;
  std::int64_t pytorch_first_bucket_bytes = 1 << 20;
};
DLSYS_VALUES_JSON(DdpTheory, parameters, gradient_bytes, wire_gradient_bytes, bucket_bytes, buckets,
                  bytes_per_rank_per_step, ring_closed_form_bytes, dataparallel_rank0_bytes_sent,
                  dataparallel_rank0_bytes_received, rows_per_rank_per_micro_step, flop_per_step,
                  pytorch_bucket_cap_bytes, pytorch_first_bucket_bytes)

// One trained variant against single-rank training on the full batch.
struct Variant {
  std::string mode;        // "ddp" | "dataparallel"
  std::string grad_dtype;  // "fp32" | "bf16" | "fp16"
  int accumulate = 1;
  int ranks = 0;
  std::int64_t bucket_bytes = 0;
  double step_us = 0;
  std::int64_t comm_bytes = 0;  // rank 0 sent, per optimizer step (counted)
  double max_rel_err_vs_single = 0;
  bool bit_identical_vs_single = false;
  bool chosen = false;  // the configuration the parameters name
};
DLSYS_VALUES_JSON(Variant, mode, grad_dtype, accumulate, ranks, bucket_bytes, step_us, comm_bytes,
                  max_rel_err_vs_single, bit_identical_vs_single, chosen)

struct DdpMeasured {
  // The chosen configuration, per optimizer step: the slowest rank's, median over the timed steps (definitions in
  // kernels/ddp/trainer.h).
  double step_us = 0, step_us_min = 0, step_us_max = 0;
  double compute_us = 0;
  double comm_us = 0;                    // time inside collectives (bucket all-reduces, or the master's copies)
  double hidden_comm_us = 0;             // the part of it that ran during backward
  double exposed_comm_us = 0;            // what the step waited for after backward
  double idle_us = 0;                    // step - compute - exposed communication
  double overlap_fraction = 0;           // hidden / comm, every rank's summed, median over the timed steps
  std::int64_t comm_bytes = 0;           // bytes rank 0 sent per optimizer step (counted by the links or copies)
  std::int64_t comm_bytes_received = 0;  // bytes rank 0 received per optimizer step
  bool comm_bytes_match_theory = false;
  double max_rel_err_vs_single = 0;  // max |w - w_single| / max |w_single| after all steps
  bool bit_identical_vs_single = false;
  bool replicas_identical = false;  // every rank's weights equal, bit for bit (DDP)
  int timed_steps = 0;
  int hardware_threads = 0;
  int threads_used = 0;  // compute + communication threads of the chosen run (CPU), or streams (GPU)
  // CPU rank threads: one core kept for the communication threads (engine/core_placement.h); absent in runs recorded
  // before the lab did so.
  std::optional<bool> communication_core_set_aside;
  bool on_gpu = false;    // trained on the CUDA backend: cuBLAS per rank, a compute and a communication stream
  std::string placement;  // how the ranks were placed on the GPUs (empty on the CPU)
  std::vector<Variant> variants;
  // The bucket sweep (DDP, fp32, no accumulation, the chosen N): the fastest bucket and one bucket, median steps.
  std::int64_t best_bucket_bytes = 0;
  double best_bucket_step_us = 0;
  double one_bucket_step_us = 0;
  // The lesson's benchmark: N = 2, buckets of a quarter of the gradient, fp32: overlap_fraction >= 0.5.
  double bench_overlap_fraction = 0;
  std::int64_t bench_bucket_bytes = 0;
  double bench_overlap_expected = 0.5;
  bool bench_met = false;
  // How the ranks ran: "threads" (rank threads of this process) or "mpi" (one process per rank; then `placement`
  // says where, the benchmark and the sweeps are not run, and mpi_thread_level is what MPI_Init_thread provided).
  std::string launcher = "threads";
  std::string mpi_thread_level;
};
DLSYS_VALUES_JSON(DdpMeasured, step_us, step_us_min, step_us_max, compute_us, comm_us, hidden_comm_us, exposed_comm_us,
                  idle_us, overlap_fraction, comm_bytes, comm_bytes_received, comm_bytes_match_theory,
                  max_rel_err_vs_single, bit_identical_vs_single, replicas_identical, timed_steps, hardware_threads,
                  threads_used, communication_core_set_aside, on_gpu, placement, variants, best_bucket_bytes,
                  best_bucket_step_us, one_bucket_step_us, bench_overlap_fraction, bench_bucket_bytes,
                  bench_overlap_expected, bench_met, launcher, mpi_thread_level)

}  // namespace dlsys::ddp
