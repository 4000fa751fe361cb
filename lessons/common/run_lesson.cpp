#include "lessons/common/run_lesson.h"

#include <fmt/format.h>

#include <new>

#include "engine/address_space.h"
#include "engine/file_io.h"
#include "engine/freed_memory.h"

namespace dlsys {

namespace {

// Every file parameter that is given is read, whether or not the other parameters make the lesson use it: a path
// that cannot be read is a mistake to report, not one for a mode that ignores the file to hide.
void check_file_params(const Lesson& lesson, const ParamValues& values) {
  for (const ParamSpec& spec : lesson.params())
    if (spec.type == ParamType::File && values.has(spec.key) && !values.text(spec.key).empty())
      read_input_file(values.text(spec.key), fmt::format("parameter '{}'", spec.key));
}

}  // namespace

BackendKind backend_for(const Lesson& lesson, const std::string& requested) {
  if (requested == "auto" && !lesson.runs_on_cuda()) return BackendKind::Cpu;
  return resolve_backend(requested);
}

ParamValues parse_lesson_params(const Lesson& lesson, const std::vector<std::string>& assignments, BackendKind backend,
                                bool quick) {
  std::vector<std::string> all = quick ? lesson.quick_params() : std::vector<std::string>{};
  if (backend == BackendKind::Cuda) {
    const std::vector<std::string> gpu = lesson.gpu_params(quick);
    all.insert(all.end(), gpu.begin(), gpu.end());
  }
  all.insert(all.end(), assignments.begin(), assignments.end());
  ParamValues values = ParamValues::parse(lesson.params(), all);
  lesson.validate(values, backend);
  check_file_params(lesson, values);
  return values;
}

RunResult run_lesson(const Lesson& lesson, const ParamValues& params, BackendKind backend, RunControl& control) {
  lesson.validate(params, backend);
  check_file_params(lesson, params);
  lesson.check_run_resources(params, backend);
  reserve_openblas_buffers(fmt::format("lesson '{}'", lesson.id()));
  MemoryLedger ledger;
  RunContext context{backend, params, control, ledger};
  const KeepFreedMemory keep_freed_memory;  // steps that allocate and free again do not map fresh pages each time
  try {
    const RunConditionsProbe conditions;
    const RunRecord record = record_here_and_now();
    RunResult result = lesson.run(context);
    result.backend.conditions = conditions.finish();
    result.recorded = record;
    return result;
  } catch (const std::bad_alloc&) {
    throw RunFailure(fmt::format("lesson '{}' ran out of host memory (ledger peak {} bytes before the failure)",
                                 lesson.id(), ledger.total_peak_bytes()));
  }
}

}  // namespace dlsys
