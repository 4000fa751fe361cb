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
  std::string key;          // naive | tiled | blas
  double slope = 0;         // fitted exponent of time against n, over the sweep's sizes from slope_from_n up
  double slope_from_n = 0;  // the smallest n in the fit: smaller sizes take too little time to show n^3
  int timed_calls_min = 0;  // the fewest timed calls any size got (a size stops after a second of timed calls)
  double gflops = 0;
  double time_us = 0, time_min_us = 0, time_max_us = 0;
  double percent_of_peak = 0;
  double max_rel_err = 0;
};

struct MatmulMeasured {
  std::vector<VariantMeasure> variants;            // in the order they ran
  std::optional<double> tiled_percent_of_blas;     // both ran
  std::optional<double> tiled_speedup_over_naive;  // both ran
  double max_rel_err = 0;
  double error_tolerance = 0;
  int wrong = 0;  // 1 when some variant's error exceeds the tolerance
  // On a GPU, when the fitted slopes are far from 3: why (fixed costs per call dominate) and which sizes show n^3.
  std::optional<std::string> slope_caveat;

  const VariantMeasure* variant(const std::string& key) const;
};

void to_json(nlohmann::ordered_json& json, const MatmulTheory& theory);
void from_json(const nlohmann::ordered_json& json, MatmulTheory& theory);
void to_json(nlohmann::ordered_json& json, const MatmulMeasured& measured);
void from_json(const nlohmann::ordered_json& json, MatmulMeasured& measured);

}  // namespace dlsys::matmul
