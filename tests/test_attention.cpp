// Attention kernels: tile math against Algorithm 1 and the course's derived numbers, the online softmax against the
// course's worked example, and every kernel variant against the double reference at awkward sizes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include "engine/errors.h"
#include "kernels/attention/attention.h"
#include "kernels/attention/cpu/block_queue.h"
#include "kernels/attention/gpu_tiles.h"
#include "kernels/attention/online_softmax.h"
#include "kernels/attention/trace.h"

using namespace dlsys::attention;

TEST_CASE("Algorithm 1 block sizes count M in elements (course T8, derived values)") {
  // M = 48 Ki fp32 elements (192 KiB): d = 64 -> Bc = 192, Br = 64; d = 128 -> Bc = Br = 96.
  const std::int64_t m48k = sram_elements(192 * 1024, 4);
  CHECK(m48k == 49152);
  CHECK(block_cols(m48k, 64) == 192);
  CHECK(block_rows(m48k, 64) == 64);
  CHECK(block_cols(m48k, 128) == 96);
  CHECK(block_rows(m48k, 128) == 96);
  // 228 KiB of fp32 (H100 shared memory per SM): d = 64 -> Bc = 228, Br = 64.
  const std::int64_t m228k = sram_elements(228 * 1024, 4);
  CHECK(block_cols(m228k, 64) == 228);
  CHECK(block_rows(m228k, 64) == 64);
  // The lab's default, 48 KiB = 12288 fp32: d = 64 -> 48 x 48 tiles, Tr = Tc = ceil(4096 / 48) = 86.
  const Tiling t = algorithm1_tiling(sram_elements(49152, 4), 64);
  CHECK(t.br == 48);
  CHECK(t.bc == 48);
  CHECK(row_blocks(4096, t) == 86);
  CHECK(col_blocks(4096, t) == 86);
  CHECK(rows_in_block(4096, t, 85) == 4096 - 85 * 48);
  // The ceiling: M = 12288, d = 100 -> ceil(30.72) = 31.
  CHECK(block_cols(12288, 100) == 31);
  CHECK(block_rows(12288, 100) == 31);
}

TEST_CASE("tiles fit M: Q, K, V, O blocks within Algorithm 1's own budget") {
  const std::int64_t m = 12288;
  CHECK(tiling_fits(m, 64, {48, 48}));
  CHECK(tiling_fits(m, 64, {32, 64}));
  CHECK_FALSE(tiling_fits(m, 64, {48, 49}));
  CHECK_FALSE(tiling_fits(m, 64, {0, 48}));
  CHECK(tiling_fits(m, 100, algorithm1_tiling(m, 100)));  // the overshoot of the ceiling is allowed
  CHECK_FALSE(tiling_fits(3, 1, {1, 1}));                 // not even one row each of q, k, v, o
}

TEST_CASE("main-memory traffic: closed forms") {
  // Standard attention: 4nd + 4n^2 elements.
  const Traffic naive = naive_traffic(4096, 64);
  CHECK(naive.total_elements() == 4.0 * 4096 * 64 + 4.0 * 4096 * 4096);
  CHECK(naive.write_elements == 2.0 * 4096 * 4096 + 4096 * 64);
  // FlashAttention-2 order, no mask: nd (Q) + 2nd Tr (K, V per Q block) + nd (O).
  const Tiling t{48, 48};
  const Traffic fa2 = flash_traffic(4096, 64, t, false, LoopOrder::QOuter);
  CHECK(fa2.read_elements == 4096.0 * 64 + 2.0 * 4096 * 64 * 86);
  CHECK(fa2.write_elements == 4096.0 * 64);
  // Algorithm 1: init nd + 2n; K, V once; per K/V block every Q block reads (2d + 2) and writes (d + 2) per row.
  const Traffic fa1 = flash_traffic(4096, 64, t, false, LoopOrder::KvOuter);
  CHECK(fa1.read_elements == 2.0 * 4096 * 64 + 86.0 * 4096 * (2 * 64 + 2));
  CHECK(fa1.write_elements == 4096.0 * 64 + 2 * 4096 + 86.0 * 4096 * (64 + 2));
  // Causal, FA-2 order, n = 4 tiles of 1 on each side: tiles (i, j <= i): 10 tiles of one K row and one V row.
  const Traffic causal = flash_traffic(4, 1, {1, 1}, true, LoopOrder::QOuter);
  CHECK(causal.read_elements == 4 + 2 * 10);
  // Summed per Q block, not per tile: a million 1 x 1 tiles a side costs a million steps, not 10^12.
  const Traffic huge = flash_traffic(1 << 20, 1, {1, 1}, false, LoopOrder::KvOuter, 256);
  CHECK(huge.read_elements == 256.0 * 2 * (1 << 20) + 4.0 * double(1 << 20) * double(1 << 20));
  // Per worker, rows padded to 16: S^T (bc x 48), Q_i^T and O_i^T (d x 48 each), m and l (48 each).
  CHECK(flash_scratch_elements(4096, 64, t, LoopOrder::QOuter, 2) == 2 * 48 * (48 + 2 * 64 + 2));
  CHECK(flash_scratch_elements(4096, 64, t, LoopOrder::KvOuter, 2) == 2 * 48 * (48 + 2 * 64 + 2) + 2 * 4096);
  CHECK(flash_tile_scratch_elements({5, 7}, 3) == 16 * (7 + 2 * 3 + 2));  // br = 5 padded to one vector of 16
  CHECK(naive_scratch_elements(4096) == 4096 * 4096);
}

