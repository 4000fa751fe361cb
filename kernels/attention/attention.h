#pragma once
// Attention for one head, o = softmax(scale q k^T [+ causal mask]) v, with q, k, v, o: (n, d) row-major.
// The variants teach one idea each:
//   reference - double accumulation, one row at a time: the oracle every variant is checked against.
//   v1_naive  - standard attention in three passes over memory: S = scale Q K^T is materialised as an n x n fp32
//               matrix, softmax rewrites it into P in place, then O = P V. Scratch and traffic grow as n^2.
//   v2_flash  - FlashAttention: Q in row blocks of br, K and V in column blocks of bc; each tile's scores live only
//               in a br x bc buffer and are folded into the output with the online softmax (running max m, running
//               sum l, rescale factors exp(m_old - m_new) and exp(m_tile - m_new)). Exact, scratch O(tile), traffic
//               O(n^2 d^2 / M). Both loop orders (Algorithm 1's and FlashAttention-2's), threaded over Q blocks.
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "kernels/attention/tile_math.h"

namespace dlsys::attention {

void reference(const Problem& problem, const float* q, const float* k, const float* v, double* o, int threads);

// Where the full reference costs too much (n = 4096 and 16 heads is 69 GFLOP in double), a sample of rows is checked
// instead: `count` rows spread evenly from the first to the last (all rows when n <= count).
std::vector<std::int64_t> sample_rows(std::int64_t n, std::int64_t count);
// The reference at those rows only: out (rows.size(), d).
void reference_rows(const Problem& problem, const float* q, const float* k, const float* v,
                    std::span<const std::int64_t> rows, double* out, int threads);
// Largest |o[row] - ref| over the sampled rows of one head; o: (n, d), ref: (rows.size(), d).
double max_abs_error_rows(const Problem& problem, const float* o, std::span<const std::int64_t> rows,
                          std::span<const double> ref);

// s_scratch: (n, n), at least naive_scratch_elements(n) floats.
void v1_naive(const Problem& problem, const float* q, const float* k, const float* v, float* o,
              std::span<float> s_scratch, int threads);

// The state of one row of a tile after the tiled kernel folded the tile in.
struct TileRowState {
  double m_old = 0, l_old = 0;    // running max and sum before this tile
  double m_tile = 0, l_tile = 0;  // the tile's own max and sum of exp(s - m_tile)
  double m_new = 0, l_new = 0;    // after the merge
  double alpha = 0, beta = 0;     // exp(m_old - m_new) and exp(m_tile - m_new)
};

// What the trace hook sees after each tile, in the order the kernel visits the tiles.
struct TileRecord {
  LoopOrder order = LoopOrder::QOuter;
  std::int64_t i = 0, j = 0;  // block indices: Q block i, K/V block j
  std::int64_t row_begin = 0, rows = 0, col_begin = 0, cols = 0, d = 0;
  std::vector<double> scores;            // (rows, cols): scale q.k, -inf where the causal mask hides the key
  std::vector<TileRowState> row_states;  // (rows)
  // O_i after this tile as the kernel holds it: KvOuter keeps it normalised (Algorithm 1 line 12 divides by l_new
  // every time); QOuter keeps the unnormalised weighted sum z and divides by l once, after its last tile.
  std::vector<double> output;  // (rows, d)
  bool output_normalised = false;
  // Main-memory traffic this worker's loads and stores add up to so far, this tile's included (in FlashAttention-2's
  // order O_i is written after its block's last tile, so that write appears with the next block).
  Traffic traffic_so_far;
};
// Called after every tile. A kernel given a trace runs on one thread so the calls come in loop order.
using TileTrace = std::function<void(const TileRecord&)>;

// T is float for the measured kernel and double for the worked example (same code, no rounding in the way).
// scratch: at least flash_scratch_elements(n, d, tiling, order, threads) elements. `counted`, when given, receives the
// main-memory traffic (elements) the kernel's block loads and stores add up to.
template <typename T>
void v2_flash(const Problem& problem, const Tiling& tiling, LoopOrder order, const T* q, const T* k, const T* v, T* o,
              std::span<T> scratch, int threads, const TileTrace* trace = nullptr, Traffic* counted = nullptr);

// Largest |o - ref| over all elements.
double max_abs_error(std::span<const float> o, std::span<const double> ref);

// FlashAttention's own tests (Dao-AILab/flash-attention, tests/test_flash_attn.py) run the kernel in fp16/bf16 and
// allow it at most twice the largest error, against an fp32 reference, of PyTorch attention in that same fp16/bf16.
// The kernels here are fp32, so the rule moves one precision up: a double reference, standard attention in fp32 as
// the baseline, plus 2^-24 (fp32's unit roundoff) for when both errors are tiny.
inline constexpr double kAccuracyEpsilon = 5.9604644775390625e-08;
inline bool meets_accuracy_rule(double flash_error, double naive_error) {
  return flash_error <= 2.0 * naive_error + kAccuracyEpsilon;
}

// Rounds to the nearest bf16 (ties to even) and back to float: what a bf16 kernel's inputs hold. The reference is
// given the same rounded values, so a bf16 kernel's error measures the kernel, not the rounding of its inputs.
float round_to_bf16(float x);
void round_to_bf16(std::span<float> values);

// Fills `values` with a fixed pseudo-random sequence in [-1, 1): every run and backend sees the same inputs.
void fill_uniform(std::span<float> values, std::uint32_t seed);

}  // namespace dlsys::attention
