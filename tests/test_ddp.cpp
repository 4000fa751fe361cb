// Data parallelism on CPU rank threads: bucket assignment against its legality rules, the ring's bytes against the
// closed form, the batch-split identity on the course's batch of 10 over 5 workers, and every variant's weights
// against single-rank training on the full batch.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>

#include "engine/errors.h"
#include "engine/ledger.h"
#include "kernels/ddp/batch_split.h"
#include "kernels/ddp/buckets.h"
#include "kernels/ddp/simulate.h"
#include "kernels/ddp/trainer.h"
#include "kernels/ddp/wire.h"
#include "kernels/precision/float_format.h"

using namespace dlsys;
using namespace dlsys::ddp;

TEST_CASE("ddp buckets: contiguous, cut from the end in reverse layer order, each the cap but the last") {
  const training::StackShape shape{5, 16};  // 5 layers x 512 parameters = 2560
  for (std::int64_t cap : {2, 6, 100, 512, 700, 2560, 5000}) {
    const std::vector<Bucket> buckets = assign_buckets(shape, cap);
    INFO("cap " << cap);
    REQUIRE(std::int64_t(buckets.size()) == bucket_count(shape, cap));
    CHECK(buckets.front().end == training::parameter_count(shape));
    CHECK(buckets.back().begin == 0);
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      const Bucket& k = buckets[b];
      CHECK(k.elements() > 0);
      if (b + 1 < buckets.size()) {
        CHECK(k.elements() == cap);
        CHECK(buckets[b + 1].end == k.begin);                  // contiguous, no gap, no overlap
        CHECK(buckets[b + 1].lowest_layer <= k.lowest_layer);  // later buckets hold earlier layers
      } else {
        CHECK(k.elements() <= cap);
      }
      CHECK(k.lowest_layer == k.begin / training::parameters_per_layer(shape));
      CHECK(k.highest_layer == (k.end - 1) / training::parameters_per_layer(shape));
    }
  }
  CHECK(bucket_elements_for_bytes(4 << 20) == 1 << 20);
  CHECK(bucket_elements_for_bytes(6) == 2);   // at least two values (one 16-bit word pair)
  CHECK(bucket_elements_for_bytes(12) == 2);  // even
}

TEST_CASE("ddp ring bytes: 2 (N-1)/N x words x bytes when N divides the words, exact chunk sums otherwise") {
  for (int n : {1, 2, 3, 4, 8})
    for (int r = 0; r < n; ++r) CHECK(ring_bytes_sent(24 * 7, n, r, 4) == 2 * (n - 1) * 24 * 7 / n * 4);
  // 10 words over 4 ranks: chunks of 3, 3, 2, 2; rank 0 sends chunks 0, 3, 2 then 1, 0, 3.
  CHECK(ring_bytes_sent(10, 4, 0, 4) == (3 + 2 + 2 + 3 + 3 + 2) * 4);
}

TEST_CASE("ddp batch split: the course's batch of 10 over 5 workers averages to the full-batch gradient") {
  const training::StackShape shape{2, 8};
  const training::DataSet data = training::make_data_set(shape, 10, 3);
  const BatchSplit split = batch_split(shape, training::initial_weights(shape, 5), data, 10, 5);
  REQUIRE(split.worker_grads.size() == 5);
  CHECK(split.max_abs_grad > 0);
  CHECK(split.max_abs_diff <= 1e-6 * split.max_abs_grad);
  // The workers' gradients differ from each other (each sees other rows): the identity is not a coincidence.
  CHECK(split.worker_grads[0] != split.worker_grads[1]);
}

namespace {

TrainConfig small_config() {
  TrainConfig c;
  c.shape = {4, 32};
  c.ranks = 2;
  c.global_batch = 16;
  c.steps = 3;
  c.bucket_elements = 1024;
  return c;
}

TrainResult run(const TrainConfig& c, const training::DataSet& data) {
  MemoryLedger ledger;
  return train(c, data, ledger);
}

}  // namespace

