#pragma once
// The flash lesson's parameters as read once from the checked values (the specs are in flash_lesson.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/attention/attention_cuda.h"
#include "kernels/attention/tile_math.h"

namespace dlsys::flash {

// Which kernels run, in the order of kImplChoices.
enum class Impl { All, Naive, Flash };
inline const std::vector<std::string> kImplChoices = {"all", "naive", "flash"};
// A run measures the kernels, or runs the course's two-tile example alone.
enum class Example { None, TwoTiles };
inline const std::vector<std::string> kExampleChoices = {"none", "two_tiles"};
// In the order of attention::LoopOrder (fa1: K/V blocks outside) and of attention::cuda::Precision.
inline const std::vector<std::string> kOrderChoices = {"fa1", "fa2"};
inline const std::vector<std::string> kPrecisionChoices = {"fp32", "bf16"};

struct FlashParams {
  std::int64_t n = 0, d = 0;  // Q, K, V are n x d
  bool causal = false;
  std::int64_t heads = 1;
  attention::cuda::Precision precision = attention::cuda::Precision::Fp32;
  std::int64_t sram_bytes = 0;  // on-chip memory M in bytes
  std::string sram_text;        // as written, for the message that refuses it
  std::int64_t br = 0, bc = 0;  // tile rows; 0: Algorithm 1's
  Impl impl = Impl::All;
  attention::LoopOrder order = attention::LoopOrder::QOuter;
  std::vector<double> sizes;  // the sweep's n
  int repeats = 0;
  int threads = 0;
  Example example = Example::None;
  // The tiles step's traced problem.
  std::int64_t tile_n = 0, tile_d = 0, tile_br = 0, tile_bc = 0;
  attention::LoopOrder tile_order = attention::LoopOrder::KvOuter;
  double max_minutes = 0;  // the run's limit

  bool runs_naive() const { return impl != Impl::Flash; }
  bool runs_flash() const { return impl != Impl::Naive; }
  bool measures() const { return example == Example::None; }  // the example allocates nothing of size n
};

inline const std::string& impl_name(Impl impl) { return kImplChoices[static_cast<std::size_t>(impl)]; }

}  // namespace dlsys::flash
