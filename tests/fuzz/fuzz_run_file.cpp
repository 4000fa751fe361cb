// Recorded runs as --open-run reads them: any bytes must give a run whose values the views can draw (every index
// inside its array, every count matching) or end in BadInput. The recordings in tests/data/gpu are its seeds; the
// views themselves are exercised by tests/gui/run_file_mutations.sh, which draws mutated runs.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/errors.h"
#include "engine/json_io.h"
#include "lessons/run_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dlsys;
  try {
    run_from_json(parse_ordered_json_input(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz"),
                  "fuzz");
  } catch (const BadInput&) {
  }
  return 0;
}
