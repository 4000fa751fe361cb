#include "lessons/mesh/mesh_values.h"

namespace dlsys::mesh_lesson {

namespace {
DLSYS_VALUES_PART(AllKeys, MeshMeasured, step, losses, reference_losses, update_max_rel_err, loss_max_rel_err,
                  within_tolerance, replicas_identical, bytes_match, memory_match, tp_group_bytes, dp_group_bytes,
                  pp_bytes, comm_share, rank_runs, busiest_tp_bytes, busiest_pp_bytes, busiest_dp_bytes,
                  largest_weight_bytes, prediction, step_over_prediction)
DLSYS_VALUES_PART(GpuKeys, MeshMeasured, gemms_on_gpu, gpu_bytes)
}  // namespace

void to_json(nlohmann::ordered_json& j, const MeshMeasured& m) { write_parts<AllKeys, GpuKeys>(j, m, m.gemms_on_gpu); }

void from_json(const nlohmann::ordered_json& j, MeshMeasured& m) { read_parts<AllKeys, GpuKeys>(j, m); }

}  // namespace dlsys::mesh_lesson
