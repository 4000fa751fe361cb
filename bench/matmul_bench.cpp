// The matmul kernel ladder on this GPU: every rung and every warp-tile configuration at n = 2048, 4096 and 8192
// (m = n = k), each checked against a sampled double reference and timed with CUDA events (median of 10 after 2
// warm-up calls), beside cuBLAS in the same precision. At 8192 a rung whose call would take over a fifth of a second
// (8x its time at 4096) is left out. Exits 1 when any kernel is wrong, 77 without a GPU.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/errors.h"
#include "kernels/common/seeded_fill.h"
#include "kernels/matmul/ladder.h"
#include "kernels/matmul/matmul.h"
#include "kernels/matmul/matmul_cuda.h"

using namespace dlsys;
using namespace dlsys::matmul;

namespace {

constexpr double kSkipAboveUs = 2e5;  // a rung leaves the larger sizes once one call would take this long

struct Row {
  std::string name;  // rung key, or warptile[i] for a configuration
  Rung rung;
  int config;
  double median_us = 0, tflops = 0, error = 0, tolerance = 0;
  bool wrong = false;
};

std::string config_name(int i) { return fmt::format("warptile[{}] {}", i, warp_tile_name(kWarpTiles[std::size_t(i)])); }

// Times one rung (configuration `row.config`) on the uploaded operands, then checks sampled entries of its output.
void time_and_check(cuda::DeviceOperands& operands, const RungInfo& info, const MeasureOptions& options, const Shape& s,
                    const std::vector<float>& a, const std::vector<float>& b, Row& row) {
  std::vector<float> c(std::size_t(s.m * s.n));
  try {
    operands.poison_output();
    const TimingStats t = operands.time(info.rung, options, row.config);
    operands.download_output(c.data());
    row.median_us = t.median_us;
    row.tflops = flops(s) / (t.median_us * 1e6);
    row.error = sampled_max_relative_error(s, a.data(), b.data(), c.data(), kReferenceSamples);
    row.tolerance = error_tolerance(info.precision, s);
    row.wrong = !(row.error <= row.tolerance);
  } catch (const RunFailure& e) {
    std::printf("%s at n = %lld failed: %s\n", row.name.c_str(), static_cast<long long>(s.m), e.what());
    row.wrong = true;
  }
}

}  // namespace

int main() {
  if (!cuda_status().available) {
    std::printf("no CUDA device: %s\n", cuda_status().reason.c_str());
    return 77;
  }
  std::printf("%s, %s; C = A B with m = n = k, fp32 in and out (bf16 rungs: inputs rounded to bf16 once)\n",
              cuda_status().device.name.c_str(), cuda_status().device.library.c_str());
  const MeasureOptions options{.warmup = 2, .repeats = 10};
  std::map<std::string, double> last_us;  // each rung's time at the previous size
  int wrong = 0;
  double best_percent_4096 = 0;
  std::string best_name_4096, tuned_name_4096;
  for (const std::int64_t n : {2048, 4096, 8192}) {
    const Shape s{n, n, n};
    std::vector<float> a(std::size_t(n * n)), b(std::size_t(n * n));
    fill_seeded_uniform(a, 1);
    fill_seeded_uniform(b, 2);
    const auto on_device = cuda::make_device_operands(s, a.data(), b.data());
    cuda::DeviceOperands& operands = *on_device;
    std::vector<Row> rows;
    for (const RungInfo& info : kLadder) {
      const int configs = info.rung == Rung::WarpTiled ? int(kWarpTiles.size()) : 1;
      for (int config = 0; config < configs; ++config) {
        Row row{info.rung == Rung::WarpTiled ? config_name(config) : std::string(info.key), info.rung,
                info.rung == Rung::WarpTiled ? config : kLessonWarpTile};
        if (n > 4096 && last_us.count(row.name) && last_us[row.name] * 8 > kSkipAboveUs) continue;
        time_and_check(operands, info, options, s, a, b, row);
        last_us[row.name] = row.median_us;
        wrong += row.wrong ? 1 : 0;
        rows.push_back(row);
      }
    }
    // What the lesson's autotuning picks at this shape (its own quick timings, apart from the table's).
    if (n == 4096) {
      try {
        tuned_name_4096 = config_name(operands.best_warp_tile());
      } catch (const RunFailure& e) {
        tuned_name_4096 = std::string("tuning failed: ") + e.what();
        ++wrong;
      }
    }
    auto library_tflops = [&](Precision p) {
      for (const Row& r : rows)
        if (r.rung == library_rung(p)) return r.tflops;
      return 0.0;
    };
    std::printf("\nn = %lld (error: sampled, %d entries of C against a double dot product)\n",
                static_cast<long long>(n), kReferenceSamples);
    std::printf("%-40s %5s %10s %9s %9s %10s %10s\n", "kernel", "prec", "time_ms", "TFLOP/s", "%cuBLAS", "error",
                "tolerance");
    for (const Row& r : rows) {
      const Precision p = rung_info(r.rung).precision;
      const double lib = library_tflops(p), percent = lib > 0 ? 100 * r.tflops / lib : 0;
      std::printf("%-40s %5s %10.3f %9.2f %8.1f%% %10.2e %10.2e%s\n", r.name.c_str(),
                  std::string(precision_name(p)).c_str(), r.median_us / 1e3, r.tflops, percent, r.error, r.tolerance,
                  r.wrong ? "  WRONG" : "");
      if (n == 4096 && p == Precision::Fp32 && !rung_info(r.rung).library && !r.wrong && percent > best_percent_4096) {
        best_percent_4096 = percent;
        best_name_4096 = r.name;
      }
    }
  }
  std::printf("\nbest fp32 lab kernel at n = 4096: %s, %.1f%% of cuBLAS fp32\n", best_name_4096.c_str(),
              best_percent_4096);
  std::printf("the lesson's autotuning (best of %zu) picks at n = 4096: %s\n", kWarpTiles.size(),
              tuned_name_4096.c_str());
  std::printf("%d kernel%s wrong\n", wrong, wrong == 1 ? "" : "s");
  return wrong == 0 ? 0 : 1;
}
