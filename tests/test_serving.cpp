// The serving lesson's kernels: a request's greedy tokens are the same bit for bit whatever batch and policy served
// it, speculative decoding's output equals the target's own greedy output, static batching's padding equals the
// closed form on a hand-made stream, and every policy's schedule is legal.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include "engine/errors.h"
#include "kernels/serving/cpu_backend.h"
#include "kernels/serving/request_stream.h"
#include "kernels/serving/scheduler.h"
#include "kernels/serving/speculative.h"

using namespace dlsys;
using namespace dlsys::serving;

namespace {

ModelShape small_shape() {
  return {.d_model = 32, .layers = 3, .heads = 4, .mlp_dim = 128, .vocab = 64, .context = 96};
}

std::vector<Request> small_stream(int requests, double rate, std::uint64_t seed = 3) {
  StreamSpec spec;
  spec.requests = requests;
  spec.rate_per_s = rate;
  spec.prompt_tokens = 12;
  spec.mean_output = 8;
  spec.max_output = 30;
  spec.vocab = small_shape().vocab;
  spec.seed = seed;
  return make_stream(spec);
}

// A request of given length with a given prompt size (arrival at 0).
Request request(int id, int prompt, int output) {
  Request r;
  r.id = id;
  for (int i = 0; i < prompt; ++i) r.prompt.push_back((id * 7 + i * 3) % small_shape().vocab);
  r.output_tokens = output;
  return r;
}

}  // namespace

TEST_CASE("serving model: a sequence's tokens do not depend on the rows decoded beside it") {
  const ModelShape s = small_shape();
  MemoryLedger ledger;
  const Weights w = make_weights(s, ledger, 5, 1, 0.5f);
  Model model(s, w, s.layers, ledger, 16);
  const Request a = request(0, 10, 20), b = request(1, 3, 20), c = request(2, 25, 20);
  Sequence alone(s, s.layers, ledger);
  const std::vector<int> reference = greedy_generate(model, alone, a.prompt, 20);
  // The same sequence decoded in batches of 1, 2 and 3 rows of different lengths, in different row orders.
  for (int composition = 0; composition < 3; ++composition) {
    Sequence sa(s, s.layers, ledger), sb(s, s.layers, ledger), sc(s, s.layers, ledger);
    std::vector<int> tokens{model.prefill(sa, a.prompt)};
    int tb = model.prefill(sb, b.prompt), tc = model.prefill(sc, c.prompt);
    std::vector<int> next;
    while (tokens.size() < reference.size()) {
      std::vector<Row> rows;
      if (composition >= 1) rows.push_back({&sb, tb, sb.length});
      rows.push_back({&sa, tokens.back(), sa.length});
      if (composition >= 2) rows.push_back({&sc, tc, sc.length});
      model.forward(rows, next);
      const std::size_t mine = composition >= 1 ? 1 : 0;
      tokens.push_back(next[mine]);
      if (composition >= 1) tb = next[0];
      if (composition >= 2) tc = next[2];
    }
    CHECK(tokens == reference);
  }
}

TEST_CASE("serving model: project_rows gives each row the same bits whatever the other rows") {
  // Shapes past a vector's width and past blocks of four rows, with some left over: 29 and 300 columns, 9 rows.
  const int rows = 37, n = 9;
  for (int cols : {29, 300}) {
    CAPTURE(cols);
    std::vector<float> w(std::size_t(rows * cols)), x(std::size_t(n * rows));
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = float((i * 2654435761u) % 1000) / 997.0f - 0.5f;
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = float((i * 40503u) % 1000) / 991.0f - 0.5f;
    std::vector<float> all(std::size_t(n * cols), 0.25f), one(std::size_t(cols), 0.25f);
    project_rows(x.data(), n, w.data(), rows, cols, all.data(), 1.0f);
    for (int r = 0; r < n; ++r) {
      std::fill(one.begin(), one.end(), 0.25f);
      project_rows(x.data() + r * rows, 1, w.data(), rows, cols, one.data(), 1.0f);
      CHECK(std::equal(one.begin(), one.end(), all.begin() + r * cols));
      // And against a double-precision reference, to within fp32 rounding.
      for (int j = 0; j < cols; ++j) {
        double ref = 0.25;
        for (int i = 0; i < rows; ++i) ref += double(x[std::size_t(r * rows + i)]) * w[std::size_t(i * cols + j)];
        CHECK(one[std::size_t(j)] == doctest::Approx(ref).epsilon(1e-4));
      }
    }
  }
}

