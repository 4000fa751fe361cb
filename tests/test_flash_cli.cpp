// Lesson `flash` through the command line, in-process: theory keys and exact values, a small real run, the worked
// example's printout, bad input (exit 2 with a message naming the parameter, the value and what is allowed), the
// tile the tiles step opens on, and the words the report and the theory card use.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "lessons/flash/flash_steps.h"
#include "lessons/registry.h"
#include "tests/support/cli_capture.h"

using namespace dlsys;

namespace {
// Runs are pinned to the CPU: these tests check the CPU kernels, also where auto would pick CUDA.
testing::CliOutcome flash_cli(std::vector<std::string> args) {
  if (args.size() >= 2 && args[0] == "run") args.insert(args.begin() + 2, {"--backend", "cpu"});
  return testing::run_cli_captured(args);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("flash: bad input exits 2 naming the parameter, the value and what is allowed") {
  auto check = [](std::vector<std::string> sets, const std::string& expected) {
    std::vector<std::string> args{"run", "flash"};
    for (const auto& s : sets) args.insert(args.end(), {"--set", s});
    testing::check_refused(flash_cli(args), expected);
  };
  check({"n=0"}, "parameter 'n': value '0' is not allowed (out of range); allowed: an integer from 1 to");
  check({"d=0"}, "parameter 'd': value '0' is not allowed");
  check({"d=513"}, "parameter 'd': value '513' is not allowed (out of range)");
  check({"causal=2"}, "one of: 0, 1");
  check({"order=fa3"}, "one of: fa1, fa2");
  check({"impl=fast"}, "one of: all, naive, flash");
  check({"example=three"}, "one of: none, two_tiles");
  check({"br=-1"}, "parameter 'br'");
  // M = 64 / 4 = 16 elements cannot hold one row each of q, k, v, o with d = 64.
  check({"sram=64"}, "parameter 'sram': value '64' holds M = 16 fp32 elements, fewer than 4d = 256");
  // 48 KiB = 12288 elements, d = 64: Algorithm 1's budget is 4 * 64 * 48 = 12288, br + bc <= 96.
  check({"br=48", "bc=49"}, "br = 48, bc = 49 do not fit M = 12288 elements");
  check({"bc=100"}, "allowed: at most 12288");
  // 2^20 x 2^20 fp32 scores are 4 TiB: standard attention cannot hold them, the tiled kernel needs no such buffer.
  check({"n=1048576", "impl=naive"}, "parameter 'n': n = 1048576 is too large for impl=naive");
  check({"n=256", "sizes=1048576"}, "parameter 'sizes': n = 1048576 is too large for impl=all");
  check({"heads=0"}, "parameter 'heads': value '0' is not allowed");
  check({"heads=257"}, "parameter 'heads': value '257' is not allowed");
  check({"precision=fp16"}, "one of: fp32, bf16");
  check({"precision=bf16"}, "parameter 'precision': value 'bf16' needs --backend cuda");
  check({"precision=bf16", "d=48"}, "parameter 'precision': value 'bf16' needs --backend cuda");
}

TEST_CASE("flash: heads run one after another on the CPU, every head checked; a GPU run asks for 16 heads in bf16") {
  const auto r = flash_cli({"run", "flash", "--set", "n=70", "--set", "d=8", "--set", "heads=3", "--set", "causal=1",
                            "--set", "sizes=32", "--set", "repeats=1", "--set", "threads=2", "--json", "-"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto json = nlohmann::json::parse(r.out);
  const auto& m = json["measured"];
  CHECK(m["accuracy_rule_met"] == 1);
  CHECK(m["max_abs_err_flash"].get<double>() < 1e-6);
  CHECK(m["rows_checked_per_head"] == 70);
  CHECK(m["flash_kernel"] == "v2_flash");
  CHECK(m["naive_peak_bytes"] == 70 * 70 * 4);  // one head's S at a time
  CHECK(json["theory"]["flops_all_heads"].get<double>() == 3 * json["theory"]["flops"].get<double>());
  const auto gpu = find_lesson("flash").gpu_params(false);
  for (const char* set : {"heads=16", "n=4096", "precision=bf16"})
    CHECK_MESSAGE(std::find(gpu.begin(), gpu.end(), set) != gpu.end(), set);
}

TEST_CASE("flash: theory keys are exact closed forms") {
  const auto r = flash_cli({"run", "flash", "--set", "example=two_tiles", "--set", "threads=2", "--json", "-"});
  REQUIRE(r.code == 0);
  const auto t = nlohmann::json::parse(r.out)["theory"];
  // Defaults: n = 4096, d = 64, sram = 49152 bytes -> M = 12288 elements, Br = Bc = 48, Tr = Tc = 86.
  CHECK(t["sram_elements"] == 12288);
  CHECK(t["br"] == 48);
  CHECK(t["bc"] == 48);
  CHECK(t["tr"] == 86);
  CHECK(t["tc"] == 86);
  CHECK(t["naive_scratch_bytes"] == 4096.0 * 4096 * 4);
  // Two workers, FA-2 order, each with S^T (48 x 48), Q_i^T and O_i^T (64 x 48 each), m and l.
  CHECK(t["flash_scratch_bytes"] == 2.0 * 48 * (48 + 2 * 64 + 2) * 4);
  CHECK(t["hbm_bytes_naive"] == 4.0 * (4 * 4096.0 * 64 + 4 * 4096.0 * 4096));
  CHECK(t["hbm_bytes_flash"] == 4.0 * (4096.0 * 64 + 2 * 4096.0 * 64 * 86 + 4096.0 * 64));
  CHECK(t["flops"] == 4.0 * 4096 * 4096 * 64);
}

TEST_CASE("flash: a small real run reports the documented keys, the ledger's peaks and the accuracy rule") {
  const auto r =
      flash_cli({"run",   "flash", "--set", "n=100",       "--set", "d=16",      "--set", "causal=1",  "--set",  "br=8",
                 "--set", "bc=16", "--set", "sizes=32,64", "--set", "repeats=1", "--set", "threads=2", "--json", "-"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto json = nlohmann::json::parse(r.out);
  const auto& t = json["theory"];
  const auto& m = json["measured"];
  for (const char* key :
       {"br", "bc", "tr", "tc", "naive_scratch_bytes", "flash_scratch_bytes", "hbm_bytes_naive", "hbm_bytes_flash"})
    CHECK_MESSAGE(t.contains(key), key);
  for (const char* key :
       {"naive_ms", "flash_ms", "max_abs_err_naive", "max_abs_err_flash", "naive_peak_bytes", "flash_peak_bytes"})
    CHECK_MESSAGE(m.contains(key), key);
  CHECK(t["tr"] == 13);  // ceil(100 / 8)
  CHECK(t["tc"] == 7);   // ceil(100 / 16)
  CHECK(m["naive_peak_bytes"] == 100 * 100 * 4);
  CHECK(m["flash_peak_bytes"] == t["flash_scratch_bytes"]);
  CHECK(m["hbm_bytes_flash_counted"] == t["hbm_bytes_flash"]);
  CHECK(m["accuracy_rule_met"] == 1);
  CHECK(m["max_abs_err_naive"].get<double>() < 1e-6);
  CHECK(m["max_abs_err_flash"].get<double>() < 1e-6);
  CHECK(json["series"].size() == 10);  // time, peak, peak theory, error (x2 each) and traffic theory (x2)
}

TEST_CASE("flash: more threads than Q blocks allocate no more scratch than the workers use") {
  // n = 10 with 48 x 48 tiles is one Q block: one worker, whatever the thread count.
  const auto r = flash_cli({"run", "flash", "--set", "n=10", "--set", "sizes=10", "--set", "repeats=1", "--set",
                            "threads=4", "--set", "impl=flash", "--json", "-"});
  REQUIRE(r.code == 0);
  const auto json = nlohmann::json::parse(r.out);
  CHECK(json["measured"]["flash_peak_bytes"] == 48 * (48 + 2 * 64 + 2) * 4);
  CHECK(json["theory"]["flash_scratch_bytes"] == 48 * (48 + 2 * 64 + 2) * 4);
}

TEST_CASE("flash: `run flash --set example=two_tiles` prints the worked example after each tile") {
  for (const char* order : {"fa1", "fa2"}) {
    const auto r = flash_cli({"run", "flash", "--set", "example=two_tiles", "--set", std::string("order=") + order});
    INFO(r.out);
    REQUIRE(r.code == 0);
    CHECK(contains(r.out, "1     [1, 3]        3  1.13533528  [0.13533528, 2.00000000]"));
    CHECK(contains(r.out, "1.55300179  [1.18918654, 2.41766651]"));
    CHECK(contains(r.out, "o = z / l = [0.76573417, 1.55676994]"));
    CHECK(contains(r.out, "plain softmax weights [0.08714, 0.64391, 0.03206, 0.23688] give [0.76573417, 1.55676994]"));
    CHECK(contains(r.out, "tile (0, 1)  m = 3  l = 1.55300179"));
    CHECK(contains(r.out, "o = [0.76573417, 1.55676994]"));
  }
}

TEST_CASE("flash: the lesson text has its five steps") {
  const Lesson& lesson = find_lesson("flash");
  CHECK(lesson.title() == "FlashAttention: attention in tiles with an online softmax");
  REQUIRE(lesson.step_count() == 5);
  CHECK(lesson.text().steps[2].caption.find("1.55300179") != std::string::npos);
  CHECK(lesson.text().theory.find("ELEMENTS") != std::string::npos);  // errata E21: M counts elements
}

namespace {
// A tile record whose rows carry the given (m_old, m_tile) pairs, merged as the kernel merges them.
attention::TileRecord tile_with_rows(std::int64_t row_begin, std::vector<std::pair<double, double>> maxima) {
  attention::TileRecord record;
  record.row_begin = row_begin;
  record.rows = std::int64_t(maxima.size());
  for (const auto& [m_old, m_tile] : maxima) {
    attention::TileRowState row;
    row.m_old = m_old;
    row.m_tile = m_tile;
    row.m_new = std::max(m_old, m_tile);
    row.alpha = std::exp(m_old - row.m_new);
    row.beta = std::exp(m_tile - row.m_new);
    record.row_states.push_back(row);
  }
  return record;
}
}  // namespace

TEST_CASE("flash: the tiles step opens on the first tile where a running max moves, preferring both rescales") {
  const double none = -INFINITY;
  attention::FlashTrace trace;
  trace.tiles.push_back(tile_with_rows(0, {{none, 0.5}, {none, 0.2}}));  // first K/V block: nothing to rescale
  trace.tiles.push_back(tile_with_rows(0, {{0.5, 0.9}, {0.2, 0.7}}));    // both maxima move, no tile is scaled down
  trace.tiles.push_back(tile_with_rows(2, {{0.4, 0.1}, {0.3, 0.8}}));    // row 2 keeps its max, row 3's moves
  flash::OpeningTile opening = flash::find_opening_tile(trace);
  CHECK(opening.rescales);
  CHECK(opening.index == 2);
  CHECK(opening.rows_max_moved == std::vector<std::int64_t>{3});
  CHECK(opening.rows_tile_rescaled == std::vector<std::int64_t>{2});

  trace.tiles.pop_back();  // without the tile that shows both, the first where a max moves
  opening = flash::find_opening_tile(trace);
  CHECK(opening.index == 1);
  CHECK(opening.rows_max_moved == std::vector<std::int64_t>{0, 1});
  CHECK(opening.rows_tile_rescaled.empty());

  trace.tiles.pop_back();  // only the first block: nothing moves, the step opens on tile 0 and says so
  opening = flash::find_opening_tile(trace);
  CHECK_FALSE(opening.rescales);
  CHECK(opening.index == 0);
}

TEST_CASE("flash: with the default parameters the tiles step opens past the first K/V block, on a rescale") {
  const Lesson& lesson = find_lesson("flash");
  const auto data = lesson.step_data(ParamValues::defaults(lesson.params()));
  const auto* steps = dynamic_cast<const flash::FlashSteps*>(data.get());
  REQUIRE(steps != nullptr);
  const flash::OpeningTile& opening = steps->opening_tile;
  REQUIRE(opening.rescales);
  // n = 20, d = 4, Br = 4, Bc = 6, Algorithm 1's order, seed 7: tile 6 of 20 is (0, 1), the second K/V block's
  // first Q block. Query 1's max moves there; queries 0, 2 and 3 keep theirs.
  CHECK(opening.index == 5);
  const attention::TileRecord& record = steps->tile_trace.tiles[opening.index];
  CHECK(record.i == 0);
  CHECK(record.j == 1);
  CHECK(opening.rows_max_moved == std::vector<std::int64_t>{1});
  CHECK(opening.rows_tile_rescaled == std::vector<std::int64_t>{0, 2, 3});
  CHECK(record.row_states[1].alpha < 1);
  CHECK(record.row_states[0].beta < 1);
}

TEST_CASE("flash: the run's report says what the lesson expects in words, with no thresholds") {
  const auto r = flash_cli({"run", "flash", "--set", "n=64", "--set", "d=16", "--set", "sizes=32", "--set", "repeats=1",
                            "--set", "threads=2"});
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "flash within twice standard attention's error, as FlashAttention's rule asks"));
  CHECK(contains(r.out, "(the time expectation is for n = 4096, d = 64 on the CPU; the memory one follows n)"));
  // The scratch the run measured against the closed form at its own n (no fixed ratio that only the default meets).
  CHECK(contains(r.out, "x: as the closed form says ("));
  for (const char* threshold : {"<=", ">=", "expected at most", "expected at least", "2^-24", ": met", "NOT met"})
    CHECK_MESSAGE(!contains(r.out, threshold), threshold);
}

TEST_CASE("flash: the theory card credits the accuracy rule to FlashAttention's tests and says how the lab adapts it") {
  const std::string& theory = find_lesson("flash").text().theory;
  CHECK(contains(theory, "against an fp32 reference"));
  CHECK(contains(theory, "plain PyTorch attention run in the same fp16 or bf16"));
  CHECK(contains(theory, "adapts the rule: a double-precision reference, standard attention in the same precision"));
}