TEST_CASE("online softmax: the course's worked example, tile by tile (errata E20 corrected)") {
  const WorkedExample ex;
  const OnlineSoftmaxRow row = online_softmax_row(ex.scores, ex.values, ex.dv, ex.tile);
  const double a = std::exp(-2.0), b = std::exp(-1.0);
  REQUIRE(row.steps.size() == 2);
  // Tile 1: m = 3, l = 1 + e^-2, z = [a, 2] (the course prints "[a, , 2]").
  CHECK(row.steps[0].m_tile == 3);
  CHECK(row.steps[0].m == 3);
  CHECK(row.steps[0].l == doctest::Approx(1 + a).epsilon(1e-15));
  CHECK(row.steps[0].z[0] == doctest::Approx(a).epsilon(1e-15));
  CHECK(row.steps[0].z[1] == doctest::Approx(2).epsilon(1e-15));
  CHECK(row.steps[0].alpha == 0);  // nothing before: exp(-inf - 3) = 0
  // Tile 2: m_tile = 2, l_tile = a + 1, z_tile = [3 - a, 1 + a]; merge with m = 3: l = (a + 1) + (a + 1) b, a scalar.
  CHECK(row.steps[1].m_tile == 2);
  CHECK(row.steps[1].l_tile == doctest::Approx(1 + a).epsilon(1e-15));
  CHECK(row.steps[1].z_tile[0] == doctest::Approx(3 - a).epsilon(1e-15));
  CHECK(row.steps[1].z_tile[1] == doctest::Approx(1 + a).epsilon(1e-15));
  CHECK(row.steps[1].alpha == 1);
  CHECK(row.steps[1].beta == doctest::Approx(b).epsilon(1e-15));
  CHECK(row.steps[1].m == 3);
  CHECK(std::fabs(row.steps[1].l - 1.55300179) < 1e-8);
  CHECK(std::fabs(row.steps[1].z[0] - 1.18918654) < 1e-8);
  CHECK(std::fabs(row.steps[1].z[1] - 2.41766651) < 1e-8);
  // o = z / l, one vector, the same as plain softmax.
  CHECK(std::fabs(row.o[0] - 0.76573417) < 1e-8);
  CHECK(std::fabs(row.o[1] - 1.55676994) < 1e-8);
  const std::vector<double> w = softmax_weights(ex.scores);
  CHECK(std::fabs(w[0] - 0.08714) < 1e-5);
  CHECK(std::fabs(w[1] - 0.64391) < 1e-5);
  CHECK(std::fabs(w[2] - 0.03206) < 1e-5);
  CHECK(std::fabs(w[3] - 0.23688) < 1e-5);
  const std::vector<double> plain = weighted_sum(w, ex.values, ex.dv);
  CHECK(std::fabs(plain[0] - row.o[0]) < 1e-15);
  CHECK(std::fabs(plain[1] - row.o[1]) < 1e-15);
}