TEST_CASE("serving: every policy gives every request the tokens the model gives it alone") {
  const ModelShape s = small_shape();
  MemoryLedger ledger;
  const Weights w = make_weights(s, ledger, 9, 1, 0.5f);
  Model model(s, w, s.layers, ledger, 16);
  const std::vector<Request> stream = small_stream(14, 2000);
  std::vector<std::vector<int>> alone;
  Sequence seq(s, s.layers, ledger);
  for (const Request& r : stream) alone.push_back(greedy_generate(model, seq, r.prompt, r.output_tokens));
  for (Policy policy : {Policy::Static, Policy::Adaptive, Policy::Continuous})
    for (int max_batch : {1, 3, 4}) {
      const ServeResult served = serve(model, ledger, stream, {policy, max_batch, 0.002}, {});
      INFO(policy_name(policy), " max_batch ", max_batch);
      for (std::size_t i = 0; i < stream.size(); ++i) {
        CHECK(served.requests[i].tokens == alone[i]);
        CHECK(int(served.requests[i].tokens.size()) == stream[i].output_tokens);
      }
    }
}

TEST_CASE("speculative decoding: the output is the target's greedy output, at every k and draft") {
  const ModelShape s = small_shape();
  MemoryLedger ledger;
  for (float quiet : {0.03f, 1.0f}) {  // a draft that agrees often, and one that rarely does (many rejections)
    const Weights w = make_weights(s, ledger, 11, 1, quiet);
    Model target(s, w, s.layers, ledger, 16);
    for (int draft_layers : {1, 2}) {
      Model draft(s, w, draft_layers, ledger, 16);
      Sequence ts(s, s.layers, ledger), ds(s, draft_layers, ledger);
      for (int k : {1, 3, 4, 8})
        for (int id = 0; id < 3; ++id) {
          const Request r = request(id, 5 + 9 * id, 40);
          const std::vector<int> greedy = greedy_generate(target, ts, r.prompt, r.output_tokens);
          const SpeculativeResult spec = speculative_generate(target, draft, ts, ds, r.prompt, r.output_tokens, k);
          INFO("quiet ", quiet, " draft layers ", draft_layers, " k ", k, " request ", id);
          CHECK(spec.tokens == greedy);
          CHECK(spec.accepted <= spec.proposed);
          // Each pass keeps its accepted proposals and one token of its own, and proposes no more than the
          // request still needs, so nothing is cut.
          CHECK(std::int64_t(spec.tokens.size()) - 1 == spec.accepted + spec.target_passes);
          // A rejection ends a pass: at most one per pass, and every pass that kept fewer than it proposed had one.
          CHECK(spec.rejections <= spec.target_passes);
          CHECK(spec.accepted + spec.rejections <= spec.proposed);
          CHECK(spec.target_passes >= (int(greedy.size()) - 1 + k) / (k + 1));
        }
    }
  }
}

TEST_CASE("model backend: the CPU backend's slots serve, speculate and report their lengths like the model itself") {
  const ModelShape s = small_shape();
  MemoryLedger ledger;
  const Weights w = make_weights(s, ledger, 13, 1, 0.03f);
  Model target(s, w, s.layers, ledger, 16), draft(s, w, 1, ledger, 16);
  CpuBackend target_backend(target, ledger, 3), draft_backend(draft, ledger, 1);
  CHECK(target_backend.slots() == 3);
  CHECK(target_backend.max_rows() == target.max_rows());
  CHECK(std::string(target_backend.device()) == "cpu");
  Sequence seq(s, s.layers, ledger);
  for (int id = 0; id < 3; ++id) {
    const Request r = request(id, 6 + 5 * id, 24);
    const std::vector<int> alone = greedy_generate(target, seq, r.prompt, r.output_tokens);
    CHECK(greedy_generate(target_backend, id, r.prompt, r.output_tokens) == alone);
    CHECK(target_backend.length(id) == std::int64_t(r.prompt.size()) + r.output_tokens - 1);
    CHECK(speculative_generate(target_backend, draft_backend, r.prompt, r.output_tokens, 3).tokens == alone);
  }
  // A batch bigger than the backend's slots is a programming error, not a silent overrun.
  CHECK_THROWS_AS(serve(target_backend, small_stream(4, 2000), {Policy::Continuous, 4, 0}, {}), std::logic_error);
}

