// progress.json as the window reads it at start: any bytes must read or end in BadInput, and what reads must be
// written back and read again to the same progress (a save never loses or changes what was read).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "engine/errors.h"
#include "engine/json_io.h"
#include "lessons/common/progress.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dlsys;
  try {
    const StudentProgress read =
        parse_progress_text(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    const nlohmann::ordered_json written = progress_to_json(read);
    if (progress_to_json(parse_progress_text(dump_json_text(written, 2), "fuzz again")) != written) std::abort();
  } catch (const BadInput&) {
  }
  return 0;
}
