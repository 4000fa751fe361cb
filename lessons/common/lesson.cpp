#include "lessons/common/lesson.h"

namespace dlsys {

const LessonText& Lesson::text() const {
  // Lazily, because id() is virtual and cannot be asked from the constructor; once, because the GUI's worker thread
  // and its UI thread may ask at the same time.
  std::call_once(text_loaded_, [&] { text_ = load_lesson_text(id()); });
  return text_;
}

RunResult begin_result(const Lesson& lesson, const RunContext& context) {
  RunResult result;
  result.lesson = lesson.id();
  for (const auto& [key, value] : context.params.all()) result.params[key] = value.text;
  result.backend.kind = backend_name(context.backend);
  result.backend.device = context.backend == BackendKind::Cuda ? cuda_status().device.name : describe_cpu().name;
  result.theory = lesson.theory(context.params);
  return result;
}

void finish_result(RunResult& result, const MemoryLedger& ledger) {
  result.memory = ledger.entries();
  result.memory_peak_bytes = ledger.total_peak_bytes();
}

}  // namespace dlsys