TEST_CASE("model backend: the GPU model's device bytes, counted by hand") {
  const ModelShape s{.d_model = 8, .layers = 2, .heads = 2, .mlp_dim = 16, .vocab = 10, .context = 12};
  // Weights: embeddings 2 x 10 x 8 + positions 12 x 8 + one layer's 4 x 64 + 2 x 128 = 160 + 96 + 512 = 768 floats.
  // Caches: 3 slots x 1 layer x K and V x 12 positions x 8 = 576 floats. Scratch: max(5, 12) = 12 rows x
  // (6 x 8 + 16 + 10 + 2 heads x 12 + 4) = 12 x 102 = 1224. Total 2568 x 4 bytes.
  CHECK(cuda_model_bytes(s, 1, 3, 5) == 2568 * 4);
  // More rows than the context: the rows count.
  CHECK(cuda_model_bytes(s, 1, 3, 20) == (768 + 576 + 20 * 102) * 4);
}

TEST_CASE("speculative decoding: the acceptance rate counts one rejection per pass, not the untested proposals") {
  // Two passes of k = 4: the first keeps all four, the second keeps one and rejects the second proposal (its last two
  // are never tested). Per proposal the target tested 4 + 2 = 6 and accepted 5: a = 5 / 6, not 5 / 8.
  CHECK(acceptance_rate(5, 1) == doctest::Approx(5.0 / 6.0));
  CHECK(acceptance_rate(0, 0) == 0.0);
  CHECK(acceptance_rate(7, 0) == 1.0);
}

TEST_CASE("speculative decoding: tokens per pass formula") {
  CHECK(expected_tokens_per_pass(0.8, 4) == doctest::Approx(3.36160));  // (1 - 0.8^5) / 0.2
  CHECK(expected_tokens_per_pass(0.0, 4) == doctest::Approx(1.0));
  CHECK(expected_tokens_per_pass(1.0, 4) == doctest::Approx(5.0));
}

TEST_CASE("static batching: padding on a hand-made stream equals the closed form") {
  // Lengths 3 1 4 1 | 5 9 2 6 in batches of 4: slots 4 x 4 + 4 x 9 = 52, used 9 + 22 = 31, padding 21 / 52.
  const std::vector<int> lengths{3, 1, 4, 1, 5, 9, 2, 6};
  CHECK(static_padding_fraction(lengths, 4) == doctest::Approx(21.0 / 52.0));
  CHECK(static_padding_fraction(lengths, 1) == 0.0);
  CHECK(static_padding_fraction({2, 2, 2}, 2) == 0.0);
  const ModelShape s = small_shape();
  MemoryLedger ledger;
  const Weights w = make_weights(s, ledger, 2, 1, 0.5f);
  Model model(s, w, s.layers, ledger, 16);
  std::vector<Request> stream;
  for (std::size_t i = 0; i < lengths.size(); ++i) stream.push_back(request(int(i), 6, lengths[i]));
  const ServeResult served = serve(model, ledger, stream, {Policy::Static, 4, 0}, {});
  CHECK(served.slot_tokens == 52);
  CHECK(served.padded_tokens == 21);
  // Every row of a batch is computed until its longest request is done: 3 + 8 decode steps of 4 rows.
  int decode_rows = 0;
  for (const Iteration& it : served.iterations)
    if (!it.prefill) decode_rows += it.rows;
  CHECK(decode_rows == 4 * (4 - 1) + 4 * (9 - 1));
  const ServeResult continuous = serve(model, ledger, stream, {Policy::Continuous, 4, 0}, {});
  CHECK(continuous.padded_tokens == 0);
}

