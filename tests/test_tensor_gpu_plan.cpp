// The CUDA tensor layer's host-side logic, checked on the CPU: where t ranks go on the GPUs there are, what each rank
// allocates in device memory, the bytes the GPU ring copies per rank for one call, the shard fill every backend shares
// (a rank's shard is the unsharded tensor's slice), and the comparison the GPU results go through (a NaN fails it).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "engine/ledger.h"
#include "kernels/collectives/ring_schedule.h"
#include "kernels/tensor/activation_memory.h"
#include "kernels/tensor/gpu_plan.h"
#include "kernels/tensor/shard_fill.h"
#include "kernels/tensor/tp_layer.h"

using namespace dlsys;
using namespace dlsys::tensor;
using collectives::Op;

TEST_CASE("tensor GPU placement: one GPU per rank when there are enough, else streams on GPU 0, labelled") {
  const GpuPlacement one = plan_gpu_placement(1, 1, true);
  CHECK(one.devices == 1);
  CHECK_FALSE(one.emulated);
  const GpuPlacement emulated = plan_gpu_placement(4, 1, true);
  CHECK(emulated.devices == 1);
  CHECK(emulated.emulated);
  CHECK(emulated.collectives == GpuCollectives::Ring);  // NCCL refuses two ranks on one GPU
  CHECK(emulated.description.find("4 ranks emulated on GPU 0 as 4 CUDA streams") == 0);
  const GpuPlacement nccl = plan_gpu_placement(2, 8, true);
  CHECK(nccl.devices == 2);
  CHECK_FALSE(nccl.emulated);
  CHECK(nccl.collectives == GpuCollectives::Nccl);
  CHECK(nccl.description.find("one per GPU") != std::string::npos);
  CHECK(plan_gpu_placement(2, 2, false).collectives == GpuCollectives::Ring);
  CHECK(plan_gpu_placement(4, 2, true).emulated);  // too few GPUs for one each: all on GPU 0
}

TEST_CASE("tensor GPU ring: bytes per rank are 2(t-1)/t of the buffer for an all-reduce, (t-1)/t for each half") {
  for (int t : {2, 3, 4, 8}) {
    CAPTURE(t);
    const std::int64_t count = 24 * 40;  // divisible by every t here
    for (int p = 0; p < t; ++p) {
      CHECK(gpu_ring_bytes_sent(Op::AllReduce, t, p, count) == 2 * (t - 1) * count / t * 4);  // p: a rank
      CHECK(gpu_ring_bytes_sent(Op::ReduceScatter, t, p, count) == (t - 1) * count / t * 4);
      CHECK(gpu_ring_bytes_sent(Op::AllGather, t, p, count) == (t - 1) * count / t * 4);
    }
    // Uneven chunks: every chunk still travels t - 1 times in each half, so the ranks together send that.
    const std::int64_t uneven = 1001;
    std::int64_t total = 0;
    for (int p = 0; p < t; ++p) total += gpu_ring_bytes_sent(Op::AllReduce, t, p, uneven);
    CHECK(total == 2 * (t - 1) * uneven * 4);
  }
  CHECK(gpu_ring_bytes_sent(Op::AllReduce, 1, 0, 100) == 0);
}

namespace {

// Plays the GPU ring's steps on host buffers, in place, as the streams do: within a step every rank's send leaves
// before any arrival is applied. Checks what makes that equal to the GPU's order: in a step each rank receives once,
// and no rank receives into the range it is sending from.
void play_ring(collectives::Op op, std::vector<std::vector<double>>& buffers) {
  const int n = int(buffers.size());
  const std::int64_t count = std::int64_t(buffers.front().size());
  for (const std::vector<RingTransfer>& step : gpu_ring_steps(op, n, count)) {
    REQUIRE(step.size() == std::size_t(n));
    std::vector<int> received(std::size_t(n), 0);
    std::vector<std::vector<double>> in_flight;
    for (const RingTransfer& t : step) {
      CHECK(t.to == (t.from + 1) % n);  // rank r's neighbour is r + 1, as the ring positions are shifted by one
      ++received[std::size_t(t.to)];
      const auto& from = buffers[std::size_t(t.from)];
      in_flight.emplace_back(from.begin() + t.begin, from.begin() + t.begin + t.size);
    }
    for (int r = 0; r < n; ++r) CHECK(received[std::size_t(r)] == 1);
    for (const RingTransfer& t : step)
      for (const RingTransfer& mine : step)
        if (mine.from == t.to && t.size > 0 && mine.size > 0)
          CHECK((t.begin + t.size <= mine.begin || mine.begin + mine.size <= t.begin));
    for (std::size_t i = 0; i < step.size(); ++i) {
      const RingTransfer& t = step[i];
      auto& to = buffers[std::size_t(t.to)];
      for (std::int64_t e = 0; e < t.size; ++e)
        to[std::size_t(t.begin + e)] =
            t.reduce ? to[std::size_t(t.begin + e)] + in_flight[i][std::size_t(e)] : in_flight[i][std::size_t(e)];
    }
  }
}

double input(int rank, std::int64_t i) { return 1000.0 * (rank + 1) + double(i); }

}  // namespace

