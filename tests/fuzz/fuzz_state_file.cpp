// Saved lesson states as --open reads them, from a real file: any bytes must open or end in BadInput.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "app/gui/settings.h"
#include "app/gui/shell.h"
#include "engine/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dlsys;
  static const std::string path = "/tmp/dlsys-fuzz-state-" + std::to_string(::getpid()) + ".json";
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return 0;
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  gui::AppState state;
  gui::init_sessions(state);
  try {
    gui::open_state_file(path, state);
  } catch (const BadInput&) {
  }
  return 0;
}