TEST_CASE("scheduler legality: arrivals, batch sizes, and continuous batching never idles a slot while requests wait") {
  const ModelShape s = small_shape();
  MemoryLedger ledger;
  const Weights w = make_weights(s, ledger, 4, 1, 0.5f);
  Model model(s, w, s.layers, ledger, 16);
  for (double rate : {300.0, 5000.0}) {
    const std::vector<Request> stream = small_stream(20, rate, 7);
    for (Policy policy : {Policy::Static, Policy::Adaptive, Policy::Continuous}) {
      const int max_batch = 3;
      const ServeResult r = serve(model, ledger, stream, {policy, max_batch, 0.003}, {});
      INFO(policy_name(policy), " at ", rate, " requests/s");
      for (const RequestRecord& q : r.requests) {
        CHECK(q.start_s >= q.arrival_s);
        CHECK(q.first_token_s >= q.start_s);
        CHECK(q.finish_s >= q.last_token_s);
        CHECK(q.slot >= 0);
        CHECK(q.slot < max_batch);
      }
      CHECK(r.peak_batch <= max_batch);
      for (const Iteration& it : r.iterations) {
        CHECK(it.rows <= max_batch);
        CHECK(it.useful_rows <= it.rows);
        if (policy == Policy::Continuous && !it.prefill) {
          CHECK(it.rows == it.useful_rows);                  // no padding
          CHECK((it.waiting == 0 || it.rows == max_batch));  // a free slot only when nobody waits
        }
      }
      // Two requests never share a slot at the same time.
      for (std::size_t i = 0; i < r.requests.size(); ++i)
        for (std::size_t j = i + 1; j < r.requests.size(); ++j)
          if (r.requests[i].slot == r.requests[j].slot) {
            const RequestRecord &a = r.requests[i], &b = r.requests[j];
            const bool apart = a.finish_s <= b.start_s || b.finish_s <= a.start_s;
            CHECK(apart);
          }
      if (policy == Policy::Static) {  // full batches in arrival order, but the stream's last
        std::vector<int> sizes(std::size_t(stream.size()), 0);
        for (const RequestRecord& q : r.requests) ++sizes[std::size_t(q.batch)];
        for (std::size_t b = 0; b + 1 < (stream.size() + max_batch - 1) / max_batch; ++b) CHECK(sizes[b] == max_batch);
      }
    }
  }
}

TEST_CASE("request stream: seeded, Poisson gaps, geometric lengths cut at the maximum") {
  const std::vector<Request> a = small_stream(400, 50, 9), b = small_stream(400, 50, 9);
  REQUIRE(a.size() == 400);
  double last = 0, total = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].arrival_s == b[i].arrival_s);
    CHECK(a[i].prompt == b[i].prompt);
    CHECK(a[i].arrival_s > last);
    last = a[i].arrival_s;
    CHECK(a[i].output_tokens >= 1);
    CHECK(a[i].output_tokens <= 30);
    total += a[i].output_tokens;
  }
  CHECK(last == doctest::Approx(400.0 / 50).epsilon(0.15));  // mean gap 1 / rate
  CHECK(total / 400 == doctest::Approx(clamped_geometric_mean(8, 30)).epsilon(0.15));
  CHECK(clamped_geometric_mean(1, 10) == doctest::Approx(1.0));
  CHECK(clamped_geometric_mean(4, 1) == doctest::Approx(1.0));
  CHECK(clamped_geometric_mean(2, 3) == doctest::Approx(1.75));  // 1 + 1/2 + 1/4
}

TEST_CASE("serving: a cancel stops the scheduler thread, also while it waits for a slow stream") {
  const ModelShape s = small_shape();
  MemoryLedger ledger;
  const Weights w = make_weights(s, ledger, 4, 1, 0.5f);
  Model model(s, w, s.layers, ledger, 16);
  const std::vector<Request> slow = small_stream(4, 0.05);  // ~20 s between requests
  for (Policy policy : {Policy::Static, Policy::Adaptive, Policy::Continuous}) {
    const auto start = std::chrono::steady_clock::now();
    auto cancel_soon = [&] { return std::chrono::steady_clock::now() - start > std::chrono::milliseconds(100); };
    CHECK_THROWS_AS(serve(model, ledger, slow, {policy, 2, 0.001}, cancel_soon), Cancelled);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  }
}