TEST_CASE("ddp: every mode, bucket, accumulation and wire format trains to single-rank full-batch weights") {
  TrainConfig base = small_config();
  const training::DataSet data = training::make_data_set(base.shape, base.global_batch * base.steps, 11);
  const std::vector<float> single = train_single_rank(base, data);
  REQUIRE(max_rel_err(single, training::initial_weights(base.shape, base.seed)) > 1e-4);  // training moved them
  for (SyncMode mode : {SyncMode::Ddp, SyncMode::DataParallel})
    for (int n : {1, 2, 4})
      for (std::int64_t bucket : {std::int64_t(2), std::int64_t(700), std::int64_t(2048), std::int64_t(1) << 20})
        for (int k : {1, 2})
          for (WireFormat wire : {WireFormat::Fp32, WireFormat::Bf16, WireFormat::Fp16}) {
            if (mode == SyncMode::DataParallel && bucket != 2048) continue;     // no buckets there
            if (bucket == 2 && (n != 2 || wire != WireFormat::Fp32)) continue;  // 4096 tiny all-reduces: once
            TrainConfig c = base;
            c.mode = mode;
            c.ranks = n;
            c.bucket_elements = bucket;
            c.accumulate = k;
            c.wire = wire;
            const TrainResult r = run(c, data);
            const double err = max_rel_err(r.weights, single);
            INFO("mode " << int(mode) << " n " << n << " bucket " << bucket << " k " << k << " wire " << wire_name(wire)
                         << " err " << err);
            CHECK(err <= (wire == WireFormat::Fp32 ? 1e-5 : wire == WireFormat::Fp16 ? 2e-3 : 1e-2));
            CHECK(r.replicas_identical);
            REQUIRE(r.steps.size() == 3);
            for (const auto& step : r.steps)
              for (const RankStep& rs : step) {
                CHECK(rs.step_us > 0);
                CHECK(rs.compute_us > 0);
                CHECK(rs.compute_us + rs.exposed_comm_us + rs.idle_us >= rs.step_us - 1e-6);
                CHECK(rs.hidden_comm_us <= rs.comm_us + 1e-9);
              }
          }
}

TEST_CASE("ddp: comm bytes per rank per step equal 2 (N-1)/N x gradient bytes; 16 bits halve them") {
  TrainConfig c = small_config();  // 8192 parameters; buckets of 1024 elements, divisible by 2 N
  const training::DataSet data = training::make_data_set(c.shape, c.global_batch * c.steps, 11);
  const std::int64_t grad_bytes = training::parameter_count(c.shape) * 4;
  for (int n : {2, 4}) {
    c.ranks = n;
    c.wire = WireFormat::Fp32;
    TrainResult r = run(c, data);
    CHECK(r.rank0_bytes_sent_per_step == 2 * (n - 1) * grad_bytes / n);
    CHECK(r.rank0_bytes_received_per_step == r.rank0_bytes_sent_per_step);
    c.wire = WireFormat::Bf16;
    r = run(c, data);
    CHECK(r.rank0_bytes_sent_per_step == (n - 1) * grad_bytes / n);
    // accumulate = 2 all-reduces once per optimizer step: the same bytes per step.
    c.accumulate = 2;
    CHECK(run(c, data).rank0_bytes_sent_per_step == (n - 1) * grad_bytes / n);
    c.accumulate = 1;
  }
}

TEST_CASE("ddp: at N = 2 in fp32 DDP and DataParallel give bit-identical weights (a + b = b + a)") {
  TrainConfig c = small_config();
  const training::DataSet data = training::make_data_set(c.shape, c.global_batch * c.steps, 11);
  const TrainResult ddp = run(c, data);
  c.mode = SyncMode::DataParallel;
  const TrainResult dp = run(c, data);
  CHECK(ddp.weights == dp.weights);
  // DataParallel's rank 0 copies the model out and the workers' rows, and receives every gradient.
  const std::int64_t params = training::parameter_count(c.shape);
  CHECK(dp.rank0_bytes_sent_per_step == params * 4 + 2 * (c.global_batch / 2) * c.shape.width * 4);
  CHECK(dp.rank0_bytes_received_per_step == params * 4);
}

