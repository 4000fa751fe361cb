#pragma once
// The lesson contract (DESIGN.md): an id and title, a theory card, ordered steps with captions, typed parameters,
// exact theory from closed forms, and a real run that returns a RunResult. Lessons know nothing of the GUI.
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/ledger.h"
#include "engine/params.h"
#include "engine/run_control.h"
#include "engine/run_result.h"
#include "lessons/common/lesson_text.h"
#include "lessons/common/step_data.h"

namespace dlsys {

struct RunContext {
  BackendKind backend = BackendKind::Cpu;
  const ParamValues& params;
  RunControl& control;
  MemoryLedger& ledger;
};

class Lesson {
 public:
  virtual ~Lesson() = default;
  virtual std::string id() const = 0;
  virtual std::string chapter() const = 0;
  // Title, theory card and step captions, written in assets/lessons/<id>.md: read once, on first use, from the id.
  const LessonText& text() const;
  virtual std::vector<ParamSpec> params() const = 0;
  // Small sizes and one repeat (`--quick`): every step draws from a real run within seconds, for demos and tests.
  virtual std::vector<std::string> quick_params() const { return {}; }
  // Sizes for a GPU (`--backend cuda`), applied after the quick parameters and before the user's: a CPU's defaults
  // are over in microseconds there, so a lesson about throughput would measure launches instead of its idea.
  virtual std::vector<std::string> gpu_params(bool /*quick*/) const { return {}; }
  // Assignments a run with one rank per process (`--set launcher=mpi` under mpirun) starts from, after the quick
  // parameters and before the user's: e.g. the rank count from the world size. Only lessons with a `launcher`
  // parameter have any.
  virtual std::vector<std::string> process_launch_params(int /*world_size*/, bool /*quick*/) const { return {}; }
  // The one place a lesson turns parameters away, before any run starts (the GUI calls it before it starts the worker):
  // checks across several parameters (each alone is checked by its spec), what the chosen backend cannot run, and
  // what would not fit in memory. Throws BadInput.
  virtual void validate(const ParamValues&, BackendKind) const {}
  // What only a run needs from this machine (memory, cores, time under max_minutes), for lessons whose parameters are
  // also used without a run (timelines simulated from the parameters and exported without --run): refused here, by
  // run_lesson before it starts a run, and not where only the theory, the step data or simulated timelines are made.
  // Throws BadInput.
  virtual void check_run_resources(const ParamValues&, BackendKind) const {}
  // Whether the lesson has a CUDA implementation. Without one, `--backend auto` runs it on the CPU even where a GPU
  // answers, and validate() refuses an explicit cuda.
  virtual bool runs_on_cuda() const { return true; }
  // Closed forms, exact, as the lesson's own typed struct (see engine/lesson_values.h); `run` reports the same values
  // under "theory".
  virtual std::shared_ptr<const LessonValues> theory(const ParamValues& params) const = 0;
  // What the steps draw from the parameters alone; computed once per change, off the UI thread. nullptr when the
  // steps need nothing beyond the parameters and the run. Throws BadInput when these parameters cannot be drawn.
  virtual std::shared_ptr<const StepData> step_data(const ParamValues&) const { return nullptr; }
  // Runs the real implementation. Throws BadInput (exit 2), RunFailure (exit 3) or Cancelled.
  virtual RunResult run(RunContext& context) const = 0;
  // Extra lines `dlsys-lab run` prints after the generic table (e.g. an nccl-tests style sweep); may be empty.
  // Lessons whose runs carry timelines can be exported as SVG or Chrome trace (`dlsys-lab export`).
  virtual bool has_timeline() const { return false; }
  // Such a lesson's timelines from the parameters alone (simulated, no run): what `export` writes when asked for the
  // theory only, and what the GUI exports before a run. Throws BadInput as `theory` does.
  virtual std::vector<Timeline> theory_timelines(const ParamValues&) const { return {}; }
  virtual std::string text_report(const RunResult&) const { return {}; }
  // A recorded run's "theory" and "measured" JSON as the lesson's own structs, set on `result` (an empty object: no
  // values). Implemented once for every lesson by LessonWithValues (lessons/common/typed_lesson.h) from the types the
  // lesson declares. Throws JsonKeyError naming the key's path.
  virtual void read_values(const nlohmann::ordered_json& theory, const nlohmann::ordered_json& measured,
                           RunResult& result) const = 0;

  std::string title() const { return text().title; }
  std::size_t step_count() const { return text().steps.size(); }

 private:
  mutable std::once_flag text_loaded_;
  mutable LessonText text_;
};

// Fills the parts of a RunResult every lesson shares: id, params as given, backend and device, theory, memory.
RunResult begin_result(const Lesson& lesson, const RunContext& context);
void finish_result(RunResult& result, const MemoryLedger& ledger);

}  // namespace dlsys