TEST_CASE("the tiled kernel reproduces the worked example in both loop orders") {
  const WorkedExample ex;
  const OnlineSoftmaxRow row = online_softmax_row(ex.scores, ex.values, ex.dv, ex.tile);
  for (LoopOrder order : {LoopOrder::KvOuter, LoopOrder::QOuter}) {
    const FlashTrace trace = trace_worked_example(order);
    REQUIRE(trace.tiles.size() == 2);
    for (std::size_t t = 0; t < 2; ++t) {
      const TileRecord& rec = trace.tiles[t];
      CHECK(rec.j == std::int64_t(t));
      const TileRowState& s = rec.row_states[0];
      CHECK(s.m_tile == row.steps[t].m_tile);
      CHECK(s.l_tile == doctest::Approx(row.steps[t].l_tile).epsilon(1e-14));
      CHECK(s.m_new == row.steps[t].m);
      CHECK(s.l_new == doctest::Approx(row.steps[t].l).epsilon(1e-14));
      CHECK(s.beta == doctest::Approx(row.steps[t].beta).epsilon(1e-14));
      // Algorithm 1 holds O normalised (z / l); FlashAttention-2 holds z itself.
      const double scale = rec.output_normalised ? 1.0 / row.steps[t].l : 1.0;
      CHECK(rec.output[0] == doctest::Approx(row.steps[t].z[0] * scale).epsilon(1e-14));
      CHECK(rec.output[1] == doctest::Approx(row.steps[t].z[1] * scale).epsilon(1e-14));
    }
    CHECK(std::fabs(trace.output[0] - 0.76573417) < 1e-8);
    CHECK(std::fabs(trace.output[1] - 1.55676994) < 1e-8);
  }
}

namespace {

struct Case {
  std::int64_t n, d;
  bool causal;
  Tiling tiling;
  int threads;
};

struct Inputs {
  std::vector<float> q, k, v;
  std::vector<double> ref;
};

Inputs make_inputs(const Problem& p, std::uint32_t seed) {
  const std::size_t count = static_cast<std::size_t>(p.n * p.d);
  Inputs in{std::vector<float>(count), std::vector<float>(count), std::vector<float>(count),
            std::vector<double>(count)};
  fill_uniform(in.q, seed);
  fill_uniform(in.k, seed + 1);
  fill_uniform(in.v, seed + 2);
  reference(p, in.q.data(), in.k.data(), in.v.data(), in.ref.data(), 2);
  return in;
}

}  // namespace

TEST_CASE("naive and flash (both orders) match the double reference at awkward sizes; flash meets the accuracy rule") {
  const Case cases[] = {
      {1, 1, false, {1, 1}, 1},      {1, 3, true, {4, 4}, 2},      {7, 3, false, {2, 3}, 2},
      {7, 3, true, {3, 2}, 3},       {33, 16, false, {5, 7}, 2},   {33, 16, true, {16, 16}, 4},
      {100, 64, true, {48, 48}, 2},  {100, 64, false, {64, 7}, 3}, {130, 17, true, {17, 33}, 2},
      {257, 64, false, {48, 48}, 2},
  };
  for (const Case& c : cases) {
    const Problem p{c.n, c.d, c.causal, default_scale(c.d)};
    const Inputs in = make_inputs(p, 11 + std::uint32_t(c.n));
    std::vector<float> o(in.q.size());
    std::vector<float> s(static_cast<std::size_t>(naive_scratch_elements(c.n)));
    v1_naive(p, in.q.data(), in.k.data(), in.v.data(), o.data(), s, c.threads);
    const double naive_err = max_abs_error(o, in.ref);
    INFO("n=", c.n, " d=", c.d, " causal=", c.causal, " br=", c.tiling.br, " bc=", c.tiling.bc);
    CHECK(naive_err < 1e-5);
    for (LoopOrder order : {LoopOrder::KvOuter, LoopOrder::QOuter}) {
      std::vector<float> scratch(
          static_cast<std::size_t>(flash_scratch_elements(c.n, c.d, c.tiling, order, c.threads)));
      Traffic counted;
      v2_flash<float>(p, c.tiling, order, in.q.data(), in.k.data(), in.v.data(), o.data(), scratch, c.threads, nullptr,
                      &counted);
      const double flash_err = max_abs_error(o, in.ref);
      INFO("order=", order == LoopOrder::KvOuter ? "fa1" : "fa2", " naive_err=", naive_err, " flash_err=", flash_err);
      CHECK(meets_accuracy_rule(flash_err, naive_err));
      // The kernel's own count of block loads and stores equals the closed form.
      const Traffic theory =
          flash_traffic(c.n, c.d, c.tiling, c.causal, order, flash_workers(c.n, c.tiling, c.threads));
      CHECK(counted.read_elements == theory.read_elements);
      CHECK(counted.write_elements == theory.write_elements);
    }
  }
}

