#include "lessons/mesh/mesh_values.h"

namespace dlsys::mesh_lesson {

namespace {
DLSYS_VALUES_PART(PredictionKeys, RunPrediction, tp_bytes, pp_bytes, dp_bytes, weight_bytes, gradient_bytes, bubble,
                  compute_us, exposed_comm_us, step_us, hardware_threads)
DLSYS_VALUES_PART(ProbeKeys, RunPrediction, probe_forward_us, probe_backward_us, probe_tp_all_reduce_us,
                  probe_dp_all_reduce_us, rank_gflops, link_alpha_us, link_beta_gbps, link_probed)
DLSYS_VALUES_PART(AllKeys, MeshMeasured, step, losses, reference_losses, update_max_rel_err, loss_max_rel_err,
                  within_tolerance, replicas_identical, bytes_match, memory_match, tp_group_bytes, dp_group_bytes,
                  pp_bytes, comm_share, rank_runs, busiest_tp_bytes, busiest_pp_bytes, busiest_dp_bytes,
                  largest_weight_bytes, prediction, step_over_prediction)
DLSYS_VALUES_PART(GpuKeys, MeshMeasured, gemms_on_gpu, gpu_bytes)
DLSYS_VALUES_PART(GpuCount, MeshMeasured, gpus)
}  // namespace

void to_json(nlohmann::ordered_json& j, const RunPrediction& p) {
  write_parts<PredictionKeys, ProbeKeys>(j, p, p.rank_gflops > 0);
}

void from_json(const nlohmann::ordered_json& j, RunPrediction& p) { read_parts<PredictionKeys, ProbeKeys>(j, p); }

void to_json(nlohmann::ordered_json& j, const MeshMeasured& m) {
  write_parts<AllKeys, GpuKeys>(j, m, m.gemms_on_gpu);
  if (m.gemms_on_gpu) GpuCount::write(j, m);
}

void from_json(const nlohmann::ordered_json& j, MeshMeasured& m) {
  read_parts<AllKeys, GpuKeys>(j, m);
  if (m.gemms_on_gpu) m.gpus = 1;  // runs recorded before a GPU per rank shared GPU 0
  GpuCount::read_if_present(j, m);
}

}  // namespace dlsys::mesh_lesson
