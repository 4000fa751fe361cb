// The tensor lesson end to end: bad input refused with the parameter named, the activation calculator's exact
// numbers, the course's example, a real run's JSON keys and its counts equal to the closed forms, and the step data.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "engine/errors.h"
#include "engine/params.h"
#include "lessons/registry.h"
#include "lessons/tensor/tensor_lesson.h"
#include "lessons/tensor/tensor_steps.h"
#include "tests/support/cli_capture.h"

using namespace dlsys;

namespace {

testing::CliOutcome run_tensor(const std::vector<std::string>& sets, bool json = true) {
  return testing::run_lesson_captured("tensor", sets, json);
}

// A layer small enough to run in a blink: s b h = 16 x 2 x 64 = 2048, a = 4.
std::vector<std::string> small(std::vector<std::string> more = {}) {
  return testing::with_sets({"hidden=64", "heads=4", "seq=16", "batch=2", "hidden_sweep=32", "repeats=1"}, more);
}

bool has_note(const nlohmann::json& json, const std::string& text) {
  for (const auto& note : json["backend"]["notes"])
    if (note.get<std::string>().find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("tensor: bad input exits 2 naming the parameter, the value and what is allowed") {
  const auto check = testing::refusal_check("tensor");
  check({"t=0"}, "parameter 't': value '0' is not allowed (out of range); allowed: an integer from 1 to 64");
  check({"heads=16", "hidden=1536", "t=3"},
        "parameter 't': value '3' is not allowed with heads = 16 (each rank keeps whole attention heads); allowed: a "
        "divisor of 16: 1, 2, 4, 8, 16");
  check({"heads=3", "hidden=9", "t=5"},
        "parameter 't': value '5' is not allowed with hidden = 9 (the MLP's 4h = 36 columns are split over the ranks)");
  check({"heads=16", "hidden=1000"},
        "parameter 'hidden': value '1000' is not allowed with heads = 16 (each head takes hidden / heads columns); "
        "allowed: a multiple of 16");
  check({"sp=on", "t=2", "seq=7"}, "parameter 'seq': value '7' is not allowed with sp = on and t = 2");
  check({"heads=8", "hidden_sweep=60"}, "parameter 'hidden_sweep': value '60' is not allowed with heads = 8");
  check({"sp=sometimes"}, "parameter 'sp'");
  check({"mode=guess"}, "one of: run, theory");
  // Sizes that cannot fit are refused before anything is allocated; the calculator takes them.
  check({"hidden=131072", "heads=16", "seq=8192"}, "of host memory is available; lower hidden, seq, batch or heads");
  check({"hidden=2048", "heads=16", "seq=2048", "max_minutes=0.1"}, "more than max_minutes = 0.1");
  // The shape rules hold for the calculator too.
  check({"mode=theory", "heads=16", "hidden=1024", "t=6"}, "parameter 't': value '6' is not allowed");
}

TEST_CASE("tensor: on the CUDA backend the calculator and the course's example need no GPU memory check") {
  const Lesson& lesson = find_lesson("tensor");
  CHECK(lesson.runs_on_cuda());
  const ParamValues p = ParamValues::defaults(lesson.params());
  ParamValues theory = p;
  theory.set(lesson.params(), "mode", "theory");
  theory.set(lesson.params(), "hidden", "131072");
  theory.set(lesson.params(), "heads", "16");
  theory.set(lesson.params(), "seq", "131072");
  CHECK_NOTHROW(lesson.validate(theory, BackendKind::Cuda));
  ParamValues course = p;
  course.set(lesson.params(), "example", "course");
  CHECK_NOTHROW(lesson.validate(course, BackendKind::Cuda));
  // The shape rules are the same on either backend.
  ParamValues bad = p;
  bad.set(lesson.params(), "t", "3");
  CHECK_THROWS_WITH_AS(lesson.validate(bad, BackendKind::Cuda), doctest::Contains("parameter 't'"), BadInput);
}

TEST_CASE("tensor calculator: GPT-3's shape at t = 8, exact, with nothing run") {
  for (const char* sp : {"sp=off", "sp=on"}) {
    const auto r = run_tensor({"mode=theory", "hidden=12288", "heads=96", "seq=2048", "batch=1", "t=8", sp});
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto json = nlohmann::json::parse(r.out);
    const auto& t = json["theory"];
    const bool on = std::string(sp) == "sp=on";
    // s b h = 25,165,824; 5 a s / (h t) = 10.
    CHECK(t["activation_bytes_per_layer"] == (on ? 358612992ll : 578813952ll));  // (4.25 + 10) or (10 + 3 + 10)
    CHECK(t["activation_bytes_no_parallel"] == 25165824ll * 114);
    CHECK(t["activation_formula"] == (on ? "s b h (34/t + 5 a s / (h t))" : "s b h (10 + 24/t + 5 a s / (h t))"));
    CHECK(t["activation_seq"] == 2048);
    CHECK(t["activation_t"] == 8);
    CHECK(t["activation_sp"] == on);
    CHECK(t["comm_elements_per_allreduce"] == 25165824);
    CHECK(t["allreduces_per_layer_fwd"] == (on ? 0 : 2));
    CHECK(t["allreduces_per_layer_bwd"] == (on ? 0 : 2));
    CHECK(t["reduce_scatters_per_layer_fwd"] == (on ? 2 : 0));
    CHECK(t["params_per_rank"] == 226541568ll);  // 12 h^2 / 8 + 4 h
    CHECK(json["measured"].empty());
    CHECK(has_note(json, "nothing ran"));
  }
  const auto text = run_tensor({"mode=theory", "hidden=12288", "heads=96", "seq=2048", "t=8"}, false);
  REQUIRE(text.code == 0);
  CHECK(text.out.find("578,813,952 B") != std::string::npos);
}

TEST_CASE("tensor example=course: y and the row split's partials from the real splits") {
  const auto r = run_tensor({"example=course"});
  REQUIRE(r.code == 0);
  const auto json = nlohmann::json::parse(r.out);
  const auto& m = json["measured"];
  CHECK(m["y"] == nlohmann::json::array({6, 14, 27, 24}));
  CHECK(m["partials"] == nlohmann::json::parse("[[7, 10, 19, 22], [-1, 4, 8, 2]]"));
  CHECK(m["halves"] == nlohmann::json::parse("[[6, 14], [27, 24]]"));
  CHECK(m["y_row_split"] == nlohmann::json::array({6, 14, 27, 24}));
  CHECK(m["ranks_agree"] == true);
  const auto text = run_tensor({"example=course"}, false);
  CHECK(text.out.find("all-reduce: y = [6, 14, 27, 24] on every rank") != std::string::npos);
}

TEST_CASE("tensor run: the documented keys, the error bar, and counts equal to the closed forms") {
  for (const char* sp : {"sp=off", "sp=on"}) {
    const bool on = std::string(sp) == "sp=on";
    const auto r = run_tensor(small({"t=2", sp}));
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto json = nlohmann::json::parse(r.out);
    CHECK(json["backend"]["emulated"] == true);
    const auto& t = json["theory"];
    const auto& m = json["measured"];
    for (const char* key : {"allreduces_per_layer_fwd", "allreduces_per_layer_bwd", "comm_elements_per_allreduce",
                            "activation_bytes_per_layer", "params_per_rank"})
      CHECK_MESSAGE(t.contains(key), key);
    for (const char* key : {"compute_us", "comm_us", "comm_bytes", "max_rel_err", "activation_bytes_measured"})
      CHECK_MESSAGE(m.contains(key), key);
    CHECK(m["max_rel_err"].get<double>() <= 1e-4);
    CHECK(m["meets_error_bar"] == true);
    // The lab's layer: s b h (18 + 48/t + 9 a s / (h t)) = 2048 x 42 + 9216, or 2048 x 33 + 9216 with SP.
    const std::int64_t lab = on ? 76800 : 95232;
    CHECK(t["lab_activation_bytes_per_rank"] == lab);
    CHECK(m["activation_bytes_measured"] == lab);
    CHECK(m["activation_bytes_match_formula"] == true);
    // Ring, fp32: 4 all-reduces of 2 (t-1)/t x 2048 x 4 bytes; with SP 10 reduce-scatters and all-gathers of
    // (t-1)/t x 2048 x 4, and the norms' 4h all-reduce.
    CHECK(m["comm_bytes"] == (on ? 40960 + 1024 : 32768));
    CHECK(m["comm_bytes_match_formula"] == true);
    CHECK(m["collectives"].size() == std::size_t(on ? 11 : 4));
    for (const auto& c : m["collectives"]) CHECK(c["bytes_sent"].get<double>() == c["bytes_formula"].get<double>());
    std::vector<std::string> ids;
    for (const auto& s : json["series"]) ids.push_back(s["id"]);
    for (const char* id : {"compute_vs_t", "compute_cpu_vs_t", "compute_ideal_vs_t", "comm_vs_t", "comm_bytes_vs_t",
                           "activation_vs_t", "compute_vs_hidden", "comm_vs_hidden", "gain_vs_hidden"})
      CHECK_MESSAGE(std::find(ids.begin(), ids.end(), id) != ids.end(), id);
    CHECK(has_note(json, "ranks are CPU threads"));
  }
}

TEST_CASE("tensor run: t = 1 sends nothing; more ranks than cores are time-shared and say so") {
  const auto one = run_tensor(small({"t=1"}));
  REQUIRE(one.code == 0);
  CHECK(nlohmann::json::parse(one.out)["measured"]["comm_bytes"] == 0);
  const int ranks = static_cast<int>(std::thread::hardware_concurrency()) * 2;
  if (ranks <= 64 && 64 % ranks == 0) {
    const auto many = run_tensor(small({"heads=64", "hidden_sweep=64", "t=" + std::to_string(ranks)}));
    INFO(many.err);
    REQUIRE(many.code == 0);
    const auto json = nlohmann::json::parse(many.out);
    CHECK(json["measured"]["max_rel_err"].get<double>() <= 1e-4);
    CHECK(has_note(json, "time-share"));
  }
}

TEST_CASE("tensor run prints its tables and what the lesson expects, met or not") {
  const auto r = run_tensor(small(), false);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("What the lesson expects (stated for hidden 2048, seq 512, t 2") != std::string::npos);
  CHECK(r.out.find("max relative error at most 0.0001") != std::string::npos);
  CHECK(r.out.find("Against t at the chosen h") != std::string::npos);
  CHECK(r.out.find("attention output (g)") != std::string::npos);
}

TEST_CASE("tensor step data: the course's splits, GeLU after each, and the layer's own list of collectives") {
  const Lesson& lesson = find_lesson("tensor");
  for (const char* sp : {"off", "on"}) {
    ParamValues p = ParamValues::defaults(lesson.params());
    p.set(lesson.params(), "sp", sp);
    const auto data = std::dynamic_pointer_cast<const tensor::TensorSteps>(lesson.step_data(p));
    REQUIRE(data);
    CHECK(data->column.ranks.at(1).local == std::vector<float>{27, 24});
    CHECK(data->row.ranks.at(0).local == std::vector<float>{7, 10, 19, 22});
    // GeLU(6) against GeLU(7) + GeLU(-1): the row split's partials give the wrong answer.
    CHECK(data->gelu_of_y.at(0) == doctest::Approx(5.9999999));
    CHECK(data->sum_of_gelu_partials.at(0) == doctest::Approx(7.0 - 0.158808).epsilon(1e-5));
    const std::int64_t sbh = 256 * 512;  // the defaults: s = 256, b = 1, h = 512
    int activation_sized = 0;
    for (const tensor::LayerCollective& c : data->collectives) activation_sized += c.elements == sbh;
    if (std::string(sp) == "off") {
      REQUIRE(data->collectives.size() == 4);
      CHECK(activation_sized == 4);
      for (const auto& c : data->collectives) {
        CHECK(c.op == "allreduce");
        CHECK(c.bytes_per_rank == 2 * 0.5 * double(sbh) * 4);
      }
      CHECK(data->collectives[0].site == "attention output (g)");
      CHECK(data->collectives[3].backward);
    } else {
      CHECK(data->collectives.size() == 11);
      CHECK(activation_sized == 10);
      CHECK(data->collectives.back().elements == 4 * 512);
    }
  }
}
