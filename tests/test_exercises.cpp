// Predict, then measure: every lesson's exercises parse and their answers evaluate against the lesson's theory, the
// answers equal the lesson's own closed forms where both exist, and a prediction is judged by the exercise's
// tolerance. A quick run shows the measured side: the ring's counted bytes equal the answer exactly.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <stdexcept>

#include "engine/errors.h"
#include "lessons/common/exercises.h"
#include "lessons/common/run_lesson.h"
#include "lessons/registry.h"

namespace dlsys {

namespace {

ExerciseValues default_values(const Lesson& lesson, bool quick) {
  return exercise_values(lesson, parse_lesson_params(lesson, {}, BackendKind::Cpu, quick));
}

double answer_of(const std::string& lesson_id, const std::string& exercise_id, const ExerciseValues& values) {
  return evaluate_formula(find_exercise(load_lesson_text(lesson_id), lesson_id, exercise_id).answer, values);
}

}  // namespace

TEST_CASE("every lesson has at least three exercises whose answers evaluate against its theory") {
  for (const Lesson* lesson : all_lessons()) {
    CAPTURE(lesson->id());
    const LessonText text = load_lesson_text(lesson->id());
    CHECK(text.exercises.size() >= 3);
    std::set<std::string> ids;
    for (const LessonExercise& exercise : text.exercises) {
      CAPTURE(exercise.id);
      CHECK(ids.insert(exercise.id).second);
      CHECK_FALSE(exercise.question.empty());
      for (const bool quick : {false, true}) {
        const double answer = evaluate_formula(exercise.answer, default_values(*lesson, quick));
        CHECK(std::isfinite(answer));
        if (!exercise.choices.empty()) {
          CHECK(answer >= 0);
          CHECK(answer < double(exercise.choices.size()));
        }
      }
    }
  }
}

TEST_CASE("exercise answers equal the lessons' own closed forms") {
  struct Row {
    const char* lesson;
    const char* exercise;
    const char* theory;  // the lesson's theory value the answer must equal
  };
  const Row rows[] = {
      {"allreduce", "ring_bytes", "bytes_sent_per_rank"},
      {"allreduce", "ring_steps", "steps"},
      {"allreduce", "busbw_factor", "busbw_factor"},
      {"bubble", "gpipe_bubble", "bubble_fraction"},
      {"schedules", "one_f_one_b_bubble", "bubble_fraction"},
      {"ddp", "gradient_bytes", "gradient_bytes"},
      {"ddp", "rank_sends", "bytes_per_rank_per_step"},
      {"flash", "score_matrix", "naive_scratch_bytes"},
      {"flash", "column_block", "bc"},
      {"flash", "attention_flops", "flops"},
      {"fusion", "unfused_bytes", "bytes_unfused"},
      {"hardware", "hbm_bandwidth", "h100_sxm_hbm_gbps"},
      {"hardware", "nvlink_over_pcie", "nvlink_pcie_gen4_ratio"},
      {"mesh", "tp_group_bytes", "tp_group_bytes"},
      {"mesh", "dp_group_bytes", "dp_group_bytes"},
      {"mesh", "bubble", "bubble_fraction"},
      {"mesh", "first_stage_activations", "rank_costs.0.activation_bytes"},
      {"mesh", "seven_b_zero1", "seven_b_zero1_bytes"},
      {"hardware", "smem_aggregate", "a100_smem_gbps_aggregate"},
      {"kvcache", "bytes_per_token", "bytes_per_token"},
      {"kvcache", "cache_size", "kv_bytes"},
      {"checkpointing", "boundaries", "segments"},
      {"checkpointing", "peak_bytes", "checkpointed_peak_bytes"},
      {"checkpointing", "step_time", "time_ratio"},
      {"lora", "trainable", "trainable_at_r"},
      {"lora", "course_share", "course_r8_percent"},
      {"lora", "double_quant", "nf4_double_quant_scale_bits"},
      {"matmul", "matmul_flops", "flops"},
      {"moe", "capacity", "capacity"},
      {"moe", "dispatch_off_rank", "dispatch_off_rank_bytes"},
      {"moe", "deepep", "deepep_dispatch_bytes"},
      {"moe", "dense_parameters", "dense_parameters"},
      {"moe", "wire_time", "dispatch_wire_us"},
      {"matmul", "min_intensity", "intensity_minimum"},
      {"precision", "epsilon", "epsilon"},
      {"precision", "largest", "max_finite"},
      {"precision", "adam_bytes", "bytes_per_parameter"},
      {"quant", "nf4_scales", "nf4_overhead_bits"},
      {"quant", "seven_b_int4", "model_7b_4bit_bytes"},
      {"roofline", "ridge", "example_ridge_flop_per_byte"},
      {"roofline", "y2x_a100", "a100_y2x_gflops"},
      {"serving", "decode_intensity", "decode_intensity"},
      {"serving", "kv_bytes", "kv_bytes_per_token"},
      {"tensor", "allreduces", "allreduces_per_layer_fwd"},
      {"tensor", "allreduce_bytes", "comm_bytes_per_allreduce_per_rank"},
      {"tensor", "step_bytes", "comm_bytes_per_step_per_rank"},
      {"zero", "stage3_bytes", "model_state_bytes_per_rank"},
  };
  for (const Row& row : rows) {
    const std::string lesson_id = row.lesson, exercise_id = row.exercise;
    CAPTURE(lesson_id);
    CAPTURE(exercise_id);
    for (const bool quick : {false, true}) {
      const ExerciseValues values = default_values(find_lesson(row.lesson), quick);
      const double theory = values.by_name.at(std::string("theory.") + row.theory);
      CHECK(answer_of(row.lesson, row.exercise, values) == doctest::Approx(theory).epsilon(1e-12));
    }
  }
}

TEST_CASE("a prediction is right within the exercise's tolerance, and a choice only when it is the answer") {
  const LessonText text = parse_lesson_text(
      "# T\n## Step a: A\ncaption\n## Exercise bytes: B\nHow many?\nAnswer: 2 * (n - 1) / n * s\nUnit: bytes\n"
      "Tolerance: 1%\nWhy: Because.\n## Exercise pick: P\nWhich?\nChoices: no | yes\nAnswer: s > 10\n");
  REQUIRE(text.exercises.size() == 2);
  const LessonExercise& bytes = text.exercises[0];
  CHECK(bytes.question == "How many?");
  CHECK(bytes.tolerance == doctest::Approx(0.01));
  CHECK(text.steps.front().caption == "caption");
  ExerciseValues values;
  values.by_name = {{"n", 4}, {"s", 1024}};
  CHECK(check_prediction(bytes, 1536, values).right);
  CHECK(check_prediction(bytes, 1550, values).right);  // 0.9 % off
  const ExerciseCheck wrong = check_prediction(bytes, 2048, values);
  CHECK_FALSE(wrong.right);
  CHECK(wrong.answer == 1536);
  CHECK(wrong.verdict.find("Because.") != std::string::npos);
  CHECK(read_prediction(bytes, "1KiB") == 1024);
  CHECK(read_prediction(bytes, "1.5e3") == 1500);
  CHECK_THROWS_AS(read_prediction(bytes, "lots"), BadInput);

  const LessonExercise& pick = text.exercises[1];
  CHECK(read_prediction(pick, "yes") == 1);
  CHECK_THROWS_AS(read_prediction(pick, "maybe"), BadInput);
  CHECK(check_prediction(pick, 1, values).right);
  CHECK_FALSE(check_prediction(pick, 0, values).right);
  CHECK(format_answer(pick, 1) == "yes");
  CHECK_THROWS_AS(find_exercise(text, "t", "nope"), BadInput);
}

TEST_CASE("a formula naming what the lesson lacks, or an exercise without an answer, is refused with its text") {
  ExerciseValues values;
  values.by_name = {{"n", 4}};
  CHECK_THROWS_WITH_AS(evaluate_formula("2 * m", values), doctest::Contains("2 * m"), std::invalid_argument);
  CHECK_THROWS_AS(evaluate_formula("1 / 0", values), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_lesson_text("# T\n## Exercise a: A\nQuestion?\n"), doctest::Contains("no 'Answer"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_lesson_text("# T\n## Exercise a: A\nAnswer: 1\nTolerance: five\n"),
                       doctest::Contains("percentage"), std::invalid_argument);
}

TEST_CASE("a quick all-reduce run measures what the exercises predict: the ring's bytes exactly") {
  const Lesson& lesson = find_lesson("allreduce");
  const ParamValues params = parse_lesson_params(lesson, {}, BackendKind::Cpu, true);
  RunControl control([](double, const std::string&) {});
  const RunResult run = run_lesson(lesson, params, BackendKind::Cpu, control);
  const ExerciseValues values = exercise_values(lesson, params, &run);
  const LessonText text = load_lesson_text("allreduce");
  const ExerciseCheck bytes = check_prediction(find_exercise(text, "allreduce", "ring_bytes"), 0, values);
  REQUIRE(bytes.measured.has_value());
  CHECK(*bytes.measured == bytes.answer);
  const ExerciseCheck factor = check_prediction(find_exercise(text, "allreduce", "busbw_factor"), 1.5, values);
  REQUIRE(factor.measured.has_value());
  CHECK(*factor.measured == doctest::Approx(factor.answer).epsilon(1e-9));
}

}  // namespace dlsys