TEST_CASE("tensor GPU ring, played on the host: all-reduce sums everywhere, rank r keeps or brings chunk r") {
  using collectives::chunk_begin;
  using collectives::chunk_size;
  for (int n : {2, 3, 4, 5})
    for (std::int64_t count : {std::int64_t(1), std::int64_t(7), std::int64_t(24), std::int64_t(1001)}) {
      CAPTURE(n);
      CAPTURE(count);
      auto fresh = [&] {
        std::vector<std::vector<double>> b(static_cast<std::size_t>(n),
                                           std::vector<double>(static_cast<std::size_t>(count)));
        for (int r = 0; r < n; ++r)
          for (std::int64_t i = 0; i < count; ++i) b[std::size_t(r)][std::size_t(i)] = input(r, i);
        return b;
      };
      auto sum = [&](std::int64_t i) {
        double s = 0;
        for (int r = 0; r < n; ++r) s += input(r, i);
        return s;
      };
      auto all = fresh();
      play_ring(collectives::Op::AllReduce, all);
      for (int r = 0; r < n; ++r)
        for (std::int64_t i = 0; i < count; ++i) CHECK(all[std::size_t(r)][std::size_t(i)] == sum(i));
      auto scattered = fresh();
      play_ring(collectives::Op::ReduceScatter, scattered);
      for (int r = 0; r < n; ++r)
        for (std::int64_t i = chunk_begin(count, n, r); i < chunk_begin(count, n, r) + chunk_size(count, n, r); ++i)
          CHECK(scattered[std::size_t(r)][std::size_t(i)] == sum(i));
      // All-gather: rank r starts with only chunk r valid (the rest NaN) and ends with every rank's chunk.
      auto gathered = fresh();
      for (int r = 0; r < n; ++r)
        for (std::int64_t i = 0; i < count; ++i) {
          const bool own = i >= chunk_begin(count, n, r) && i < chunk_begin(count, n, r + 1);
          if (!own) gathered[std::size_t(r)][std::size_t(i)] = std::nan("");
        }
      play_ring(collectives::Op::AllGather, gathered);
      for (int r = 0; r < n; ++r)
        for (int owner = 0; owner < n; ++owner)
          for (std::int64_t i = chunk_begin(count, n, owner); i < chunk_begin(count, n, owner + 1); ++i)
            CHECK(gathered[std::size_t(r)][std::size_t(i)] == input(owner, i));
    }
}

TEST_CASE("tensor GPU ring: with sequence parallelism chunk r of an s b h buffer is rank r's block of rows") {
  for (int t : {2, 4}) {
    const LayerShape s{.batch = 3, .seq = 8, .hidden = 12, .heads = 4, .ranks = t, .sequence_parallel = true};
    for (int r = 0; r < t; ++r) {
      CHECK(collectives::chunk_begin(s.tokens() * s.hidden, t, r) == s.first_local_token(r) * s.hidden);
      CHECK(collectives::chunk_size(s.tokens() * s.hidden, t, r) == s.local_tokens() * s.hidden);
    }
  }
}

TEST_CASE("tensor GPU memory: a rank holds the CPU rank's buffers plus the ring's landing chunk and row statistics") {
  const LayerShape s{.batch = 2, .seq = 8, .hidden = 16, .heads = 4, .ranks = 4, .sequence_parallel = true};
  const std::int64_t rank = gpu_rank_device_bytes(s);
  CHECK(gpu_landing_floats(s) == 2 * 8 * 16 / 4);
  CHECK(rank == rank_buffer_counts(s).bytes(4) + 4 * (2 * 8 * 16 / 4) + 4 * 2 * s.local_tokens());
  // Fewer than 4 tokens: the norms' 4h all-reduce has the largest chunk.
  const LayerShape tiny{.batch = 1, .seq = 2, .hidden = 16, .heads = 4, .ranks = 4, .sequence_parallel = true};
  CHECK(gpu_landing_floats(tiny) == 4 * 16 / 4);
  CHECK(gpu_landing_floats(LayerShape{.batch = 1, .seq = 2, .hidden = 16, .heads = 4, .ranks = 1}) == 1);
  // The activations in it are the lab's formula, as on the CPU.
  const RankBufferCounts c = rank_buffer_counts(s);
  CHECK(4 * c.activation_values + c.activation_mask_bytes == lab_layer_bytes(s).total());
  // Emulated, GPU 0 holds every rank; one GPU per rank, just one.
  CHECK(gpu0_bytes_needed(s, plan_gpu_placement(4, 1, false)) == 4 * (rank + kGpuRankMarginBytes));
  CHECK(gpu0_bytes_needed(s, plan_gpu_placement(4, 4, false)) == rank + kGpuRankMarginBytes);
}