// The measured kernels hold 16 queries per vector (AVX-512; 8 or 4 elsewhere) in register blocks of 48 queries by 8
// keys or 8 value columns. These sizes leave a part of every such unit: a last vector with one or fifteen queries,
// one, two or three vectors per block, Q blocks wider than a register block, key and value blocks cut short, d below,
// between and above whole vectors, n not a multiple of the tiles or of standard attention's 48-query blocks.
TEST_CASE("naive and flash match the reference where n, d and the tiles cut vectors and register blocks short") {
  const Case cases[] = {
      {17, 1, false, {5, 13}, 2},    {17, 1, true, {16, 3}, 1},     {49, 5, false, {17, 9}, 2},
      {49, 5, true, {1, 49}, 3},     {97, 17, true, {33, 8}, 2},    {97, 17, false, {48, 48}, 3},
      {130, 33, true, {100, 16}, 2}, {130, 33, false, {49, 65}, 2}, {161, 65, true, {15, 31}, 2},
      {161, 100, false, {47, 7}, 1}, {200, 64, true, {48, 48}, 2},  {200, 64, false, {64, 40}, 3},
  };
  for (const Case& c : cases) {
    const Problem p{c.n, c.d, c.causal, default_scale(c.d)};
    const Inputs in = make_inputs(p, 29 + std::uint32_t(c.n + c.d));
    std::vector<float> o(in.q.size());
    std::vector<float> s(static_cast<std::size_t>(naive_scratch_elements(c.n)));
    v1_naive(p, in.q.data(), in.k.data(), in.v.data(), o.data(), s, c.threads);
    const double naive_err = max_abs_error(o, in.ref);
    INFO("n=", c.n, " d=", c.d, " causal=", c.causal, " br=", c.tiling.br, " bc=", c.tiling.bc, " threads=", c.threads);
    CHECK(naive_err < 1e-5);
    for (LoopOrder order : {LoopOrder::KvOuter, LoopOrder::QOuter}) {
      std::vector<float> scratch(static_cast<std::size_t>(flash_scratch_elements(c.n, c.d, c.tiling, order, c.threads)),
                                 NAN);  // the kernel must not read scratch it has not written
      std::fill(o.begin(), o.end(), NAN);
      v2_flash<float>(p, c.tiling, order, in.q.data(), in.k.data(), in.v.data(), o.data(), scratch, c.threads);
      const double flash_err = max_abs_error(o, in.ref);
      INFO("order=", order == LoopOrder::KvOuter ? "fa1" : "fa2", " naive_err=", naive_err, " flash_err=", flash_err);
      CHECK(flash_err < 1e-5);
      CHECK(meets_accuracy_rule(flash_err, naive_err));
    }
  }
}

TEST_CASE("the measured vector fold gives the output of the traced plain fold on the same inputs") {
  for (const bool causal : {false, true})
    for (LoopOrder order : {LoopOrder::KvOuter, LoopOrder::QOuter}) {
      const FlashTrace trace = trace_flash({37, 7, causal, {5, 6}, order, 13});  // plain fold, one thread
      const Problem& p = trace.problem;
      const std::vector<float> q(trace.q.begin(), trace.q.end()), k(trace.k.begin(), trace.k.end()),
          v(trace.v.begin(), trace.v.end());  // the trace's float inputs, exactly
      std::vector<float> o(q.size());
      std::vector<float> scratch(static_cast<std::size_t>(flash_scratch_elements(p.n, p.d, trace.tiling, order, 2)));
      v2_flash<float>(p, trace.tiling, order, q.data(), k.data(), v.data(), o.data(), scratch, 2);
      INFO("causal=", causal, " order=", order == LoopOrder::KvOuter ? "fa1" : "fa2");
      for (std::size_t e = 0; e < o.size(); ++e) CHECK(std::fabs(o[e] - trace.output[e]) < 1e-6);
    }
}

