#include "app/cli/cli.h"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <optional>
#include <ostream>

#include "app/cli/compare_command.h"
#include "app/cli/exercises_command.h"
#include "app/cli/lesson_help.h"
#include "app/cli/mpi_run_command.h"
#include "app/cli/option_checks.h"
#include "app/cli/report.h"
#include "app/cli/run_guarded.h"
#include "app/cli/shot_command.h"
#include "engine/backend.h"
#include "engine/errors.h"
#include "engine/file_io.h"
#include "engine/json_io.h"
#include "engine/units.h"
#include "lessons/common/run_lesson.h"
#include "lessons/registry.h"

namespace dlsys {

namespace {

// Lessons have a handful of steps; the lesson itself checks the exact count once it is known.
constexpr std::int64_t kMaxStepOption = 1000;

// "-" is stdout, checked after the flush so a full device is a failure and not a silent success.
void write_text_output(const std::string& path, const std::string& text, std::ostream& out) {
  if (path == "-") {
    out << text;
    check_stream_written(out, "stdout");
    return;
  }
  write_file_checked(path, text);
}

int list_command(std::ostream& out) {
  std::size_t id_width = 0;  // the longest id sets the column, so every chapter starts in one place
  for (const Lesson* lesson : all_lessons()) id_width = std::max(id_width, lesson->id().size());
  for (const Lesson* lesson : all_lessons())
    out << fmt::format("{:<{}} {:<22} {} ({} steps{})\n", lesson->id(), id_width, lesson->chapter(), lesson->title(),
                       lesson->step_count(), lesson->runs_on_cuda() ? "" : ", CPU only");
  check_stream_written(out, "stdout");
  return 0;
}

int info_command(std::ostream& out) {
  const DeviceInfo& cpu = cpu_with_peaks();
  out << fmt::format(
      "CPU backend: available\n  device      {}\n  threads     {}\n  memory      {} total, {} available\n"
      "  library     {}\n  peak fp32   {:.1f} GFLOP/s\n  copy bw     {:.1f} GB/s (bytes copied per second)\n"
      "  source      {}\n",
      cpu.name, cpu.threads, format_bytes_both(double(cpu.memory_total_bytes)),
      format_bytes_both(double(cpu.memory_free_bytes)), cpu.library, cpu.peak_fp32_gflops, cpu.peak_bandwidth_gbps,
      cpu.peaks_source);
  const CudaStatus& cuda = cuda_status();
  if (!cuda.available) {
    out << fmt::format("CUDA backend: unavailable: {}\n  reason      {}\n", cuda.plain_reason, cuda.reason);
  } else {
    const DeviceInfo& gpu = cuda.device;
    out << fmt::format(
        "CUDA backend: available ({} device{})\n  device      {} (sm_{})\n  SMs         {}\n"
        "  memory      {} total, {} free\n  library     {}\n  peak fp32   {:.0f} GFLOP/s\n"
        "  bandwidth   {:.0f} GB/s\n  source      {}\n",
        cuda.device_count, cuda.device_count == 1 ? "" : "s", gpu.name, gpu.compute_capability, gpu.sm_count,
        format_bytes_both(double(gpu.memory_total_bytes)), format_bytes_both(double(gpu.memory_free_bytes)),
        gpu.library, gpu.peak_fp32_gflops, gpu.peak_bandwidth_gbps, gpu.peaks_source);
  }
  out << fmt::format("auto selects: {}\n", backend_summary(resolve_backend("auto")));
  check_stream_written(out, "stdout");
  return 0;
}

struct RunOptions {
  std::string lesson;
  std::vector<std::string> sets;
  bool quick = false;
  std::string backend = "auto";
  std::string json_path;
  std::string csv_path;
  std::optional<double> peer_silence_s;  // launcher=mpi only (see mpi::Session); unset: kDefaultPeerSilenceS
};

// The report on stdout (unless --json goes there), then --json and --csv.
void write_run_outputs(const Lesson& lesson, const RunResult& result, const RunOptions& o, std::ostream& out) {
  const bool json_to_stdout = o.json_path == "-";
  if (!json_to_stdout) out << format_run_report(result) << lesson.text_report(result);
  if (!json_to_stdout) check_stream_written(out, "stdout");
  if (!o.json_path.empty() && !o.csv_path.empty() && o.json_path != "-" && o.csv_path != "-") {
    write_files_checked({{o.json_path, dump_json_text(to_json(result), 2) + "\n"}, {o.csv_path, to_csv(result)}});
    return;
  }
  if (!o.json_path.empty()) write_text_output(o.json_path, dump_json_text(to_json(result), 2) + "\n", out);
  if (!o.csv_path.empty()) write_text_output(o.csv_path, to_csv(result), out);
}

int run_command(const RunOptions& o, std::ostream& out, std::ostream& err) {
  check_outputs_distinct({o.json_path, o.csv_path});  // before the run, which may take minutes
  // Ranks as processes (under mpirun): this process is one rank, and rank 0 alone writes what the run measured. A
  // process a launcher started beside others joins them whatever it was given, so that they learn of a difference.
  if (asks_for_processes(o.sets) || started_beside_other_processes())
    return run_as_mpi_rank(
        {o.lesson, o.sets, o.quick, o.backend, o.peer_silence_s.value_or(mpi::kDefaultPeerSilenceS)},
        [&](const Lesson& lesson, const RunResult& result) { write_run_outputs(lesson, result, o, out); }, err);
  if (o.peer_silence_s)
    throw BadInput(
        "--peer-silence-s is not allowed here: it bounds the silence of ranks as processes (--set launcher=mpi "
        "under mpirun or srun); allowed: leave it out");
  const Lesson& lesson = find_lesson(o.lesson);
  const BackendKind backend = backend_for(lesson, o.backend);
  const ParamValues params = parse_lesson_params(lesson, o.sets, backend, o.quick);
  // A live progress line only on a terminal; logs and pipes get the result alone.
  const bool show_progress = &err == &std::cerr && isatty(STDERR_FILENO);
  RunControl control([&](double fraction, const std::string& what) {
    if (show_progress) err << fmt::format("\r[{:3.0f}%] {:<60}", fraction * 100, what.substr(0, 60)) << std::flush;
  });
  const RunResult result = run_lesson(lesson, params, backend, control);
  if (show_progress) err << "\r" << std::string(68, ' ') << "\r" << std::flush;
  write_run_outputs(lesson, result, o, out);
  return 0;
}

int parse_and_run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool& wants_gui,
                  GuiRequest& gui) {
  CLI::App app{"dlsys-lab: a live lab for deep-learning systems. Without a subcommand it opens the GUI.", "dlsys-lab"};
  app.add_option("--open", gui.open_state_file, "open a saved lesson state (JSON) in the GUI")
      ->check(CLI::ExistingFile);
  app.add_option("--open-run", gui.open_run_file,
                 "open a recorded run (JSON from `run LESSON --json FILE`) in the GUI: its lesson, its parameters, "
                 "its results");
  app.add_option("--compare-run", gui.compare_run_file,
                 "GUI: pin this recorded run and compare the lesson's run (--open-run, or --run) with it")
      ->group("GUI");
  app.add_option("--lesson", gui.lesson, "GUI: start on this lesson")->group("GUI");
  app.add_option("--step", gui.step, "GUI: start on this step (1-based); needs --lesson")
      ->group("GUI")
      ->check(integer_from_to(1, kMaxStepOption));
  app.add_option("--set", gui.sets, "GUI: parameter key=value for that lesson")->group("GUI");
  app.add_flag("--present", gui.presentation, "GUI: start in presentation mode")->group("GUI");
  app.add_flag("--run", gui.run_on_start, "GUI: start a run at once")->group("GUI");
  app.add_option("--screenshot", gui.screenshot_png, "GUI: save a PNG of the window, then quit")
      ->group("GUI")
      ->check(output_path());
  app.add_option("--frames", gui.frames, "GUI: frames to draw before --screenshot (default 3)")
      ->group("GUI")
      ->check(integer_from_to(1, 100000));
  app.add_option("--size", gui.size, "GUI: window size WxH (default: the monitor's work area)")->group("GUI");
  app.add_option("--figure", gui.figure_png, "GUI: with --screenshot, also export the lesson view to FILE")
      ->group("GUI")
      ->check(output_path());
  app.add_option("--figure-scale", gui.figure_scale, "GUI: scale of --figure: 1, 2 or 4")
      ->group("GUI")
      ->check(integer_from_to(1, 4))
      ->check(CLI::IsMember({1, 2, 4}));
  app.add_flag("--figure-light", gui.figure_light,
               "GUI: figures (--figure, Export) in the light theme, as in presentation mode, from desk mode too")
      ->group("GUI");
  app.add_flag("--quick", gui.quick, "GUI: every lesson starts with small sizes and one repeat")->group("GUI");
  app.add_option("--widget-rects", gui.widget_rects_path,
                 "GUI, for tests: keep FILE updated with where the named widgets are on screen")
      ->group("Testing");
  auto* list = app.add_subcommand("list", "list the lessons");
  auto* info = app.add_subcommand("info", "backends and devices, with measured ceilings");

  RunOptions run_options;
  auto* run = app.add_subcommand("run", "run a lesson headless and print what it measured");
  run->add_option("lesson", run_options.lesson, "lesson id (see `list`)")->required();
  run->add_option("--set", run_options.sets, "parameter assignment key=value (repeatable)");
  run->add_option("--backend", run_options.backend, "auto | cpu | cuda");
  run->add_flag("--quick", run_options.quick, "small sizes and one repeat first (--set still overrides)");
  run->add_option("--json", run_options.json_path, "write the result as JSON to FILE, or - for stdout")
      ->check(output_path());
  run->add_option("--csv", run_options.csv_path, "write the result as CSV to FILE, or - for stdout")
      ->check(output_path());
  run->add_option("--peer-silence-s", run_options.peer_silence_s,
                  "launcher=mpi: end the job when a rank sends no heartbeat for this many seconds (default 60; 0: "
                  "never)")
      ->check(real_from_to(0, 86400));

  ShotOptions shot_options;
  auto* shot = app.add_subcommand("shot", "render a lesson view to PNG, no display needed");
  shot->add_option("lesson", shot_options.lesson, "lesson id (not with --open-run, which names its own)");
  auto* shot_step =
      shot->add_option("--step", shot_options.step, "step number, 1-based")->check(integer_from_to(1, kMaxStepOption));
  shot->add_flag("--every-step", shot_options.every_step,
                 "render every step of the lesson, each to FILE-stepN.png (and --widget-rects FILE-stepN.json)")
      ->excludes(shot_step);
  shot->add_option("--set", shot_options.sets, "parameter assignment key=value (repeatable)");
  shot->add_option("--size", shot_options.size, "window size WxH the view is laid out in, e.g. 1600x900");
  shot->add_option("--scale", shot_options.scale, "pixels per point, 1 to 4: the image is scale x size, same layout")
      ->check(real_from_to(1, 4));
  shot->add_option("--backend", shot_options.backend, "auto | cpu | cuda");
  shot->add_flag("--quick", shot_options.quick, "small sizes and one repeat first (--set still overrides)");
  shot->add_option("--text-scale", shot_options.text_scale, "text size as Ctrl +/- sets it in the window: 1 to 3")
      ->check(real_from_to(1, 3));
  shot->add_flag("--present", shot_options.presentation, "presentation mode (light theme, large text)");
  shot->add_option("-o,--output", shot_options.output_png, "PNG file to write")->required()->check(output_path());
  shot->add_option("--open-run", shot_options.open_run_file,
                   "render a recorded run (JSON from `run --json` or `shot --json`) instead of running the lesson");
  shot->add_option("--json", shot_options.json_path, "also write the run rendered as JSON to FILE (a run file)")
      ->check(output_path());
  shot->add_flag("--no-recorded-label", shot_options.no_recorded_label,
                 "for tests: leave out the line saying where a recorded run was made");
  shot->add_option("--widget-rects", shot_options.widget_rects_path,
                   "for tests: write where the named widgets and the plots are in the image (JSON, points)")
      ->check(output_path());

  CompareOptions compare_options;
  auto* compare = app.add_subcommand(
      "compare",
      "two recorded runs of one lesson side by side: the step's figure for both, and a table of parameters "
      "and measured values with B / A");
  compare->add_option("A", compare_options.a_path, "run file A (JSON from `run LESSON --json FILE`)")->required();
  compare->add_option("B", compare_options.b_path, "run file B, a run of the same lesson")->required();
  compare->add_option("--step", compare_options.step, "step number, 1-based")
      ->check(integer_from_to(1, kMaxStepOption));
  compare->add_option("-o,--output", compare_options.output_png, "PNG file: the step for both runs, the table under it")
      ->check(output_path());
  compare->add_option("--json", compare_options.json_path, "write the table as JSON to FILE, or - for stdout")
      ->check(output_path());
  compare->add_option("--size", compare_options.size, "window size WxH the figure is laid out in (default 1600x1200)");
  compare->add_option("--scale", compare_options.scale, "pixels per point, 1 to 4")->check(real_from_to(1, 4));
  compare->add_option("--text-scale", compare_options.text_scale, "text size, 1 to 3")->check(real_from_to(1, 3));
  compare->add_flag("--present", compare_options.presentation, "presentation mode (light theme, large text)");

  ExercisesOptions exercises_options;
  auto* exercises =
      app.add_subcommand("exercises", "a lesson's exercises: predict, then see the closed form and this machine");
  exercises->add_option("lesson", exercises_options.lesson, "lesson id (not needed with --run-file)");
  exercises->add_option("--set", exercises_options.sets, "parameter assignment key=value (repeatable)");
  exercises->add_option("--answer", exercises_options.answers, "your prediction ID=VALUE (repeatable)");
  exercises->add_flag("--measure", exercises_options.measure, "run the lesson here and show what it measured");
  exercises->add_flag("--quick", exercises_options.quick, "small sizes and one repeat first (--set still overrides)");
  exercises->add_option("--backend", exercises_options.backend, "auto | cpu | cuda (with --measure)");
  exercises->add_option("--run-file", exercises_options.run_file,
                        "take the parameters and the measurement from a recorded run (JSON from `run --json`)");

  ExportOptions export_options;
  auto* exporter = app.add_subcommand("export", "export a lesson's timeline as SVG or Chrome trace");
  exporter->add_option("lesson", export_options.lesson, "lesson id")->required();
  exporter->add_option("--set", export_options.sets, "parameter assignment key=value (repeatable)");
  exporter->add_option("--backend", export_options.backend, "auto | cpu | cuda (with --run)");
  exporter->add_flag("--run", export_options.run,
                     "run the lesson and export the measured timelines beside the theory (without it: the simulated "
                     "schedule alone, no run)");
  exporter->add_option("--svg", export_options.svg_path, "write the timeline as SVG")->check(output_path());
  exporter->add_option("--trace", export_options.trace_path, "write the timeline as Chrome trace JSON (Perfetto)")
      ->check(output_path());

  // Help that could not be written (stdout on a full device) is a failure, as for any output.
  const auto help_written = [&] {
    return run_guarded(
        [&] {
          check_stream_written(out, "stdout");
          return 0;
        },
        err, "printing the help");
  };
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    out << app.help();
    // Positionals are stored before help is handled, so the lesson named is known here.
    const std::string& lesson_id = *run         ? run_options.lesson
                                   : *shot      ? shot_options.lesson
                                   : *exporter  ? export_options.lesson
                                   : *exercises ? exercises_options.lesson
                                                : std::string();
    for (const Lesson* lesson : all_lessons())
      if (lesson->id() == lesson_id) out << lesson_params_help(*lesson);
    return help_written();
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return help_written();
  } catch (const CLI::ParseError& e) {
    // CLI11 quotes what it could not use, which may be any length.
    err << "dlsys-lab: " << clip_for_message(e.what(), 400) << "\n";
    return kExitBadInput;
  }