TEST_CASE("ddp timeline: buckets all-reduced in order, each after the backward of its lowest layer") {
  TrainConfig c = small_config();
  const training::DataSet data = training::make_data_set(c.shape, c.global_batch * c.steps, 11);
  const TrainResult r = run(c, data);
  for (int rank = 0; rank < c.ranks; ++rank) {
    std::vector<const OpSpan*> comm, backward;
    for (const OpSpan& s : r.last_step_spans)
      if (s.rank == rank) (s.kind == "all_reduce" ? comm : backward).push_back(&s);
    REQUIRE(comm.size() == r.buckets.size());
    for (std::size_t b = 0; b < comm.size(); ++b) {
      if (b > 0) CHECK(comm[b]->start_us >= comm[b - 1]->end_us);
      const std::string ready_label = "B" + std::to_string(r.buckets[b].lowest_layer);
      for (const OpSpan* s : backward)
        if (s->label == ready_label) CHECK(comm[b]->start_us >= s->end_us);
    }
  }
}

TEST_CASE("ddp wire: 16-bit encoding equals the precision lesson's round-to-nearest-even, every pattern back exactly") {
  for (WireFormat f : {WireFormat::Fp16, WireFormat::Bf16}) {
    std::vector<std::uint16_t> bits(1 << 16);
    for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = std::uint16_t(i);
    std::vector<float> values(bits.size());
    decode_16(f, bits.data(), values.data(), std::int64_t(bits.size()));
    std::vector<std::uint16_t> back(bits.size());
    encode_16(f, values.data(), back.data(), std::int64_t(bits.size()));
    for (std::size_t i = 0; i < bits.size(); ++i) {
      const float reference =
          f == WireFormat::Fp16 ? precision::float_from_fp16_bits(bits[i]) : precision::float_from_bf16_bits(bits[i]);
      if (std::isnan(reference)) continue;
      INFO(wire_name(f) << " pattern " << i);
      REQUIRE(values[i] == reference);
      REQUIRE(back[i] == bits[i]);
    }
    // Values between representable ones round as the software conversion does (ties to even included).
    std::vector<float> between;
    for (std::uint32_t k = 0; k < 200000; ++k) between.push_back(std::bit_cast<float>(0x33000000u + k * 40503u));
    std::vector<std::uint16_t> rounded(between.size());
    encode_16(f, between.data(), rounded.data(), std::int64_t(between.size()));
    for (std::size_t i = 0; i < between.size(); ++i)
      REQUIRE(rounded[i] == (f == WireFormat::Fp16 ? precision::fp16_bits_from_float(between[i])
                                                   : precision::bf16_bits_from_float(between[i])));
  }
}

TEST_CASE("ddp simulated step: buckets in order, each after its lowest layer's backward, the step after all") {
  TrainConfig c = small_config();
  c.shape = {6, 64};
  c.bucket_elements = 3000;  // buckets that straddle layers
  const std::vector<OpSpan> spans = simulate_step(c, {});
  const std::vector<Bucket> buckets = assign_buckets(c.shape, c.bucket_elements);
  std::vector<const OpSpan*> comm;
  double backward_end = 0, opt_start = 0;
  std::map<std::string, double> layer_end;
  for (const OpSpan& s : spans) {
    if (s.kind == "all_reduce") comm.push_back(&s);
    if (s.kind == "B") {
      layer_end[s.label] = s.end_us;
      backward_end = std::max(backward_end, s.end_us);
    }
    if (s.kind == "optimizer") opt_start = s.start_us;
  }
  REQUIRE(comm.size() == buckets.size());
  for (std::size_t b = 0; b < comm.size(); ++b) {
    CHECK(comm[b]->start_us >= layer_end.at("B" + std::to_string(buckets[b].lowest_layer)));
    if (b > 0) CHECK(comm[b]->start_us >= comm[b - 1]->end_us);
    CHECK(opt_start >= comm[b]->end_us);
  }
  CHECK(opt_start >= backward_end);
  // One bucket cannot start before backward ends: nothing overlaps.
  c.bucket_elements = training::parameter_count(c.shape);
  for (const OpSpan& s : simulate_step(c, {}))
    if (s.kind == "all_reduce") CHECK(s.start_us >= backward_end);
}

TEST_CASE("ddp: a data set too short for the steps asked is a run failure, not a read past its end") {
  TrainConfig c = small_config();
  const training::DataSet data = training::make_data_set(c.shape, c.global_batch * c.steps - 1, 11);
  MemoryLedger ledger;
  CHECK_THROWS_AS(train(c, data, ledger), RunFailure);
  CHECK_THROWS_AS(train_single_rank(c, data), RunFailure);
}