TEST_CASE("the block queue hands out every block once: in order to one worker, last first to several") {
  BlockQueue one(4, 1);
  std::vector<std::int64_t> order;
  for (std::int64_t b = 0; one.take(b);) order.push_back(b);
  CHECK(order == std::vector<std::int64_t>{0, 1, 2, 3});
  BlockQueue shared(1000, 2);
  std::vector<int> times_taken(1000, 0);
  std::vector<std::int64_t> first_taken(2, -1);
  std::thread other([&] {
    for (std::int64_t b = 0; shared.take(b);) {
      if (first_taken[1] < 0) first_taken[1] = b;
      ++times_taken[std::size_t(b)];  // each block goes to one thread only, so no two threads write one element
    }
  });
  for (std::int64_t b = 0; shared.take(b);) {
    if (first_taken[0] < 0) first_taken[0] = b;
    ++times_taken[std::size_t(b)];
  }
  other.join();
  CHECK(std::count(times_taken.begin(), times_taken.end(), 1) == 1000);
  CHECK(std::max(first_taken[0], first_taken[1]) == 999);  // the last block went out first
}

TEST_CASE("causal first row attends only to itself: output equals v_0 exactly") {
  const Problem p{9, 5, true, default_scale(5)};
  const Inputs in = make_inputs(p, 3);
  std::vector<float> o(in.q.size());
  std::vector<float> scratch(static_cast<std::size_t>(flash_scratch_elements(9, 5, {4, 4}, LoopOrder::QOuter, 1)));
  v2_flash<float>(p, {4, 4}, LoopOrder::QOuter, in.q.data(), in.k.data(), in.v.data(), o.data(), scratch, 1);
  for (int e = 0; e < 5; ++e) CHECK(o[e] == in.v[e]);
}

TEST_CASE("the trace hook records every tile in loop order with the kernel's own state") {
  for (LoopOrder order : {LoopOrder::KvOuter, LoopOrder::QOuter}) {
    const FlashTrace trace = trace_flash({10, 4, false, {3, 4}, order, 5});  // Tr = 4, Tc = 3, ragged both ways
    REQUIRE(trace.tiles.size() == 12);
    for (std::size_t t = 0; t < trace.tiles.size(); ++t) {
      const auto& rec = trace.tiles[t];
      // Algorithm 1: j outer, i inner. FlashAttention-2: i outer, j inner.
      if (order == LoopOrder::KvOuter) {
        CHECK(rec.j == std::int64_t(t / 4));
        CHECK(rec.i == std::int64_t(t % 4));
      } else {
        CHECK(rec.i == std::int64_t(t / 3));
        CHECK(rec.j == std::int64_t(t % 3));
      }
      CHECK(rec.rows == (rec.i == 3 ? 1 : 3));
      CHECK(rec.cols == (rec.j == 2 ? 2 : 4));
      for (const TileRowState& s : rec.row_states) {
        CHECK(s.m_new == std::max(s.m_old, s.m_tile));
        CHECK(s.l_new == doctest::Approx(s.alpha * s.l_old + s.beta * s.l_tile));
      }
    }
    for (std::size_t e = 0; e < trace.output.size(); ++e) CHECK(std::fabs(trace.output[e] - trace.reference[e]) < 1e-6);
    CHECK(trace.counted.total_elements() == flash_traffic(10, 4, {3, 4}, false, order).total_elements());
    // The per-tile counters grow tile by tile and end at the total (FlashAttention-2 writes the last O_i after its
    // last tile: 1 row of 4).
    for (std::size_t t = 1; t < trace.tiles.size(); ++t)
      CHECK(trace.tiles[t].traffic_so_far.total_elements() > trace.tiles[t - 1].traffic_so_far.total_elements());
    const double last = trace.tiles.back().traffic_so_far.total_elements();
    CHECK(last == trace.counted.total_elements() - (order == LoopOrder::QOuter ? 4.0 : 0.0));
  }
  // Causal: tiles wholly above the diagonal are skipped. n = 8, 4 x 4 tiles: (0,0), (1,0), (1,1) only.
  const FlashTrace causal = trace_flash({8, 2, true, {4, 4}, LoopOrder::QOuter, 1});
  REQUIRE(causal.tiles.size() == 3);
  CHECK(causal.tiles[0].scores[1] == -INFINITY);  // row 0 cannot see key 1
}