  // Each command is guarded with what it was doing, so an unforeseen exception says where it happened.
  if (*list) return run_guarded([&] { return list_command(out); }, err, "listing the lessons");
  if (*info) return run_guarded([&] { return info_command(out); }, err, "probing the backends");
  if (*run)
    return run_guarded([&] { return run_command(run_options, out, err); }, err,
                       fmt::format("running lesson '{}'", clip_for_message(run_options.lesson)));
  if (*shot)
    return run_guarded([&] { return shot_command(shot_options, out, err); }, err,
                       fmt::format("rendering step {} of lesson '{}' to '{}'", shot_options.step,
                                   clip_for_message(shot_options.lesson), path_for_message(shot_options.output_png)));
  if (*compare)
    return run_guarded([&] { return compare_command(compare_options, out); }, err,
                       fmt::format("comparing '{}' with '{}'", path_for_message(compare_options.a_path),
                                   path_for_message(compare_options.b_path)));
  if (*exercises)
    return run_guarded(
        [&] { return exercises_command(exercises_options, out); }, err,
        fmt::format("checking the exercises of lesson '{}'", clip_for_message(exercises_options.lesson)));
  if (*exporter)
    return run_guarded([&] { return export_command(export_options, out, err); }, err,
                       fmt::format("exporting the timeline of lesson '{}'", clip_for_message(export_options.lesson)));
  wants_gui = true;
  return 0;
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool& wants_gui,
            GuiRequest& gui) {
  wants_gui = false;
  // Building the parser and parsing can throw too (std::bad_alloc at least); the commands carry their own guard.
  return run_guarded([&] { return parse_and_run(args, out, err, wants_gui, gui); }, err, "reading the command line");
}

}  // namespace dlsys
