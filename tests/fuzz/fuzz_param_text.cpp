// Parameter values as typed after --set or read from a state file: every lesson's every parameter gets the bytes;
// each must be accepted or refused with BadInput, and an accepted set must pass or fail validate the same way.
#include <cstddef>
#include <cstdint>
#include <string>

#include "engine/errors.h"
#include "lessons/registry.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dlsys;
  if (size == 0) return 0;
  const auto& lessons = all_lessons();
  const Lesson& lesson = *lessons[data[0] % lessons.size()];
  const auto specs = lesson.params();
  const auto& spec = specs[(size > 1 ? data[1] : 0) % specs.size()];
  // The config parameter names a file: fuzzing paths would only probe this machine's folders.
  if (spec.type == ParamType::File) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + std::min<std::size_t>(size, 2),
                         size - std::min<std::size_t>(size, 2));
  try {
    ParamValues values = ParamValues::defaults(specs);
    values.set(specs, spec.key, text);
    lesson.validate(values, BackendKind::Cpu);
    lesson.theory(values);
  } catch (const BadInput&) {
  }
  return 0;
}