TEST_CASE("trace limits are bad input") {
  CHECK_THROWS_AS(trace_flash({65, 4, false, {4, 4}, LoopOrder::QOuter, 1}), dlsys::BadInput);
  CHECK_THROWS_AS(trace_flash({16, 0, false, {4, 4}, LoopOrder::QOuter, 1}), dlsys::BadInput);
  CHECK_THROWS_AS(trace_flash({16, 4, false, {17, 4}, LoopOrder::QOuter, 1}), dlsys::BadInput);
}

// --- The GPU kernels' tile arithmetic (kernels/attention/gpu_tiles.h), checked here where no GPU is needed ---------

TEST_CASE("gpu tiles: a block visits exactly the K/V tiles with a visible key, and masks every tile that hides one") {
  for (const std::int64_t n : {1, 7, 63, 64, 65, 129, 1000})
    for (const auto& tile : {std::pair<std::int64_t, std::int64_t>{64, 64}, {128, 64}})
      for (const bool causal : {false, true}) {
        // Not a structured binding: under clang (ThreadSanitizer's build) INFO's lambda cannot capture one.
        const std::int64_t br = tile.first, bc = tile.second;
        INFO("n=", n, " br=", br, " bc=", bc, " causal=", causal);
        for (std::int64_t i = 0; i * br < n; ++i) {
          const std::int64_t tiles = gpu::kv_tiles_for_block(n, br, bc, causal, i);
          for (std::int64_t j = 0; j * bc < n; ++j) {
            bool visible = false, hidden = false;  // over the block's real rows and the tile's slots
            for (std::int64_t r = i * br; r < std::min(n, (i + 1) * br); ++r)
              for (std::int64_t key = j * bc; key < (j + 1) * bc; ++key) {
                const bool sees = key < n && (!causal || key <= r);
                visible = visible || sees;
                hidden = hidden || !sees;
              }
            CHECK((j < tiles) == visible);
            if (j < tiles && hidden) CHECK(gpu::tile_needs_mask(n, br, bc, causal, i, j));
            // Tiles wholly inside n and below the diagonal never pay for comparisons.
            if (j < tiles && (j + 1) * bc <= n && (!causal || (j + 1) * bc - 1 <= i * br))
              CHECK_FALSE(gpu::tile_needs_mask(n, br, bc, causal, i, j));
          }
        }
      }
  CHECK(gpu::block_for_launch_index(10, 0, true) == 9);  // causal: the longest block first
  CHECK(gpu::block_for_launch_index(10, 0, false) == 0);
}

TEST_CASE("gpu tiles: S's accumulator fragments are, register for register, P's A fragments (no shared memory)") {
  for (int lane = 0; lane < 32; ++lane)
    for (int kk = 0; kk < 4; ++kk)
      for (int reg = 0; reg < 4; ++reg)
        for (int half = 0; half < 2; ++half) {
          // What the A fragment of keys 16kk.. must hold at (reg, half), and where the kernel takes it from.
          const int row = gpu::mma_a_row(lane, reg), key = 16 * kk + gpu::mma_a_col(lane, reg, half);
          const int tile = gpu::p_source_key_tile(kk, reg), c_reg = gpu::p_source_c_reg(reg, half);
          CHECK(gpu::mma_c_row(lane, c_reg) == row);
          CHECK(8 * tile + gpu::mma_c_col(lane, c_reg) == key);
        }
}

TEST_CASE("gpu tiles: ldmatrix row addresses give each lane the mma fragment elements it needs") {
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i)
      for (int h = 0; h < 2; ++h) {
        const int g = lane / 4, t = lane % 4;
        // Non-transposed: register i of a lane holds row lane/4, columns 2(lane%4) + h of matrix i, whose rows the
        // lanes 8i .. 8i + 7 address.
        const int giver = 8 * i + g;
        // Q as A (16 rows x 16 d).
        CHECK(gpu::ldmatrix_a_row(giver) == gpu::mma_a_row(lane, i));
        CHECK(gpu::ldmatrix_a_col(giver) + 2 * t + h == gpu::mma_a_col(lane, i, h));
        // K as B: key tile 2p + i/2, register i%2 needs B[k = 2t + h + 8(i%2)][n = g] = K[key g][d k].
        CHECK(gpu::ldmatrix_k_row(giver) == 8 * (i / 2) + g);
        CHECK(gpu::ldmatrix_k_col(giver) + 2 * t + h == 8 * (i % 2) + 2 * t + h);
        // V transposed: register i holds stored row 2t + h, column g of matrix i; d tile 2p + i/2, register i%2
        // needs B[k = 2t + h + 8(i%2)][n = g] = V[key k][d g].
        const int trans_giver = 8 * i + 2 * t + h;
        CHECK(gpu::ldmatrix_v_row(trans_giver) == 8 * (i % 2) + 2 * t + h);
        CHECK(gpu::ldmatrix_v_col(trans_giver) + g == 8 * (i / 2) + g);
      }
}

