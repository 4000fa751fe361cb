#pragma once
// NVIDIA's published ceilings for the data-centre GPUs a course machine is likely to have: FP32 without tensor cores
// and memory bandwidth. The CUDA backend reports them as its peaks (they are datasheet figures, not measurements).
// Kept apart from cuda_status.cpp, in a header with no CUDA in it, so that the lookup is tested in every build.
//
// The CUDA runtime names a device by model and, for most models, its form factor and memory: "NVIDIA H100 80GB HBM3"
// is the SXM5 part, "NVIDIA H100 PCIe" and "NVIDIA H100 NVL" the others, "NVIDIA A100-SXM4-80GB" or
// "NVIDIA A100 80GB PCIe". Parts of one model differ a lot (H100 SXM 67 TFLOP/s and 3.35 TB/s, H100 PCIe 51 TFLOP/s
// and 2.0 TB/s), so the form factor is read from the name, and the memory size from the name or else from the
// memory the runtime reports. A name that does not say enough finds no datasheet rather than a guess.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dlsys {

struct GpuDatasheet {
  std::string part;           // "H100 PCIe"
  double fp32_gflops = 0;     // FP32 on the CUDA cores (no tensor cores), GFLOP/s
  double bandwidth_gbps = 0;  // memory bandwidth, GB/s (1e9 bytes per second)
  std::string document;       // the NVIDIA datasheet the figures come from
};

