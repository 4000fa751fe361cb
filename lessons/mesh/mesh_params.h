#pragma once
// The mesh lesson's parameters as read once from the checked values (the specs are in mesh_lesson.cpp).
#include <cstdint>
#include <string>

#include "kernels/mesh/mesh_model.h"

namespace dlsys::mesh_lesson {

struct MeshParams {
  int dp = 0, tp = 0, pp = 0;  // the mesh: dp x tp x pp rank threads, at most 8
  int micro_batches = 0;       // m: per replica and step, run 1F1B through the pipeline
  int hidden = 0;              // h; the MLP's middle is 4h
  int layers = 0;              // L, a multiple of pp
  int batch = 0;               // B rows per step, every replica together
  int steps = 0;               // optimizer steps, each on its own B rows
  // The planner's question: a real model (a preset, or a config.json that overrides it) on a GPU cluster.
  std::string model, config;
  int gpus = 0, gpus_per_node = 0;
  double gpu_memory_gb = 0, peak_tflops = 0, intra_node_gbps = 0, inter_node_gbps = 0;
  std::int64_t global_batch = 0, seq = 0;  // sequences per step, tokens per sequence
  double max_minutes = 0;

  mesh::MeshModel mesh_model() const {
    return {.mesh = {dp, tp, pp},
            .layers = layers,
            .hidden = hidden,
            .expansion = kExpansion,
            .batch = batch,
            .micro_batches = micro_batches};
  }
  static constexpr int kExpansion = 4;
};

// The most ranks a run may start: threads of this process, each with its own OpenBLAS buffer.
inline constexpr int kMostRanks = 8;

}  // namespace dlsys::mesh_lesson