TEST_CASE("tensor shard fill: every rank's shard is its slice of the unsharded tensors, with or without SP") {
  for (bool sp : {false, true}) {
    CAPTURE(sp);
    const LayerShape whole{.batch = 2, .seq = 4, .hidden = 8, .heads = 4, .ranks = 1};
    LayerShape split = whole;
    split.ranks = 2;
    split.sequence_parallel = sp;
    const std::int64_t h = 8, n = 8, hl = 4, f = 16;
    auto filled = [](const LayerShape& s, int rank) {
      const std::int64_t rows = s.local_tokens(), hh = s.hidden, l = s.hidden_per_rank(), ff = s.ffn_per_rank();
      std::vector<std::vector<float>> v{
          std::vector<float>(std::size_t(rows * hh)),  std::vector<float>(std::size_t(rows * hh)),
          std::vector<float>(std::size_t(hh * 3 * l)), std::vector<float>(std::size_t(l * hh)),
          std::vector<float>(std::size_t(hh * ff)),    std::vector<float>(std::size_t(ff * hh)),
          std::vector<float>(std::size_t(4 * hh))};
      fill_rank(s, rank,
                RankFillTargets<float>{v[0].data(), v[1].data(), v[2].data(), v[3].data(), v[4].data(), v[5].data(),
                                       v[6].data()});
      return v;
    };
    const auto all = filled(whole, 0);
    for (int r = 0; r < 2; ++r) {
      CAPTURE(r);
      const auto mine = filled(split, r);
      const std::int64_t row0 = split.first_local_token(r), rows = split.local_tokens();
      for (std::int64_t i = 0; i < rows * h; ++i) {
        CHECK(mine[0][std::size_t(i)] == all[0][std::size_t(row0 * h + i)]);
        CHECK(mine[1][std::size_t(i)] == all[1][std::size_t(row0 * h + i)]);
      }
      for (std::int64_t i = 0; i < h; ++i)
        for (std::int64_t j = 0; j < 3 * hl; ++j)
          CHECK(mine[2][std::size_t(i * 3 * hl + j)] ==
                all[2][std::size_t(i * 3 * h + wqkv_global_column(split, r, j))]);
      for (std::int64_t i = 0; i < hl * h; ++i) CHECK(mine[3][std::size_t(i)] == all[3][std::size_t(r * hl * h + i)]);
      for (std::int64_t i = 0; i < h; ++i)
        for (std::int64_t j = 0; j < f; ++j)
          CHECK(mine[4][std::size_t(i * f + j)] == all[4][std::size_t(i * 4 * h + r * f + j)]);
      for (std::int64_t i = 0; i < f * h; ++i) CHECK(mine[5][std::size_t(i)] == all[5][std::size_t(r * f * h + i)]);
      CHECK(mine[6] == all[6]);
    }
    (void)n;
  }
}

TEST_CASE("tensor comparison from host copies: equal to the layer's own, and a NaN anywhere fails it") {
  SingleThreadedBlas blas;
  MemoryLedger ledger;
  const LayerShape shape{.batch = 2, .seq = 4, .hidden = 8, .heads = 2, .ranks = 2, .sequence_parallel = true};
  const RankLayer<double> reference = stepped_reference_layer(shape, ledger);
  TensorParallelLayer layer(shape, ledger);
  layer.step();
  const std::vector<TensorError> direct = compare_with_reference(layer, reference);
  // Copies, as the GPU path makes them, then the same comparison.
  const std::int64_t rows_h = shape.local_tokens() * shape.hidden;
  std::vector<std::vector<float>> outputs;
  std::vector<RankResults> views;
  for (int r = 0; r < 2; ++r) {
    RankResults v = results_of(layer.rank(r));
    outputs.emplace_back(v.output, v.output + rows_h);
    views.push_back(v);
  }
  for (int r = 0; r < 2; ++r) views[std::size_t(r)].output = outputs[std::size_t(r)].data();
  const std::vector<TensorError> copied = compare_with_reference(shape, views, reference);
  REQUIRE(copied.size() == direct.size());
  for (std::size_t i = 0; i < direct.size(); ++i) CHECK(copied[i].max_rel_err == direct[i].max_rel_err);
  outputs[1][3] = std::numeric_limits<float>::quiet_NaN();  // an element a GPU kernel never wrote
  const std::vector<TensorError> broken = compare_with_reference(shape, views, reference);
  CHECK(broken.front().key == "output");
  CHECK(std::isnan(broken.front().max_rel_err));
  CHECK_FALSE(broken.front().max_rel_err <= 1e-4);  // so the error bar is not met
}