namespace gpu_datasheet_detail {

// The name's words in upper case, split at spaces and hyphens: "NVIDIA A100-SXM4-80GB" -> NVIDIA, A100, SXM4, 80GB.
inline std::vector<std::string> words_of(std::string_view name) {
  std::vector<std::string> words;
  std::string word;
  for (char c : name) {
    if (c == ' ' || c == '-') {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

inline bool has_word(const std::vector<std::string>& words, std::string_view w) {
  return std::find(words.begin(), words.end(), w) != words.end();
}
inline bool has_word_starting(const std::vector<std::string>& words, std::string_view prefix) {
  return std::any_of(words.begin(), words.end(), [&](const std::string& w) { return w.rfind(prefix, 0) == 0; });
}

// The documents, as NVIDIA publishes them on its data-centre product pages.
inline constexpr const char* kH100 = "NVIDIA H100 Tensor Core GPU datasheet";
inline constexpr const char* kH200 = "NVIDIA H200 Tensor Core GPU datasheet";
inline constexpr const char* kGh200 = "NVIDIA GH200 Grace Hopper Superchip datasheet";
inline constexpr const char* kA100 = "NVIDIA A100 Tensor Core GPU datasheet";
inline constexpr const char* kV100 = "NVIDIA V100 Tensor Core GPU datasheet";

}  // namespace gpu_datasheet_detail

// Figures, FP32 / bandwidth: H100 SXM 67 TFLOP/s / 3.35 TB/s and H100 PCIe 51 / 2.0 (the H100 datasheet's SXM and
// PCIe columns), H100 NVL 60 / 3.9 (its later edition's NVL column); H200 SXM 67 / 4.8, H200 NVL 60 / 4.8; GH200
// 67 with 96 GB HBM3 at 4 TB/s or 144 GB HBM3e at 4.9 TB/s; A100 19.5 TFLOP/s in every form, 1,555 GB/s with 40 GB,
// 1,935 GB/s for 80 GB PCIe, 2,039 GB/s for 80 GB SXM (the A100 datasheet's four columns); A30 10.3 / 933 GB/s;
// A40 37.4 / 696 GB/s; A10 31.2 / 600 GB/s; L4 30.3 / 300 GB/s; L40S 91.6 / 864 GB/s; L40 90.5 / 864 GB/s; T4 8.1 /
// 320 GB/s (printed "320+"); V100 PCIe 14 / 900, V100 SXM2 15.7 / 900, V100S PCIe 16.4 / 1,134 GB/s.
//
// The datasheet of the part `device_name` (as cudaGetDeviceProperties gives it) names, or nothing when the name is
// not a known model or does not say which part of it. `memory_total_bytes` (from cudaMemGetInfo) tells memory sizes
// apart where the name does not (an A100 with no "40GB" or "80GB" in its name; the two GH200 memories).
inline std::optional<GpuDatasheet> find_gpu_datasheet(std::string_view device_name, std::int64_t memory_total_bytes) {
  using namespace gpu_datasheet_detail;
  const std::vector<std::string> w = words_of(device_name);
  const double memory_gb = double(memory_total_bytes) / 1e9;
  const bool pcie = has_word(w, "PCIE"), nvl = has_word(w, "NVL");
  const bool sxm = has_word_starting(w, "SXM") || has_word(w, "HBM3");
  auto sheet = [](const char* part, double gflops, double gbps, const char* document) {
    return GpuDatasheet{part, gflops, gbps, document};
  };
  // Hopper. GH200 before H200: the names share letters, the parts do not share figures.
  if (has_word(w, "GH200"))
    return has_word(w, "HBM3E") || memory_gb > 120 ? sheet("GH200 (144 GB HBM3e)", 67000, 4900, kGh200)
                                                   : sheet("GH200 (96 GB HBM3)", 67000, 4000, kGh200);
  if (has_word(w, "H200")) return nvl ? sheet("H200 NVL", 60000, 4800, kH200) : sheet("H200 SXM", 67000, 4800, kH200);
  if (has_word(w, "H100")) {
    if (nvl) return sheet("H100 NVL", 60000, 3900, kH100);
    if (pcie) return sheet("H100 PCIe", 51000, 2000, kH100);
    if (sxm) return sheet("H100 SXM", 67000, 3350, kH100);
    return std::nullopt;  // "NVIDIA H100" alone: SXM and PCIe both have 80 GB, and their figures differ
  }
  // Ampere. The 80 GB parts differ in bandwidth by form factor; the 40 GB parts do not.
  if (has_word(w, "A100")) {
    const bool gb80 = has_word(w, "80GB") || (!has_word(w, "40GB") && memory_gb > 60);
    if (!gb80) return sheet(pcie ? "A100 40GB PCIe" : sxm ? "A100 40GB SXM" : "A100 40GB", 19500, 1555, kA100);
    if (pcie) return sheet("A100 80GB PCIe", 19500, 1935, kA100);
    if (sxm) return sheet("A100 80GB SXM", 19500, 2039, kA100);
    return std::nullopt;
  }
  if (has_word(w, "A30")) return sheet("A30", 10300, 933, "NVIDIA A30 Tensor Core GPU datasheet");
  if (has_word(w, "A40")) return sheet("A40", 37400, 696, "NVIDIA A40 datasheet");
  if (has_word(w, "A10")) return sheet("A10", 31200, 600, "NVIDIA A10 Tensor Core GPU datasheet");
  // Ada Lovelace and Turing.
  if (has_word(w, "L4")) return sheet("L4", 30300, 300, "NVIDIA L4 Tensor Core GPU datasheet");
  if (has_word(w, "L40S")) return sheet("L40S", 91600, 864, "NVIDIA L40S datasheet");
  if (has_word(w, "L40")) return sheet("L40", 90500, 864, "NVIDIA L40 datasheet");
  if (has_word(w, "T4")) return sheet("T4", 8100, 320, "NVIDIA T4 Tensor Core GPU datasheet");
  // Volta.
  if (has_word(w, "V100S")) return sheet("V100S PCIe", 16400, 1134, kV100);
  if (has_word(w, "V100")) {
    if (pcie) return sheet("V100 PCIe", 14000, 900, kV100);
    if (sxm) return sheet("V100 SXM2", 15700, 900, kV100);
  }
  return std::nullopt;
}

// The CUDA backend's `peaks_source`: it starts with "datasheet" so that wherever the peak is shown it is called a
// datasheet peak, never a measured one (the CPU backend's source starts with "measured").
inline std::string datasheet_peaks_source(const std::optional<GpuDatasheet>& sheet) {
  if (!sheet) return "datasheet: none found for this device's name, so no peaks";
  return "datasheet: " + sheet->part + ", " + sheet->document;
}

}  // namespace dlsys
