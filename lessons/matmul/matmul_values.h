#pragma once
// The matmul lesson's typed values: the closed forms for C = A B and what one run measured. `dlsys-lab run --json`
// writes them under "theory" and "measured" with these field names as keys.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace dlsys::matmul {

struct MatmulTheory {
  double mults = 0, adds = 0, flops = 0, exact_scalar_ops = 0;             // m n k, m n (k - 1), 2 m n k, m n (2k - 1)
  double bytes_naive = 0, bytes_tiled = 0, bytes_minimum = 0;              // main-memory traffic
  double intensity_naive = 0, intensity_tiled = 0, intensity_minimum = 0;  // FLOP per byte
  int tile = 0;                                                            // the tile edge of bytes_tiled
  int slope = 3;                                                           // time ~ n^slope
  // Known once a run has picked its device: the fp32 peak the percentages are taken of, and where it comes from.
  std::optional<double> peak_gflops;
  std::string peak_source;
  double nominal_peak_gflops = 0;  // threads x lanes x FMA units x 2 x clock, to judge the measured peak (0: unknown)
  std::string nominal_peak_source;
};

// One implementation at the chosen m x n x k.
struct VariantMeasure {
  std::string key;                 // naive | tiled | blas on the CPU; a rung of the ladder on a GPU (ladder.h)
  std::string kernel;              // the kernel's name in the code: v7_warptile, cublasSgemm, ...
  std::string precision = "fp32";  // fp32 | tf32 | bf16: the library it is compared with computes the same way
  bool library = false;            // the vendor library's kernel (OpenBLAS, cuBLAS)
  double slope = 0;                // fitted exponent of time against n, over the sweep's sizes from slope_from_n up
  double slope_from_n = 0;         // the smallest n in the fit: smaller sizes take too little time to show n^3
  int timed_calls_min = 0;         // the fewest timed calls any size got (a size stops after a second of timed calls)
  double gflops = 0;
  double time_us = 0, time_min_us = 0, time_max_us = 0;
  double percent_of_peak = 0;     // of the fp32 peak; 0 for tf32 and bf16 (the tensor cores are not under it)
  double percent_of_library = 0;  // of the library kernel in the same precision at the same shape
  // Its place on the roofline: bytes through global (main) memory from its tiles' closed form, FLOP per byte, and
  // the memory roof there (peak bandwidth x intensity; 0 when the device's bandwidth is unknown).
  double bytes_moved = 0;
  double intensity = 0;
  double memory_roof_gflops = 0;
  std::string traffic;  // how bytes_moved counts
  double max_rel_err = 0;
  double error_tolerance = 0;  // the bound of its precision (ladder.h)
  bool autotuned = false;      // its tile shape was chosen at run time (said in a note of the run, not saved apart)
};

struct MatmulMeasured {
  std::vector<VariantMeasure> variants;            // in the order they ran
  std::optional<double> tiled_percent_of_blas;     // both ran
  std::optional<double> tiled_speedup_over_naive;  // both ran
  double max_rel_err = 0;
  double error_tolerance = 0;  // fp32's bound at the chosen shape; each variant has its own
  int wrong = 0;               // 1 when some variant's error exceeds its tolerance
  // 0: every element checked against the double reference; else how many entries were sampled (large products).
  int reference_samples = 0;
  // The fastest fp32 kernel that is not the library's, and its share of the library's fp32 rate.
  std::string best_fp32_key;
  double best_fp32_percent_of_blas = 0;
  // On a GPU, when a fitted slope is still far from 3: why (fixed costs per call dominate).
  std::optional<std::string> slope_caveat;
  // Kernels the sweep left out of its largest sizes (one call would have taken too long), as "naive: 4096, 8192".
  std::vector<std::string> sweep_left_out;
  // The roofline's slope, and what it is: "read stream" (measured in the run, on the CPU) or "datasheet" (a GPU's).
  // Absent from runs recorded before the lab measured it: their slope was the peaks' memcpy figure.
  std::optional<double> roof_bandwidth_gbps;
  std::optional<std::string> roof_bandwidth_source;

  const VariantMeasure* variant(const std::string& key) const;
};

void to_json(nlohmann::ordered_json& json, const MatmulTheory& theory);
void from_json(const nlohmann::ordered_json& json, MatmulTheory& theory);
void to_json(nlohmann::ordered_json& json, const MatmulMeasured& measured);
void from_json(const nlohmann::ordered_json& json, MatmulMeasured& measured);

}  // namespace dlsys::matmul
