// Saved lesson states as --open reads them: any bytes must open or end in BadInput. The text goes straight to the
// reader the GUI uses; the file checks before it (regular file, size) have their own tests.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/backend.h"
#include "engine/errors.h"
#include "lessons/common/state_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dlsys;
  try {
    parse_state_text(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz", BackendKind::Cpu);
  } catch (const BadInput&) {
  }
  return 0;
}