TEST_CASE("gpu tiles: padded rows put the 8 rows a phase reads in 8 different bank groups") {
  for (const int d : {32, 64, 128}) {
    INFO("d=", d);
    // bf16 rows read by ldmatrix: 8 consecutive rows at one column.
    for (int col = 0; col < d; col += 8) {
      std::vector<int> groups;
      for (int r = 0; r < 8; ++r) groups.push_back(gpu::bank_group((r * gpu::tensor::row_elements(d) + col) * 2));
      std::sort(groups.begin(), groups.end());
      CHECK(std::unique(groups.begin(), groups.end()) == groups.end());
    }
    // fp32 K rows read as float4 by lanes tx = 0..7 (keys tx + 8c).
    for (int c = 0; c < gpu::registers::kKeysPerThread; ++c) {
      std::vector<int> groups;
      for (int tx = 0; tx < 8; ++tx)
        groups.push_back(gpu::bank_group((tx + 8 * c) * gpu::registers::row_floats(d) * 4));
      std::sort(groups.begin(), groups.end());
      CHECK(std::unique(groups.begin(), groups.end()) == groups.end());
    }
    // Shared memory the kernels ask for, against the 227 KiB a Hopper block may have.
    CHECK(gpu::tensor::shared_bytes(d) <= 227 * 1024);
    CHECK(gpu::registers::shared_floats(d) * 4 <= 227 * 1024);
  }
  CHECK(gpu::tensor::shared_bytes(64) == (128 + 4 * 64) * 72 * 2);
}

TEST_CASE("bf16 rounding: nearest, ties to even; sampled rows and their reference") {
  CHECK(round_to_bf16(1.0f) == 1.0f);
  CHECK(round_to_bf16(1.0f + 0x1p-8f) == 1.0f);                       // halfway, to the even neighbour
  CHECK(round_to_bf16(1.0f + 3 * 0x1p-8f) == 1.0f + 0x1p-6f);         // halfway, to the even neighbour above
  CHECK(round_to_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 1.0f + 0x1p-7f);  // past halfway
  CHECK(round_to_bf16(-2.5f) == -2.5f);
  CHECK(std::isinf(round_to_bf16(INFINITY)));

  CHECK(sample_rows(7, 16) == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6});
  const auto rows = sample_rows(4096, 16);
  REQUIRE(rows.size() == 16);
  CHECK(rows.front() == 0);
  CHECK(rows.back() == 4095);
  CHECK(std::is_sorted(rows.begin(), rows.end()));

  const Problem p{65, 8, true, default_scale(8)};
  std::vector<float> q(65 * 8), k(65 * 8), v(65 * 8);
  fill_uniform(q, 1);
  fill_uniform(k, 2);
  fill_uniform(v, 3);
  std::vector<double> full(65 * 8);
  reference(p, q.data(), k.data(), v.data(), full.data(), 2);
  const auto some = sample_rows(65, 5);
  std::vector<double> sampled(some.size() * 8);
  reference_rows(p, q.data(), k.data(), v.data(), some, sampled.data(), 2);
  std::vector<float> o(full.begin(), full.end());
  for (std::size_t r = 0; r < some.size(); ++r)
    for (int e = 0; e < 8; ++e) CHECK(sampled[r * 8 + e] == full[std::size_t(some[r]) * 8 + e]);
  CHECK(max_abs_error_rows(p, o.data(), some, sampled) < 1e-6);
  o[std::size_t(some[2]) * 8 + 3] = NAN;
  CHECK(std::isinf(max_abs_error_rows(p, o.data(), some, sampled)));
}
